import Foundation

/// Writing a ``RecordValue`` tree as a record.
extension RecordValue {
    /// Returns the record for this value: the same bytes the typed
    /// ``RecordEncoder`` writes for the same data.
    ///
    /// Object names are interned in `fields` (a name `"#<id>"` that the table
    /// does not have stands for the raw id `<id>`, as decoding shows unknown
    /// ids), and the entries of a top-level object get their kinds recorded.
    /// Containers should not nest deeper than ``RecordFormat/maximumDepth``,
    /// or the record will not decode.
    package func encode(fields: inout FieldTable) -> [UInt8] {
        var bytes: [UInt8] = [RecordFormat.version]
        append(to: &bytes, fields: &fields, isRoot: true)
        Checksum.append(to: &bytes, from: 0)
        return bytes
    }

    /// Appends this value, tag first, to `bytes`.
    private func append(to bytes: inout [UInt8], fields: inout FieldTable, isRoot: Bool) {
        switch self {
        case .null:
            bytes.append(ValueKind.null.rawValue)
        case .bool(let value):
            bytes.append(value ? ValueKind.true.rawValue : ValueKind.false.rawValue)
        case .int(let value):
            bytes.appendTagged(.int, varint: RecordFormat.zigzag(value))
        case .uint(let value):
            bytes.appendTagged(.uint, varint: value)
        case .float(let value):
            bytes.appendTagged(.float, littleEndian: UInt64(value.bitPattern), count: 4)
        case .double(let value):
            bytes.appendTagged(.double, littleEndian: value.bitPattern, count: 8)
        case .string(let text):
            bytes.appendTagged(.string, text: text)
        case .data(let data):
            bytes.appendTagged(.data, bytes: data)
        case .date(let date):
            bytes.appendTagged(.date, littleEndian: date.timeIntervalSinceReferenceDate.bitPattern, count: 8)
        case .uuid(let uuid):
            bytes.appendTagged(.uuid, uuid: uuid)
        case .url(let text):
            bytes.appendTagged(.url, text: text)
        case .decimal(let text):
            bytes.appendTagged(.decimal, text: text)
        case .array(let elements):
            bytes.appendTagged(.array, varint: UInt64(elements.count))
            for element in elements {
                element.append(to: &bytes, fields: &fields, isRoot: false)
            }
        case .object(let entries):
            bytes.appendTagged(.object, varint: UInt64(entries.count))
            for (name, value) in entries {
                let id = Self.fieldID(for: name, in: &fields, scope: isRoot ? .topLevel : .nested)
                bytes.appendVarint(id)
                if isRoot, let id = UInt32(exactly: id) { fields.observe(value.kind, for: id) }
                value.append(to: &bytes, fields: &fields, isRoot: false)
            }
        case .stringMap(let entries):
            bytes.appendTagged(.stringMap, varint: UInt64(entries.count))
            for (key, value) in entries {
                bytes.appendVarint(UInt64(key.utf8.count))
                bytes.append(contentsOf: key.utf8)
                value.append(to: &bytes, fields: &fields, isRoot: false)
            }
        case .intMap(let entries):
            bytes.appendTagged(.intMap, varint: UInt64(entries.count))
            for (key, value) in entries {
                bytes.appendVarint(RecordFormat.zigzag(key))
                value.append(to: &bytes, fields: &fields, isRoot: false)
            }
        }
    }

    /// Returns the id of an object entry's name in `scope`: its interned id, the raw id
    /// of an unknown `"#<id>"`, or a newly interned one.
    private static func fieldID(for name: String, in fields: inout FieldTable, scope: FieldScope) -> UInt64 {
        if let id = fields.existingID(for: name, in: scope) { return UInt64(id) }
        if name.hasPrefix("#"), let id = UInt64(name.dropFirst()), id >= 1 { return id }
        return UInt64(fields.id(for: name, in: scope))
    }
}
