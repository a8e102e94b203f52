/// Encodes values into exactly the bytes a store writes for its records, for the tools of this package: kvbench's
/// raw-LMDB baseline stores these bytes so that it does the same storage work as the library.
package struct RecordBytesEncoder {
    private var encoder = RecordEncoder()
    private var buffer: [UInt8] = []
    /// The field names interned so far, as an entity's field table in the catalog would hold them.
    package private(set) var fields = FieldTable()

    /// Creates an encoder with an empty field table.
    package init() {}

    /// Appends the record for `value` to `bytes`.
    ///
    /// - Throws: `EncodingError` when the value cannot be encoded.
    package mutating func append<T: Encodable>(_ value: T, to bytes: inout [UInt8]) throws {
        try encoder.encode(value, fields: &fields, into: &buffer)
        bytes.append(contentsOf: buffer)
    }
}
