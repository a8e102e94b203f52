import Foundation

/// A model that writes and reads its record's fields directly, for speed.
///
/// A model's `Codable` conformance is all a store needs. Codable reaches the record format through containers that
/// Swift boxes and calls dynamically, which costs more than storing the record. A model that is saved or read very
/// often can also conform to `FieldCodable`: the store then writes and reads its fields through ``FieldWriter`` and
/// ``FieldReader``, concrete types whose calls are direct, and skips Codable for that model.
///
/// The record is the same either way: write the same keys, with the same types, as the `Codable` conformance does,
/// and records written by one are read by the other. Nested values of any `Codable` type go through their own
/// `Codable` conformance.
///
/// ```swift
/// extension Task: FieldCodable {
///     init(fields: borrowing FieldReader) throws {
///         self.init(
///             id: try fields.decode(UUID.self, forKey: "id"),
///             title: try fields.decode(String.self, forKey: "title"),
///             isDone: try fields.decode(Bool.self, forKey: "isDone"),
///             projectID: try fields.decodeIfPresent(UUID.self, forKey: "projectID"))
///     }
///
///     func write(to fields: FieldWriter) throws {
///         try fields.encode(id, forKey: "id")
///         try fields.encode(title, forKey: "title")
///         try fields.encode(isDone, forKey: "isDone")
///         try fields.encodeIfPresent(projectID, forKey: "projectID")
///     }
/// }
/// ```
///
/// Write and read the fields in the order of the type's coding keys, which is the order a synthesized `encode(to:)`
/// writes them: writing, it is the order the store interned their names in, and reading, the order they are stored in,
/// so each name is found with one comparison. Any other order works, at the cost of a lookup.
///
/// Taking the reader `borrowing` and making the model in one call to its memberwise initializer, as above, is the
/// fastest form: the reader is lent without reference counting, and Swift builds the model in place (a throwing
/// initializer that assigns the fields one by one copies the model once more). `init(fields: FieldReader)` also
/// satisfies the requirement.
public protocol FieldCodable: SendableMetatype {
    /// Reads a model from the fields of its record.
    ///
    /// - Parameter fields: The record's top-level fields, lent for the call: a borrowed reader cannot be kept by
    ///   mistake, and one kept anyway throws when used.
    /// - Throws: What ``FieldReader``'s methods throw for a missing key or a value of another type.
    init(fields: borrowing FieldReader) throws

    /// Writes the model's fields to its record.
    ///
    /// - Parameter fields: The record being written; use it only inside this method.
    /// - Throws: What ``FieldWriter``'s methods throw for a value that cannot be encoded.
    func write(to fields: FieldWriter) throws
}

/// Writes the top-level fields of a record, for ``FieldCodable/write(to:)``.
///
/// Each field is written once, under its coding key; the `encodeIfPresent` methods write nothing for `nil`, as a
/// synthesized `encode(to:)` does. Strings, Booleans, numbers, dates, UUIDs and data are written directly; values of
/// other types go through their `Encodable` conformance. A writer is valid only during the call it is handed to: used
/// later, it throws.
public struct FieldWriter {
    private let encoding: RecordEncoding
    private let frameID: Int

    init(encoding: RecordEncoding, frameID: Int) {
        self.encoding = encoding
        self.frameID = frameID
    }

    /// Writes a string.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: String, forKey key: String) throws {
        let id = try encoding.beginDirectField(key, in: frameID)
        encoding.write(value)
        encoding.endDirectField(id, kind: .string)
    }

    /// Writes a Boolean.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: Bool, forKey key: String) throws {
        let id = try encoding.beginDirectField(key, in: frameID)
        encoding.write(value)
        encoding.endDirectField(id, kind: value ? .true : .false)
    }

    /// Writes a Double.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: Double, forKey key: String) throws {
        let id = try encoding.beginDirectField(key, in: frameID)
        encoding.write(value)
        encoding.endDirectField(id, kind: .double)
    }

    /// Writes a Float.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: Float, forKey key: String) throws {
        let id = try encoding.beginDirectField(key, in: frameID)
        encoding.write(value)
        encoding.endDirectField(id, kind: .float)
    }

    /// Writes an integer of any width.
    ///
    /// - Throws: `EncodingError.invalidValue` for a 128-bit integer outside the 64-bit range, as Codable does, or when
    ///   the writer is used after its call.
    public func encode<I: FixedWidthInteger & Encodable>(_ value: I, forKey key: String) throws {
        try encodeInteger(value, forKey: key)
    }

    /// Writes an `Int`, as ``encode(_:forKey:)-(I,_)`` does: the most common integer type gets code of its own,
    /// since a model in another module calls the generic function unspecialized, at a run-time cost per field.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: Int, forKey key: String) throws {
        try encodeInteger(value, forKey: key)
    }

    @inline(__always)
    private func encodeInteger<I: FixedWidthInteger & Encodable>(_ value: I, forKey key: String) throws {
        let integer = try encoding.integer(value)
        let id = try encoding.beginDirectField(key, in: frameID)
        encoding.write(integer)
        encoding.endDirectField(id, kind: integer.kind)
    }

    /// Writes a date.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: Date, forKey key: String) throws {
        try encodeLeaf(value, forKey: key, kind: .date)
    }

    /// Writes a UUID.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: UUID, forKey key: String) throws {
        try encodeLeaf(value, forKey: key, kind: .uuid)
    }

    /// Writes data.
    ///
    /// - Throws: `EncodingError.invalidValue` when the writer is used after its call.
    public func encode(_ value: Data, forKey key: String) throws {
        try encodeLeaf(value, forKey: key, kind: .data)
    }

    /// Writes a value of any other `Encodable` type through its `encode(to:)`; URLs, decimals and dictionaries get
    /// the tags Codable gives them.
    ///
    /// - Throws: What `value`'s `encode(to:)` throws, or `EncodingError.invalidValue` when the writer is used after its
    ///   call.
    public func encode<T: Encodable>(_ value: T, forKey key: String) throws {
        var container = RecordKeyedEncodingContainer<RecordCodingKey>(
            encoding: encoding, frameID: frameID, path: .depth(0))
        try container.encode(value, forKey: RecordCodingKey(stringValue: key))
    }

    /// Writes a string, or nothing when it is `nil`.
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent(_ value: String?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a Boolean, or nothing when it is `nil`.
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent(_ value: Bool?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a Double, or nothing when it is `nil`.
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent(_ value: Double?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes an integer, or nothing when it is `nil`.
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent<I: FixedWidthInteger & Encodable>(_ value: I?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes an `Int`, or nothing when it is `nil` (see ``encode(_:forKey:)-(Int,_)``).
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent(_ value: Int?, forKey key: String) throws {
        if let value { try encodeInteger(value, forKey: key) }
    }

    /// Writes a date, or nothing when it is `nil`.
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent(_ value: Date?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a UUID, or nothing when it is `nil`.
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent(_ value: UUID?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a value of any other `Encodable` type, or nothing when it is `nil`.
    ///
    /// - Throws: What `encode(_:forKey:)` throws for the value.
    public func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) }
    }

    /// Writes a date, UUID or data value, which the encoder writes with its own tag.
    private func encodeLeaf<T: Encodable>(_ value: T, forKey key: String, kind: ValueKind) throws {
        let id = try encoding.beginDirectField(key, in: frameID)
        _ = encoding.encodeLeafValue(value)
        encoding.endDirectField(id, kind: kind)
    }
}

/// Reads the top-level fields of a record, for ``FieldCodable/init(fields:)``.
///
/// Reads throw the `DecodingError` that Codable would: `keyNotFound` for a missing key, `valueNotFound` for a null
/// where a value is needed, `typeMismatch` for a value of another type or a number the type cannot hold exactly. A
/// reader used after its call throws `DecodingError.dataCorrupted`, and damaged bytes an error of the record format.
/// The store reports each as a ``KVStoreError/corruptRecord`` error naming the entity and the ID. Fields may be read
/// in any order, and fields the model does not read are skipped. Strings, Booleans, numbers, dates, UUIDs and data are read directly; values
/// of other types go through their `Decodable` conformance. A reader is valid only during the call it is handed to.
public struct FieldReader {
    private let decoding: RecordDecoding
    private let record: Int

    init(decoding: RecordDecoding, record: Int) {
        self.decoding = decoding
        self.record = record
    }

    /// Whether the record has a value, null included, for `key`.
    public func contains(_ key: String) -> Bool {
        defer { decoding.didNotReadField() }
        return (try? decoding.fieldOffset(key, record: record)) ?? nil != nil
    }

    /// Reads a string.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode(_ type: String.Type, forKey key: String) throws -> String {
        if let value = try decoding.nextString(key, record: record) { return value }
        var offset = try require(key)
        let value = try decoding.decodeString(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a Boolean.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode(_ type: Bool.Type, forKey key: String) throws -> Bool {
        if let value = decoding.nextBool(key, record: record) { return value }
        var offset = try require(key)
        let value = try decoding.decodeBool(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a Double; a stored float or integer that it represents exactly is read too, as Codable does.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode(_ type: Double.Type, forKey key: String) throws -> Double {
        if let value = decoding.nextDouble(key, record: record) { return value }
        var offset = try require(key)
        let value = try decoding.decodeDouble(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a Float.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode(_ type: Float.Type, forKey key: String) throws -> Float {
        var offset = try require(key)
        let value = try decoding.decodeFloat(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads an integer of any width, throwing when the stored value does not fit.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode<I: FixedWidthInteger & Decodable>(_ type: I.Type, forKey key: String) throws -> I {
        try decodeInteger(I.self, forKey: key)
    }

    /// Reads an `Int`, as ``decode(_:forKey:)-(I.Type,_)`` does: the most common integer type gets code of its own,
    /// since a model in another module calls the generic function unspecialized, at a run-time cost per field.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type or one that does not fit; see ``FieldReader`` for the rest.
    public func decode(_ type: Int.Type, forKey key: String) throws -> Int {
        try decodeInteger(Int.self, forKey: key)
    }

    @inline(__always)
    private func decodeInteger<I: FixedWidthInteger & Decodable>(_ type: I.Type, forKey key: String) throws -> I {
        if let value = decoding.nextInteger(I.self, key, record: record) { return value }
        var offset = try require(key)
        let value = try decoding.decodeInteger(I.self, at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a date.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode(_ type: Date.Type, forKey key: String) throws -> Date {
        if let value = decoding.nextDate(key, record: record) { return value }
        var offset = try require(key)
        let value = try decoding.decodeDate(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a UUID.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode(_ type: UUID.Type, forKey key: String) throws -> UUID {
        if let value = decoding.nextUUID(key, record: record) { return value }
        var offset = try require(key)
        let value = try decoding.decodeUUID(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads data.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, `valueNotFound` when it is null,
    ///   `typeMismatch` when it holds another type; see ``FieldReader`` for the rest.
    public func decode(_ type: Data.Type, forKey key: String) throws -> Data {
        var offset = try require(key)
        let value = try decoding.decodeData(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a value of any other `Decodable` type through its `init(from:)`.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no value for `key`, or what `T`'s `init(from:)` throws;
    ///   see ``FieldReader`` for the rest.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T {
        try decoding.decodeField(T.self, at: try require(key), name: key)
    }

    /// Reads a string, or `nil` when the key is missing or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is of another type; see ``FieldReader`` for the rest.
    public func decodeIfPresent(_ type: String.Type, forKey key: String) throws -> String? {
        if let value = try decoding.nextString(key, record: record) { return value }
        guard var offset = try present(key) else { return nil }
        let value = try decoding.decodeString(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a Boolean, or `nil` when the key is missing or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is of another type; see ``FieldReader`` for the rest.
    public func decodeIfPresent(_ type: Bool.Type, forKey key: String) throws -> Bool? {
        if let value = decoding.nextBool(key, record: record) { return value }
        guard var offset = try present(key) else { return nil }
        let value = try decoding.decodeBool(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a Double, or `nil` when the key is missing or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is of another type; see ``FieldReader`` for the rest.
    public func decodeIfPresent(_ type: Double.Type, forKey key: String) throws -> Double? {
        if let value = decoding.nextDouble(key, record: record) { return value }
        guard var offset = try present(key) else { return nil }
        let value = try decoding.decodeDouble(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads an integer of any width, or `nil` when the key is missing or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is of another type; see ``FieldReader`` for the rest.
    public func decodeIfPresent<I: FixedWidthInteger & Decodable>(_ type: I.Type, forKey key: String) throws -> I? {
        try decodeIntegerIfPresent(I.self, forKey: key)
    }

    /// Reads an `Int`, or `nil` when the key is missing or null (see ``decode(_:forKey:)-(Int.Type,_)``).
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is of another type; see ``FieldReader`` for the rest.
    public func decodeIfPresent(_ type: Int.Type, forKey key: String) throws -> Int? {
        try decodeIntegerIfPresent(Int.self, forKey: key)
    }

    @inline(__always)
    private func decodeIntegerIfPresent<I: FixedWidthInteger & Decodable>(
        _ type: I.Type, forKey key: String
    ) throws -> I? {
        if let value = decoding.nextInteger(I.self, key, record: record) { return value }
        guard var offset = try present(key) else { return nil }
        let value = try decoding.decodeInteger(I.self, at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a date, or `nil` when the key is missing or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is of another type; see ``FieldReader`` for the rest.
    public func decodeIfPresent(_ type: Date.Type, forKey key: String) throws -> Date? {
        if let value = decoding.nextDate(key, record: record) { return value }
        guard var offset = try present(key) else { return nil }
        let value = try decoding.decodeDate(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a UUID, or `nil` when the key is missing or null.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is of another type; see ``FieldReader`` for the rest.
    public func decodeIfPresent(_ type: UUID.Type, forKey key: String) throws -> UUID? {
        if let value = decoding.nextUUID(key, record: record) { return value }
        guard var offset = try present(key) else { return nil }
        let value = try decoding.decodeUUID(at: &offset, path: path(key))
        decoding.didReadField(endingAt: offset)
        return value
    }

    /// Reads a value of any other `Decodable` type, or `nil` when the key is missing or null.
    ///
    /// - Throws: What `T`'s `init(from:)` throws; see ``FieldReader`` for the rest.
    public func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T? {
        guard let offset = try present(key) else { return nil }
        return try decoding.decodeField(T.self, at: offset, name: key)
    }

    /// The offset of the value of `key`, or the error Codable throws for a missing key.
    private func require(_ key: String) throws -> Int {
        guard let offset = try decoding.fieldOffset(key, record: record) else {
            throw DecodingError.keyNotFound(
                RecordCodingKey(stringValue: key),
                DecodingError.Context(
                    codingPath: [], debugDescription: "The record has no value for the key \"\(key)\"."))
        }
        return offset
    }

    /// The offset of the value of `key`, or nil when it is missing or null (and then moves past a null).
    private func present(_ key: String) throws -> Int? {
        guard let offset = try decoding.fieldOffset(key, record: record) else { return nil }
        guard try decoding.isNil(at: offset) else { return offset }
        decoding.didReadField(endingAt: offset + 1)
        return nil
    }

    /// The coding path of the field `key`, for errors.
    private func path(_ key: String) -> [any CodingKey] {
        [RecordCodingKey(stringValue: key)]
    }
}
