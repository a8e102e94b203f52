import Foundation

/// The top-level fields of one stored record, read in place for a scan's test of them (``StoredFieldFilter``): found
/// by field id in stored order, each value read from its bytes, without a decoder.
///
/// Every read that does not go as expected (a record of another format or with a bad checksum, bytes that do not
/// read, a value whose tag is not the type's own) answers `nil`: the scan then decodes the model, whose decoding
/// reads what it can (a Double stored as an integer, say) and reports what is wrong.
struct StoredRecordFields {
    /// The record's bytes, its checksum left out.
    let reader: ByteReader
    /// The offset of the first entry of the record's object.
    private let entries: Int
    /// The number of entries.
    private let count: Int

    /// The fields of the record in `bytes`, or `nil` when its checksum, version or value (not an object) does not
    /// read.
    @inline(__always)
    init?(record bytes: BorrowedBytes) {
        guard let body = try? RecordFormat.checkedBody(bytes) else { return nil }
        self.init(body: body)
    }

    /// The fields of a record whose model was just decoded from `bytes`, whose checksum is therefore not computed
    /// again; `nil` when its value is not an object.
    @inline(__always)
    init?(decodedRecord bytes: BorrowedBytes) {
        guard let body = RecordFormat.verifiedBody(bytes) else { return nil }
        self.init(body: body)
    }

    @inline(__always)
    private init?(body: BorrowedBytes) {
        let reader = ByteReader(body)
        let start = RecordDecoding.recordValueOffset
        guard start < body.count, body[start] == ValueKind.object.rawValue else { return nil }
        var offset = start + 1
        guard let count = try? reader.readCount(at: &offset, minimumElementSize: 2) else { return nil }
        self.reader = reader
        self.entries = offset
        self.count = count
    }

    /// Where the value (its tag) of the field `id` is: `.some(nil)` when the record has no such field, `nil` when the
    /// entries before it do not read.
    @inline(__always)
    func valueOffset(ofField id: UInt64) -> Int?? {
        let buffer = reader.buffer
        // The end, read once: every offset below is checked against it before a byte is read (a scan walks the
        // fields of every record, so the walk's few instructions an entry are a good part of a record's).
        let end = buffer.count
        var offset = entries
        for _ in 0..<count {
            // The entry's field id: one byte when below 128, as nearly every id is; a longer one through the reader.
            guard offset < end else { return nil }
            var entry = UInt64(buffer[offset])
            if entry < 0x80 {
                offset += 1
            } else {
                guard let long = try? reader.readVarint(at: &offset) else { return nil }
                entry = long
            }
            if entry == id { return .some(offset) }
            guard offset < end else { return nil }
            // The values of fixed size are skipped here, strings and data by their length; the others by the
            // reader, which checks what it skips.
            switch buffer[offset] {
            case ValueKind.null.rawValue, ValueKind.false.rawValue, ValueKind.true.rawValue: offset += 1
            case ValueKind.double.rawValue, ValueKind.date.rawValue: offset += 9
            case ValueKind.uuid.rawValue: offset += 17
            case ValueKind.string.rawValue, ValueKind.data.rawValue:
                offset += 1
                // A length below 128 in one byte, as most are; a longer one through the reader.
                if offset < end, buffer[offset] < 0x80 {
                    let length = Int(buffer[offset])
                    offset += 1
                    guard length <= end - offset else { return nil }
                    offset += length
                } else {
                    guard let length = try? reader.readLength(at: &offset) else { return nil }
                    offset += length
                }
            default:
                guard let next = try? reader.endOfValue(at: offset, depth: 1) else { return nil }
                offset = next
            }
        }
        // A value of fixed size skipped past the end: the entries do not read.
        return offset <= end ? .some(nil) : nil
    }

    /// Whether the field `id` holds `constant`, compared as stored bytes: a UUID's 16 bytes are the value, so two
    /// loads and two comparisons decide where reading a `UUID` and comparing its tuple takes many times more. `nil`
    /// when the field does not read as a UUID: a missing field or a null reads as `nil` when `isOptional` (the
    /// property is a `UUID?`), and cannot tell otherwise.
    @inline(__always)
    func uuid(ofField id: UInt64, equals constant: (UInt64, UInt64)?, isOptional: Bool) -> Bool? {
        guard let found = valueOffset(ofField: id) else { return nil }
        guard let offset = found else { return isOptional ? constant == nil : nil }
        let buffer = reader.buffer
        guard offset < buffer.count else { return nil }
        switch buffer[offset] {
        case ValueKind.uuid.rawValue:
            guard buffer.count - offset >= 17 else { return nil }
            guard let constant else { return false }
            return buffer.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self) == constant.0
                && buffer.loadUnaligned(fromByteOffset: offset + 9, as: UInt64.self) == constant.1
        case ValueKind.null.rawValue:
            return isOptional ? constant == nil : nil
        default:
            return nil
        }
    }

    /// The value of the field `id` as `T`; `nil` when it cannot be read as one (see the type's comment). A missing
    /// field or a null reads as `nil` for an optional type, as the model's decoding reads it.
    @inline(__always)
    func value<T: InPlaceReadable>(ofField id: UInt64, as _: T.Type) -> T? {
        guard let found = valueOffset(ofField: id) else { return nil }
        guard let offset = found else { return T.whenMissing }
        return T.read(from: reader, at: offset)
    }
}

/// A type whose values a scan's test reads in place from a record's field, in the format's own encoding of the type.
protocol InPlaceReadable {
    /// The value whose tag is at `offset`, or `nil` when the bytes hold anything else.
    static func read(from reader: ByteReader, at offset: Int) -> Self?
    /// The value of a missing field: `nil` (cannot tell) but for optionals, whose missing field is `nil`.
    static var whenMissing: Self? { get }
}

extension InPlaceReadable {
    static var whenMissing: Self? { nil }
}

extension Bool: InPlaceReadable {
    static func read(from reader: ByteReader, at offset: Int) -> Bool? {
        guard offset >= 0, offset < reader.count else { return nil }
        switch reader.buffer[offset] {
        case ValueKind.true.rawValue: return true
        case ValueKind.false.rawValue: return false
        default: return nil
        }
    }
}

extension Int: InPlaceReadable {
    static func read(from reader: ByteReader, at offset: Int) -> Int? {
        var offset = offset
        guard let kind = try? reader.readKind(at: &offset), kind == .int || kind == .uint,
            let payload = try? reader.readVarint(at: &offset)
        else { return nil }
        return kind == .int ? Int(exactly: RecordFormat.unzigzag(payload)) : Int(exactly: payload)
    }
}

extension Double: InPlaceReadable {
    static func read(from reader: ByteReader, at offset: Int) -> Double? {
        var offset = offset
        guard (try? reader.readKind(at: &offset)) == .double,
            let bits = try? reader.readLittleEndian(at: &offset, count: 8)
        else { return nil }
        return Double(bitPattern: bits)
    }
}

extension Date: InPlaceReadable {
    static func read(from reader: ByteReader, at offset: Int) -> Date? {
        var offset = offset
        guard (try? reader.readKind(at: &offset)) == .date,
            let bits = try? reader.readLittleEndian(at: &offset, count: 8)
        else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }
}

extension UUID: InPlaceReadable {
    static func read(from reader: ByteReader, at offset: Int) -> UUID? {
        var offset = offset
        guard (try? reader.readKind(at: &offset)) == .uuid else { return nil }
        return try? reader.readUUID(at: &offset)
    }
}

extension String: InPlaceReadable {
    static func read(from reader: ByteReader, at offset: Int) -> String? {
        var offset = offset
        guard (try? reader.readKind(at: &offset)) == .string else { return nil }
        return try? reader.readText(at: &offset)
    }
}

extension Optional: InPlaceReadable where Wrapped: InPlaceReadable {
    static func read(from reader: ByteReader, at offset: Int) -> Wrapped?? {
        guard offset >= 0, offset < reader.count else { return nil }
        if reader.buffer[offset] == ValueKind.null.rawValue { return .some(nil) }
        return Wrapped.read(from: reader, at: offset).map { .some($0) }
    }

    static var whenMissing: Wrapped?? { .some(nil) }
}
