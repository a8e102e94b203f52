import Foundation

/// Constants of the binary record format, and the helpers that write its
/// primitive encodings.
///
/// A record is one version byte, one value and the CRC-32C of the two; a
/// value is a ``ValueKind`` tag byte followed by its payload. Lengths, counts
/// and field ids are LEB128 varints; signed integers are zigzag varints;
/// fixed-width numbers and the checksum are little-endian.
///
/// Records written before checksums existed have version 1 and no checksum;
/// they still read, and opening their store rewrites them with one.
enum RecordFormat {
    /// The version byte that starts every record this code writes: a record with a trailing checksum.
    static let version: UInt8 = 2

    /// The version byte of records written before checksums: the value ends the record.
    static let uncheckedVersion: UInt8 = 1

    /// The length of the trailing checksum.
    static let checksumLength = 4

    /// The part of `bytes`, a whole record, that the decoders read: all of it for an unchecked record, all but the
    /// checksum for a checked one, once the checksum matches.
    ///
    /// - Throws: ``RecordFormatError`` for a version this code does not read, or a checksum that does not match.
    @inline(__always)
    static func checkedBody(_ bytes: BorrowedBytes) throws(RecordFormatError) -> BorrowedBytes {
        guard let version = bytes.first else { throw RecordFormatError(.truncated, at: 0) }
        switch version {
        case RecordFormat.version:
            guard bytes.count > checksumLength + 1, Checksum.isValid(trailing: bytes) else {
                throw RecordFormatError(.checksumMismatch, at: bytes.count)
            }
            return bytes.extracting(..<(bytes.count - checksumLength))
        case uncheckedVersion:
            return bytes
        default:
            throw RecordFormatError(.badVersion(version), at: 0)
        }
    }

    /// The body of a record that ``checkedBody(_:)`` accepted already (its model was just decoded from these bytes),
    /// without computing its checksum again; `nil` for bytes it would not accept for their version or length.
    static func verifiedBody(_ bytes: BorrowedBytes) -> BorrowedBytes? {
        switch bytes.first {
        case RecordFormat.version:
            guard bytes.count > checksumLength + 1 else { return nil }
            return bytes.extracting(..<(bytes.count - checksumLength))
        case uncheckedVersion: return bytes
        default: return nil
        }
    }

    /// How deeply containers may nest before decoding gives up.
    ///
    /// Corrupt or hostile bytes could otherwise describe a nesting deep enough
    /// to overflow the stack of the recursive decoders.
    static let maximumDepth = 512

    /// The text stored for `Decimal.nan`, which `Decimal(string:)` does not parse.
    static let decimalNaN = "NaN"

    /// Maps a signed integer to an unsigned one so that small magnitudes get short varints.
    @inline(__always)
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// Reverses ``zigzag(_:)``.
    @inline(__always)
    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` as a LEB128 varint: seven bits per byte, low bits first.
    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends a tag byte followed by a varint payload.
    @inline(__always)
    mutating func appendTagged(_ kind: ValueKind, varint value: UInt64) {
        append(kind.rawValue)
        appendVarint(value)
    }

    /// Appends a tag byte, the varint byte length of `text`, then its UTF-8.
    ///
    /// Used for the string, URL and decimal kinds.
    mutating func appendTagged(_ kind: ValueKind, text: String) {
        append(kind.rawValue)
        appendVarint(UInt64(text.utf8.count))
        append(contentsOf: text.utf8)
    }

    /// Appends a tag byte, the varint length of `bytes`, then the bytes.
    mutating func appendTagged(_ kind: ValueKind, bytes: some Collection<UInt8>) {
        append(kind.rawValue)
        appendVarint(UInt64(bytes.count))
        append(contentsOf: bytes)
    }
}

extension Array {
    /// Removes every element and keeps the storage, doing nothing for an array already empty: the buffers of the
    /// codecs are cleared once per record, and most of them are empty then, where `removeAll(keepingCapacity:)`
    /// would still run its generic replacement.
    @inline(__always)
    mutating func clear() {
        if !isEmpty { removeAll(keepingCapacity: true) }
    }
}
