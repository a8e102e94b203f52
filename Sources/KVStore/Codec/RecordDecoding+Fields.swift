import Foundation

/// Where a ``FieldReader`` reads the top-level fields of the record being decoded.
///
/// Fields read in the order they are stored, the usual case, are found one after the other without an entry table:
/// a read compares the next entry's field id with the name it asks for, and the value it decodes tells where the
/// entry after it begins. The first field asked for out of order builds the object's entry table, as a keyed
/// container does, and the reads after it look fields up there.
struct FieldCursor {
    /// Identifies the record being read; 0 when none is. A reader holds the number of the record it was made for.
    var record = 0
    /// The number the next record gets.
    var nextRecord = 1
    /// The offset of the record's object.
    var object = 0
    /// The offset of the field id of the next entry in stored order.
    var next = 0
    /// The number of entries from `next` on.
    var remaining = 0
    /// Whether the last field found is the entry at `next`, which reading its value moves past.
    var foundNext = false
    /// The entry table of the fields, once a field was asked for out of order.
    var container: RecordKeyedDecodingContainer<RecordCodingKey>?

    /// Forgets the record, so that a reader kept past its call throws.
    mutating func end() {
        record = 0
        container = nil
        foundNext = false
    }
}

extension RecordDecoding {
    /// Starts reading the fields of the record's value at `offset`.
    ///
    /// - Returns: The number that identifies the record for its ``FieldReader``.
    func beginFields(at offset: Int) throws -> Int {
        let record = fieldCursor.nextRecord
        fieldCursor = FieldCursor(record: record, nextRecord: record &+ 1 == 0 ? 1 : record &+ 1, object: offset)
        var position = offset
        if try reader.readKind(at: &position) == .object {
            fieldCursor.remaining = try reader.readCount(at: &position, minimumElementSize: 2)
            fieldCursor.next = position
        } else {
            // A dictionary is looked up in its table; another kind throws the error a keyed container throws.
            fieldCursor.container = try keyedContainer(
                keyedBy: RecordCodingKey.self, at: offset, path: .depth(0), depth: 0)
        }
        return record
    }

    /// Returns the offset of the value of the field `name` of `record`, or nil when the record has none.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a reader used after its call; ``RecordFormatError`` for corrupt
    ///   bytes.
    func fieldOffset(_ name: String, record: Int) throws -> Int? {
        guard record == fieldCursor.record, isBusy else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [RecordCodingKey(stringValue: name)],
                    debugDescription: "A FieldReader was used after the init(fields:) it was handed to returned."))
        }
        if fieldCursor.container == nil {
            if fieldCursor.remaining > 0 {
                var position = fieldCursor.next
                if fields.id(try reader.readVarint(at: &position), isNamed: name) {
                    fieldCursor.foundNext = true
                    return position
                }
            }
            fieldCursor.container = try keyedContainer(
                keyedBy: RecordCodingKey.self, at: fieldCursor.object, path: .depth(0), depth: 0)
        }
        fieldCursor.foundNext = false
        return fieldCursor.container?.offset(ofField: name)
    }

    /// Moves past the field just found, whose value ends at `end`, when it is the next entry in stored order.
    @inline(__always)
    func didReadField(endingAt end: Int) {
        guard fieldCursor.foundNext else { return }
        fieldCursor.foundNext = false
        fieldCursor.next = end
        fieldCursor.remaining -= 1
    }

    /// Forgets the field just found without reading it.
    func didNotReadField() {
        fieldCursor.foundNext = false
    }

    /// Decodes the field `name`, whose value is at `offset`, through `T`'s own `init(from:)` (or the format's tag
    /// for Date, UUID, URL, Decimal and Data), and moves past it.
    func decodeField<T: Decodable>(_ type: T.Type, at offset: Int, name: String) throws -> T {
        let key = RecordCodingKey(stringValue: name)
        let value =
            isSpecial(T.self)
            ? try decodeSpecialValue(T.self, at: offset, path: [key])
            : try decodeChild(T.self, at: offset, key: key, path: .depth(0), depth: 0)
        if fieldCursor.foundNext { didReadField(endingAt: try endOfValue(at: offset, depth: 1)) }
        return value
    }

    /// Returns where the record's object, at `offset`, ends: past the entries not read when every field was read
    /// in stored order, or as the entry table found it.
    func endOfFields(at offset: Int) throws -> Int {
        guard fieldCursor.container == nil else { return try endOfValue(at: offset, depth: 0) }
        var position = fieldCursor.next
        for _ in 0..<fieldCursor.remaining {
            _ = try reader.readVarint(at: &position)
            position = try reader.endOfValue(at: position, depth: 1)
        }
        return position
    }
}
