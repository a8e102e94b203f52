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
    static func checkedBody(_ bytes: UnsafeRawBufferPointer) throws(RecordFormatError) -> UnsafeRawBufferPointer {
        guard let version = bytes.first else { throw RecordFormatError(.truncated, at: 0) }
        switch version {
        case RecordFormat.version:
            guard bytes.count > checksumLength + 1, Checksum.isValid(trailing: bytes) else {
                throw RecordFormatError(.checksumMismatch, at: bytes.count)
            }
            return UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - checksumLength)])
        case uncheckedVersion:
            return bytes
        default:
            throw RecordFormatError(.badVersion(version), at: 0)
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

    /// Appends a tag byte, then the low `count` (at most 8) bytes of `value`, least significant first, in one
    /// append: a fixed-size value costs one capacity check, not one per byte.
    @inline(__always)
    mutating func appendTagged(_ kind: ValueKind, littleEndian value: UInt64, count: Int) {
        var buffer: (UInt64, UInt64) = (0, 0)
        Swift.withUnsafeMutableBytes(of: &buffer) { buffer in
            buffer[0] = kind.rawValue
            buffer.storeBytes(of: value.littleEndian, toByteOffset: 1, as: UInt64.self)
            append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<(1 + count)]))
        }
    }

    /// Appends a tag byte, then the 16 bytes of `uuid`, in one append.
    @inline(__always)
    mutating func appendTagged(_ kind: ValueKind, uuid: UUID) {
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &buffer) { buffer in
            buffer[0] = kind.rawValue
            buffer.storeBytes(of: uuid.uuid, toByteOffset: 1, as: uuid_t.self)
            append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<17]))
        }
    }

    /// Appends a tag byte, the varint byte length of `text`, then its UTF-8.
    ///
    /// Used for the string, URL and decimal kinds.
    mutating func appendTagged(_ kind: ValueKind, text: String) {
        append(kind.rawValue)
        var text = text
        text.withUTF8 { utf8 in
            appendVarint(UInt64(utf8.count))
            append(contentsOf: utf8)
        }
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
