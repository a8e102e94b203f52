import Foundation

/// Reading a ``RecordValue`` tree from a record.
extension RecordValue {
    /// Decodes a whole record, version byte included, into a tree.
    ///
    /// - Parameters:
    ///   - bytes: The record; only read during the call.
    ///   - fields: The entity's field table, which names the field ids.
    /// - Throws: ``RecordFormatError`` for corrupt bytes.
    package static func decode(from bytes: BorrowedBytes, fields: FieldTable) throws -> RecordValue {
        let reader = ByteReader(try RecordFormat.checkedBody(bytes))
        var offset = 1
        let value = try decodeValue(reader, at: &offset, fields: fields, depth: 0)
        guard offset == reader.count else { throw RecordFormatError(.trailingBytes, at: offset) }
        return value
    }

    /// Decodes the value whose tag is at `offset` and advances `offset` past it.
    private static func decodeValue(
        _ reader: ByteReader, at offset: inout Int, fields: FieldTable, depth: Int
    ) throws(RecordFormatError) -> RecordValue {
        let start = offset
        let kind = try reader.readKind(at: &offset)
        switch kind {
        case .null:
            return .null
        case .false:
            return .bool(false)
        case .true:
            return .bool(true)
        case .int:
            return .int(RecordFormat.unzigzag(try reader.readVarint(at: &offset)))
        case .uint:
            return .uint(try reader.readVarint(at: &offset))
        case .float:
            return .float(
                Float(bitPattern: UInt32(truncatingIfNeeded: try reader.readLittleEndian(at: &offset, count: 4))))
        case .double:
            return .double(Double(bitPattern: try reader.readLittleEndian(at: &offset, count: 8)))
        case .string:
            return .string(try reader.readText(at: &offset))
        case .data:
            let length = try reader.readLength(at: &offset)
            return .data(Data(try reader.readSlice(at: &offset, count: length)))
        case .date:
            let interval = Double(bitPattern: try reader.readLittleEndian(at: &offset, count: 8))
            return .date(Date(timeIntervalSinceReferenceDate: interval))
        case .uuid:
            return .uuid(try reader.readUUID(at: &offset))
        case .url:
            return .url(try reader.readText(at: &offset))
        case .decimal:
            return .decimal(try reader.readText(at: &offset))
        case .array:
            let count = try reader.readCount(at: &offset, minimumElementSize: 1)
            try reader.checkDepth(depth, at: start)
            var elements: [RecordValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count {
                elements.append(try decodeValue(reader, at: &offset, fields: fields, depth: depth + 1))
            }
            return .array(elements)
        case .object:
            let count = try reader.readCount(at: &offset, minimumElementSize: 2)
            try reader.checkDepth(depth, at: start)
            var entries: [(name: String, value: RecordValue)] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let id = try reader.readVarint(at: &offset)
                // The record's own object is the one at depth 0.
                let scope: FieldScope = depth == 0 ? .topLevel : .nested
                let name = id <= UInt64(UInt32.max) ? fields.name(for: UInt32(id), in: scope) : nil
                let value = try decodeValue(reader, at: &offset, fields: fields, depth: depth + 1)
                entries.append((name ?? "#\(id)", value))
            }
            return .object(entries)
        case .stringMap:
            let count = try reader.readCount(at: &offset, minimumElementSize: 2)
            try reader.checkDepth(depth, at: start)
            var entries: [(key: String, value: RecordValue)] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let key = try reader.readText(at: &offset)
                entries.append((key, try decodeValue(reader, at: &offset, fields: fields, depth: depth + 1)))
            }
            return .stringMap(entries)
        case .intMap:
            let count = try reader.readCount(at: &offset, minimumElementSize: 2)
            try reader.checkDepth(depth, at: start)
            var entries: [(key: Int64, value: RecordValue)] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let key = RecordFormat.unzigzag(try reader.readVarint(at: &offset))
                entries.append((key, try decodeValue(reader, at: &offset, fields: fields, depth: depth + 1)))
            }
            return .intMap(entries)
        }
    }
}
