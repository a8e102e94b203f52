/// Decodes records in the binary record format into `Decodable` values.
///
/// Decoding reads straight from the borrowed bytes, typically LMDB's memory
/// map inside a read transaction, without copying them.
///
/// ```swift
/// let decoder = RecordDecoder()
/// let task = try table.withBytes(forKey: id) { bytes in
///     try decoder.decode(Task.self, from: bytes, fields: fields)
/// }
/// ```
///
/// Missing keys and null values decode as nil through `decodeIfPresent`;
/// field ids the type does not ask for are skipped. Integers decode into any
/// width that holds them; integers and floats decode as Double or Float when
/// exact.
///
/// The decoder keeps its working buffers between calls, so it is not
/// `Sendable`: give each thread or context its own.
struct RecordDecoder {
    /// The `Decoder` and its buffers, reused across calls.
    private let decoding = RecordDecoding()

    /// Creates a decoder.
    init() {}

    /// Decodes a value of `type` from one record.
    ///
    /// - Parameters:
    ///   - type: The type to decode, usually a model.
    ///   - bytes: The whole record, version byte included; only read during the call.
    ///   - fields: The entity's field table, which names the record's field ids.
    /// - Throws: ``RecordFormatError`` for corrupt bytes, with the offset where
    ///   they went wrong; `DecodingError` for well-formed bytes that do not fit
    ///   `type` (a missing key, a type mismatch, an integer out of range).
    func decode<T: Decodable>(_ type: T.Type, from bytes: BorrowedBytes, fields: FieldTable) throws -> T {
        // A decode started from inside another one (from an `init(from:)`) gets its own buffers. The reused
        // instance is called in place: a local copy of it would cost reference counting per record.
        if decoding.isBusy { return try RecordDecoding().decodeRecord(T.self, from: bytes, fields: fields) }
        return try decoding.decodeRecord(T.self, from: bytes, fields: fields)
    }

    /// Decodes one record through a ``FieldReader`` over its top-level fields, as a ``FieldCodable`` model does.
    ///
    /// - Throws: ``RecordFormatError`` for corrupt bytes, `DecodingError` for what `body` throws reading them.
    func decodeFields<R>(
        from bytes: BorrowedBytes,
        fields: FieldTable,
        _ body: (FieldReader) throws -> R
    ) throws -> R {
        // As in `decode(_:from:fields:)`.
        if decoding.isBusy { return try RecordDecoding().decodeFieldRecord(from: bytes, fields: fields, body) }
        return try decoding.decodeFieldRecord(from: bytes, fields: fields, body)
    }
}
