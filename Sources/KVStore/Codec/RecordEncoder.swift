/// Encodes `Encodable` values as records in the binary record format.
///
/// The encoder is reusable and keeps its buffers between calls, so encoding
/// a batch allocates little. Field names are interned in the entity's
/// ``FieldTable`` as they are met; top-level fields also get the kind of
/// their first non-null value recorded there.
///
/// ```swift
/// var encoder = RecordEncoder()
/// var buffer: [UInt8] = []
/// for task in tasks {
///     try encoder.encode(task, fields: &fields, into: &buffer)
///     try table.put(buffer, forKey: task.id)
/// }
/// ```
///
/// Dates, UUIDs, URLs, Decimals, Data and dictionaries keyed by data
/// (`String`, `Int` or other `CodingKeyRepresentable` keys) get their own
/// tags at every level. Containers must be used in
/// nesting order: writing to a container closes the containers opened inside
/// it, and using a closed one throws `EncodingError.invalidValue`.
struct RecordEncoder {
    /// The `Encoder` and its buffers, reused across calls.
    private var encoding = RecordEncoding()
    /// The buffer ``encode(_:fields:)`` encodes into.
    private var buffer: [UInt8] = []

    /// Creates an encoder.
    init() {}

    /// Whether an external value not saved yet encodes as a placeholder rather than throwing: for encodings that are
    /// compared, or decoded into a copy of a model, and never stored.
    var encodesUnsavedExternalValues: Bool {
        get { encoding.encodesUnsavedExternalValues }
        set { encoding.encodesUnsavedExternalValues = newValue }
    }

    /// Returns the record for `value`.
    ///
    /// - Parameters:
    ///   - value: The value to encode, usually a model.
    ///   - fields: The entity's field table; new field names are added to it.
    /// - Throws: `EncodingError` when the value cannot be encoded.
    mutating func encode<T: Encodable>(_ value: T, fields: inout FieldTable) throws -> [UInt8] {
        var bytes: [UInt8] = []
        swap(&bytes, &buffer)
        defer { swap(&bytes, &buffer) }
        try encode(value, fields: &fields, into: &bytes)
        return [UInt8](bytes)
    }

    /// Replaces the contents of `bytes` with the record for `value`, reusing
    /// the buffer's storage: encoding a batch into one buffer allocates only
    /// when a record is larger than any before it.
    ///
    /// - Parameters:
    ///   - value: The value to encode, usually a model.
    ///   - fields: The entity's field table; new field names are added to it.
    ///   - bytes: The buffer to write to; on error it is left empty.
    /// - Throws: `EncodingError` when the value cannot be encoded.
    mutating func encode<T: Encodable>(_ value: T, fields: inout FieldTable, into bytes: inout [UInt8]) throws {
        if !isKnownUniquelyReferenced(&encoding) { encoding = RecordEncoding() }
        bytes.removeAll(keepingCapacity: true)
        // Swapping moves the caller's storage in and out without copying it,
        // and leaves it uniquely referenced so appends and interning stay in place.
        swap(&encoding.bytes, &bytes)
        swap(&encoding.fields, &fields)
        defer {
            swap(&encoding.bytes, &bytes)
            swap(&encoding.fields, &fields)
        }
        try encoding.encodeRecord(value)
    }

    /// Replaces the contents of `bytes` with a record whose top-level fields `body` writes, as a ``FieldCodable``
    /// model does: the same bytes its `Encodable` conformance would give for the same fields in the same order.
    ///
    /// - Parameters:
    ///   - fields: The entity's field table; new field names are added to it.
    ///   - bytes: The buffer to write to; on error it is left empty.
    ///   - body: Writes the fields.
    mutating func encodeFields(
        fields: inout FieldTable,
        into bytes: inout [UInt8],
        _ body: (FieldWriter) throws -> Void
    ) throws {
        if !isKnownUniquelyReferenced(&encoding) { encoding = RecordEncoding() }
        bytes.removeAll(keepingCapacity: true)
        swap(&encoding.bytes, &bytes)
        swap(&encoding.fields, &fields)
        defer {
            swap(&encoding.bytes, &bytes)
            swap(&encoding.fields, &fields)
        }
        try encoding.encodeFieldRecord(body)
    }
}
