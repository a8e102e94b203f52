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
    /// The last name looked up in the field table and its top-level id (`nil` when the table has none), kept from
    /// record to record while the table stays the same: a scan's test asks for the same field in every record.
    var lookup: (name: String, id: UInt32?)?

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
        fieldCursor = FieldCursor(
            record: record, nextRecord: record &+ 1 == 0 ? 1 : record &+ 1, object: offset,
            lookup: fieldCursor.lookup)
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
            // The entries not read yet, in stored order: a field further on is found by skipping the values before
            // it, which costs less than an entry table (a scan's test reads one field of each record), comparing ids.
            let id: UInt32?
            if let lookup = fieldCursor.lookup, lookup.name == name {
                id = lookup.id
            } else {
                id = fields.existingID(for: name, in: .topLevel)
                fieldCursor.lookup = (name, id)
            }
            var entry = fieldCursor.next
            var remaining = id == nil ? 0 : fieldCursor.remaining
            while remaining > 0 {
                var position = entry
                if try reader.readVarint(at: &position) == id.map(UInt64.init) {
                    fieldCursor.next = entry
                    fieldCursor.remaining = remaining
                    fieldCursor.foundNext = true
                    return position
                }
                entry = try reader.endOfFieldValue(at: position)
                remaining -= 1
            }
            fieldCursor.container = try keyedContainer(
                keyedBy: RecordCodingKey.self, at: fieldCursor.object, path: .depth(0), depth: 0)
        }
        fieldCursor.foundNext = false
        // Optional chaining on `fieldCursor` would end its access in two places, which keeps the accessor out of line.
        let container = fieldCursor.container
        return container?.offset(ofField: name)
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
            position = try reader.endOfFieldValue(at: position)
        }
        return position
    }
}

// MARK: - Fast paths

/// The reads of ``FieldReader`` for a record whose fields are read in stored order, each of one kind.
///
/// Each checks that the next entry in stored order is the field asked for, with a one-byte field id, and that its
/// value has the expected tag and fits in the record; it then reads the value and moves past the entry. In any other
/// case (a field out of order or missing, another kind, null, a reader kept past its call, bytes that do not fit) it
/// returns nil having read nothing, and the reader takes the general path, which finds the field wherever it is or
/// throws the error that case deserves. A record written by the model's own `write(to:)` never leaves these paths.
extension RecordDecoding {
    /// The offset of the tag of the next entry's value when the entry is the field `name` of `record` and at least
    /// `size` bytes of value (its tag included) follow; nil otherwise.
    @inline(__always)
    private func nextValue(_ name: String, record: Int, size: Int) -> Int? {
        guard record == fieldCursor.record, fieldCursor.container == nil, fieldCursor.remaining > 0 else { return nil }
        let buffer = reader.buffer
        let position = fieldCursor.next
        guard position >= 0, size < buffer.count - position else { return nil }
        let id = buffer[position]
        guard id < 0x80, fields.id(UInt64(id), isNamed: name, in: .topLevel) else { return nil }
        return position + 1
    }

    /// Moves past the entry whose value ends at `end`.
    @inline(__always)
    private func didReadNext(endingAt end: Int) {
        fieldCursor.next = end
        fieldCursor.remaining -= 1
        fieldCursor.foundNext = false
    }

    /// The next entry's value, when it is the Boolean field `name`.
    func nextBool(_ name: String, record: Int) -> Bool? {
        guard let offset = nextValue(name, record: record, size: 1) else { return nil }
        let tag = reader.buffer[offset]
        guard tag == ValueKind.true.rawValue || tag == ValueKind.false.rawValue else { return nil }
        didReadNext(endingAt: offset + 1)
        return tag == ValueKind.true.rawValue
    }

    /// The bit pattern of the next entry's value, when it is the field `name` with the 8-byte payload of `kind`.
    @inline(__always)
    private func nextBits(_ name: String, record: Int, kind: ValueKind) -> UInt64? {
        guard let offset = nextValue(name, record: record, size: 9), reader.buffer[offset] == kind.rawValue else {
            return nil
        }
        let bits = reader.buffer.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self)
        didReadNext(endingAt: offset + 9)
        return UInt64(littleEndian: bits)
    }

    /// The next entry's value, when it is the double field `name`.
    func nextDouble(_ name: String, record: Int) -> Double? {
        nextBits(name, record: record, kind: .double).map(Double.init(bitPattern:))
    }

    /// The next entry's value, when it is the date field `name`.
    func nextDate(_ name: String, record: Int) -> Date? {
        nextBits(name, record: record, kind: .date).map {
            Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))
        }
    }

    /// The next entry's value, when it is the UUID field `name`.
    func nextUUID(_ name: String, record: Int) -> UUID? {
        guard let offset = nextValue(name, record: record, size: 17), reader.buffer[offset] == ValueKind.uuid.rawValue
        else { return nil }
        let uuid = reader.buffer.loadUUID(fromByteOffset: offset + 1)
        didReadNext(endingAt: offset + 17)
        return uuid
    }

    /// The next entry's value, when it is the integer field `name` and fits in `I`.
    func nextInteger<I: FixedWidthInteger>(_ type: I.Type, _ name: String, record: Int) -> I? {
        guard let offset = nextValue(name, record: record, size: 2) else { return nil }
        let tag = reader.buffer[offset]
        var end = offset + 1
        guard tag == ValueKind.int.rawValue || tag == ValueKind.uint.rawValue,
            let payload = try? reader.readVarint(at: &end)
        else { return nil }
        let value = tag == ValueKind.int.rawValue ? I(exactly: RecordFormat.unzigzag(payload)) : I(exactly: payload)
        guard let value else { return nil }
        didReadNext(endingAt: end)
        return value
    }

    /// The next entry's value, when it is the string field `name`.
    ///
    /// - Throws: ``RecordFormatError`` for a length past the record's end or invalid UTF-8, as the general path
    ///   would.
    func nextString(_ name: String, record: Int) throws -> String? {
        guard let offset = nextValue(name, record: record, size: 2), reader.buffer[offset] == ValueKind.string.rawValue
        else { return nil }
        var end = offset + 1
        let text = try reader.readText(at: &end)
        didReadNext(endingAt: end)
        return text
    }
}
