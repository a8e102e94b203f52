import Foundation
import Testing

@testable import KVStore

/// Encodes `value` with the typed encoder, checks that the RecordValue path
/// reads and rewrites the same bytes, and decodes it back with the typed decoder.
func codecRoundTrip<T: Codable>(_ value: T, fields: inout FieldTable) throws -> T {
    var encoder = RecordEncoder()
    let bytes = try encoder.encode(value, fields: &fields)
    let tree = try bytes.withBorrowedBytes { try RecordValue.decode(from: $0, fields: fields) }
    var treeFields = fields
    let rewritten = tree.encode(fields: &treeFields)
    #expect(rewritten == bytes, "RecordValue rewrote \(T.self) differently")
    #expect(treeFields.names == fields.names)
    return try rewritten.withBorrowedBytes { try RecordDecoder().decode(T.self, from: $0, fields: fields) }
}

/// ``codecRoundTrip(_:fields:)`` with a fresh field table.
func codecRoundTrip<T: Codable>(_ value: T) throws -> T {
    var fields = FieldTable()
    return try codecRoundTrip(value, fields: &fields)
}

/// Encodes `value` into a record with a fresh encoder.
func encodeTestRecord<T: Encodable>(_ value: T, fields: inout FieldTable) throws -> [UInt8] {
    var encoder = RecordEncoder()
    return try encoder.encode(value, fields: &fields)
}

/// Decodes `type` from `bytes` with a fresh decoder.
func decodeTestRecord<T: Decodable>(_ type: T.Type, from bytes: [UInt8], fields: FieldTable) throws -> T {
    try bytes.withBorrowedBytes { try RecordDecoder().decode(T.self, from: $0, fields: fields) }
}

/// Decodes `bytes` as a RecordValue tree.
func decodeTestTree(_ bytes: [UInt8], fields: FieldTable) throws -> RecordValue {
    try bytes.withBorrowedBytes { try RecordValue.decode(from: $0, fields: fields) }
}

/// Returns whether `error` is one of the errors corrupt or mismatched records may throw.
func isCodecTestError(_ error: any Error) -> Bool {
    error is RecordFormatError || error is DecodingError
}
