/// The record codec, reachable from the fuzz targets in `Tools/fuzz` and nowhere else.
///
/// The codec is internal; this wrapper exposes just enough of it, as `@_spi(Fuzzing)`, for a fuzz target to decode
/// arbitrary bytes against a fixed field table and to check that what decodes encodes back stably. It is not API:
/// import it only with `@_spi(Fuzzing) import KVStore`.
///
/// ```swift
/// let codec = try RecordCodecFuzzing(interning: [Sample.example])
/// let bytes = try codec.encode(Sample.example)
/// let sample = try bytes.withUnsafeBytes { try codec.decode(Sample.self, from: $0) }
/// ```
///
/// Its entry points take raw buffers, as a fuzzer hands them over, which makes this file one of the module's few
/// places with unsafe code (ARCHITECTURE.md lists them). Invariant: the caller's buffer stays valid for the call, and
/// nothing keeps a view of it past the call.
@_spi(Fuzzing) public struct RecordCodecFuzzing: Sendable {
    /// The field table every call reads; encoding interns new names in a copy only.
    private let fields: FieldTable

    /// Creates a codec whose field table holds the field names of `samples`, interned by encoding them.
    ///
    /// - Parameter samples: Values whose encoding names every field the fuzzed type has.
    /// - Throws: `EncodingError` when a sample cannot be encoded.
    public init<T: Encodable>(interning samples: [T]) throws {
        var fields = FieldTable()
        var encoder = RecordEncoder()
        for sample in samples { _ = try encoder.encode(sample, fields: &fields) }
        self.fields = fields
    }

    /// The record `bytes` with its checksum made right again, or `nil` when it is not a record with a checksum: so that
    /// a fuzzer's changes inside a record reach the decoders instead of stopping at the checksum.
    public func resealed(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        let bytes = unsafe BorrowedBytes(unsafe: bytes)
        guard bytes.count > RecordFormat.checksumLength + 1, bytes[0] == RecordFormat.version else { return nil }
        var sealed = Array(bytes.prefix(bytes.count - RecordFormat.checksumLength))
        Checksum.append(to: &sealed, from: 0)
        return sealed
    }

    /// Encodes `value` as a record with the real encoder.
    ///
    /// - Throws: `EncodingError` when the value cannot be encoded.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var fields = fields
        var encoder = RecordEncoder()
        return try encoder.encode(value, fields: &fields)
    }

    /// Decodes a value of `type` from `bytes` with the real decoder.
    ///
    /// - Throws: `RecordFormatError` for corrupt bytes, `DecodingError` for bytes that do not fit `type`.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        try RecordDecoder().decode(type, from: unsafe BorrowedBytes(unsafe: bytes), fields: fields)
    }

    /// Encodes `value` as a record through its ``FieldCodable`` conformance, as a store does.
    ///
    /// - Throws: What the value's ``FieldCodable/write(to:)`` throws.
    public func encodeFields<T: FieldCodable>(_ value: T) throws -> [UInt8] {
        var fields = fields
        var bytes: [UInt8] = []
        var encoder = RecordEncoder()
        try encoder.encodeFields(fields: &fields, into: &bytes) { try value.write(to: $0) }
        return bytes
    }

    /// Decodes a value of `type` from `bytes` through its ``FieldCodable`` conformance, as a store does.
    ///
    /// - Throws: `RecordFormatError` for corrupt bytes, `DecodingError` for bytes that do not fit `type`.
    public func decodeFields<T: FieldCodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        try RecordDecoder().decodeFields(from: unsafe BorrowedBytes(unsafe: bytes), fields: fields) {
            try T(fields: $0)
        }
    }

    /// Decodes `bytes` into the schema-free tree `kvtool` reads records with, and returns the tree encoded again.
    ///
    /// - Throws: `RecordFormatError` for corrupt bytes.
    public func reencodeTree(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        var fields = fields
        return try RecordValue.decode(from: unsafe BorrowedBytes(unsafe: bytes), fields: fields).encode(fields: &fields)
    }
}

/// The index-key decoder, reachable from the fuzz targets in `Tools/fuzz` and nowhere else.
///
/// Import it only with `@_spi(Fuzzing) import KVStore`; keys are built with the public
/// ``IndexKeyEncodable/appendIndexKey(to:)``.
///
/// ```swift
/// var key: [UInt8] = []
/// 42.appendIndexKey(to: &key)
/// let again = try key.withUnsafeBytes { try IndexKeyFuzzing.reencode($0, componentKinds: ["int"]) }
/// ```
@_spi(Fuzzing) public enum IndexKeyFuzzing {
    /// The kinds an index key's components may have, by the names `kvtool schema` shows.
    public static let indexableKinds = ["bool", "int", "uint", "float", "double", "date", "uuid", "string"]

    /// Decodes `key` as components of the named kinds and returns them encoded again.
    ///
    /// - Parameters:
    ///   - key: A whole key, as built, not finalized.
    ///   - componentKinds: The kind of each component, from ``indexableKinds``.
    /// - Throws: `IndexKeyError` when the bytes do not parse as those components.
    public static func reencode(_ key: UnsafeRawBufferPointer, componentKinds: [String]) throws -> [UInt8] {
        let key = unsafe BorrowedBytes(unsafe: key)
        let kinds = componentKinds.map { name in ValueKind.allCases.first { $0.typeName == name } ?? .data }
        var bytes: [UInt8] = []
        for component in try IndexKey.decodeComponents(key, kinds: kinds) {
            try IndexKey.append(component, to: &bytes)
        }
        return bytes
    }
}
