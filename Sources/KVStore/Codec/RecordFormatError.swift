/// Bytes that are not a well-formed record: the record is corrupt, or was not
/// written by this codec.
///
/// The decoders throw it, with the byte offset where the problem was found,
/// instead of trapping or reading out of bounds. The store wraps it with the
/// entity name and record ID before it reaches the user.
struct RecordFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with the bytes.
    enum Reason: Equatable, Sendable {
        /// The record's first byte is not a format version this code reads.
        case badVersion(UInt8)
        /// The bytes end in the middle of a value.
        case truncated
        /// A type tag that no ``ValueKind`` has.
        case unknownTag(UInt8)
        /// A length or count larger than the bytes that remain.
        case badLength(UInt64)
        /// A varint longer than ten bytes, or larger than 64 bits.
        case malformedVarint
        /// A string, URL or decimal payload that is not valid UTF-8.
        case invalidUTF8
        /// A URL or decimal payload that does not parse.
        case invalidText(String)
        /// Bytes after the end of the record's value.
        case trailingBytes
        /// Containers nested deeper than ``RecordFormat/maximumDepth``.
        case nestingTooDeep
        /// The record's checksum does not match its bytes: they changed after they were written.
        case checksumMismatch
    }

    /// What is wrong with the bytes.
    var reason: Reason
    /// The offset, from the start of the record, of the byte where decoding stopped.
    var offset: Int

    /// Creates an error for a problem found at `offset`.
    init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// A one-line explanation, for logs and for the error the store wraps around it.
    var description: String {
        let what =
            switch reason {
            case .badVersion(let version): "unsupported record format version \(version)"
            case .truncated: "record ends in the middle of a value"
            case .unknownTag(let tag): "unknown type tag \(tag)"
            case .badLength(let length): "length \(length) exceeds the remaining bytes"
            case .malformedVarint: "malformed varint"
            case .invalidUTF8: "text is not valid UTF-8"
            case .invalidText(let text): "cannot parse \"\(text)\""
            case .trailingBytes: "unexpected bytes after the record's value"
            case .nestingTooDeep: "containers nested deeper than \(RecordFormat.maximumDepth) levels"
            case .checksumMismatch: "its checksum does not match its bytes"
            }
        return "Corrupt record at byte \(offset): \(what)"
    }
}
