import Foundation

/// Bounds-checked reads of the record format's primitives from borrowed bytes.
///
/// Every read takes an offset, checks that the bytes it needs are inside the
/// buffer and throws ``RecordFormatError`` otherwise, so corrupt records can
/// never make the decoders read out of bounds. Offsets are relative to the
/// start of the buffer, which is the start of the record.
struct ByteReader {
    /// The record's bytes, borrowed for as long as the reader is used.
    let buffer: BorrowedBytes

    /// Creates a reader over `buffer`, which must stay valid while the reader is used.
    init(_ buffer: BorrowedBytes) {
        self.buffer = buffer
    }

    /// The number of bytes in the buffer.
    var count: Int { buffer.count }

    /// Reads the byte at `offset` and advances `offset` past it.
    @inline(__always)
    func readByte(at offset: inout Int) throws(RecordFormatError) -> UInt8 {
        guard offset >= 0, offset < buffer.count else { throw RecordFormatError(.truncated, at: offset) }
        let byte = buffer[offset]
        offset += 1
        return byte
    }

    /// Reads a type tag at `offset` and advances `offset` past it.
    @inline(__always)
    func readKind(at offset: inout Int) throws(RecordFormatError) -> ValueKind {
        let start = offset
        let byte = try readByte(at: &offset)
        guard let kind = ValueKind(rawValue: byte) else { throw RecordFormatError(.unknownTag(byte), at: start) }
        return kind
    }

    /// Reads a LEB128 varint at `offset` and advances `offset` past it.
    @inline(__always)
    func readVarint(at offset: inout Int) throws(RecordFormatError) -> UInt64 {
        // Fast path: one byte, the common case for tags, counts, ids and short lengths.
        if offset >= 0, offset < buffer.count {
            let byte = buffer[offset]
            if byte < 0x80 {
                offset += 1
                return UInt64(byte)
            }
        }
        return try readLongVarint(at: &offset)
    }

    /// Reads a varint of more than one byte; the slow path of ``readVarint(at:)``.
    private func readLongVarint(at offset: inout Int) throws(RecordFormatError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte(at: &offset)
            // The tenth byte may only carry the top bit of a 64-bit value.
            if shift == 63 && byte > 1 { throw RecordFormatError(.malformedVarint, at: start) }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// Reads a varint length and checks that that many bytes follow `offset`.
    @inline(__always)
    func readLength(at offset: inout Int) throws(RecordFormatError) -> Int {
        let start = offset
        let length = try readVarint(at: &offset)
        guard length <= UInt64(buffer.count - offset) else { throw RecordFormatError(.badLength(length), at: start) }
        return Int(length)
    }

    /// Reads a varint element count and checks it against the bytes left.
    ///
    /// Every element takes at least `minimumElementSize` bytes, so a count
    /// larger than the remaining bytes allow is corrupt: rejecting it here
    /// keeps hostile counts from driving huge allocations.
    @inline(__always)
    func readCount(at offset: inout Int, minimumElementSize: Int) throws(RecordFormatError) -> Int {
        let start = offset
        let count = try readVarint(at: &offset)
        guard count <= UInt64((buffer.count - offset) / minimumElementSize) else {
            throw RecordFormatError(.badLength(count), at: start)
        }
        return Int(count)
    }

    /// Reads `count` bytes, least significant first, as an unsigned integer.
    @inline(__always)
    func readLittleEndian(at offset: inout Int, count: Int) throws(RecordFormatError) -> UInt64 {
        guard offset >= 0, count <= buffer.count - offset else { throw RecordFormatError(.truncated, at: offset) }
        var result: UInt64 = 0
        for index in 0..<count {
            result |= UInt64(buffer[offset + index]) << UInt64(8 * index)
        }
        offset += count
        return result
    }

    /// Returns a view of `count` bytes at `offset`, checked to be in bounds, and advances `offset`.
    @inline(__always)
    func readSlice(at offset: inout Int, count: Int) throws(RecordFormatError) -> BorrowedBytes {
        guard offset >= 0, count >= 0, count <= buffer.count - offset else {
            throw RecordFormatError(.truncated, at: offset)
        }
        let slice = buffer.extracting(offset..<(offset + count))
        offset += count
        return slice
    }

    /// Reads a length-prefixed UTF-8 payload at `offset`, validating it.
    func readText(at offset: inout Int) throws(RecordFormatError) -> String {
        let start = offset
        let length = try readLength(at: &offset)
        let utf8 = try readSlice(at: &offset, count: length)
        guard let text = Self.validatedString(utf8) else { throw RecordFormatError(.invalidUTF8, at: start) }
        return text
    }

    /// Returns `utf8` as a string, or nil if it is not valid UTF-8.
    ///
    /// `String(validating:as:)` goes through unspecialized generic code;
    /// decoding (which repairs invalid UTF-8) and checking that nothing was
    /// repaired is several times faster.
    static func validatedString(_ utf8: BorrowedBytes) -> String? {
        var text = String(decoding: utf8, as: UTF8.self)
        let unchanged = text.withBorrowedUTF8 { decoded in decoded.elementsEqual(utf8) }
        return unchanged ? text : nil
    }

    /// Reads the 16 bytes of a UUID at `offset`.
    func readUUID(at offset: inout Int) throws(RecordFormatError) -> UUID {
        guard offset >= 0, 16 <= buffer.count - offset else { throw RecordFormatError(.truncated, at: offset) }
        let uuid = buffer.loadUUID(fromByteOffset: offset)
        offset += 16
        return uuid
    }

    /// Returns the offset just past the value whose tag is at `offset`, without decoding it.
    ///
    /// - Parameter depth: The nesting depth of the value, checked against
    ///   ``RecordFormat/maximumDepth``.
    func endOfValue(at offset: Int, depth: Int) throws(RecordFormatError) -> Int {
        let start = offset
        var offset = offset
        let kind = try readKind(at: &offset)
        switch kind {
        case .null, .false, .true:
            return offset
        case .int, .uint:
            _ = try readVarint(at: &offset)
            return offset
        case .float:
            return try skip(4, at: offset)
        case .double, .date:
            return try skip(8, at: offset)
        case .uuid:
            return try skip(16, at: offset)
        case .string, .data, .url, .decimal:
            let length = try readLength(at: &offset)
            return offset + length
        case .array:
            let count = try readCount(at: &offset, minimumElementSize: 1)
            try checkDepth(depth, at: start)
            for _ in 0..<count {
                offset = try endOfValue(at: offset, depth: depth + 1)
            }
            return offset
        case .object, .intMap:
            let count = try readCount(at: &offset, minimumElementSize: 2)
            try checkDepth(depth, at: start)
            for _ in 0..<count {
                _ = try readVarint(at: &offset)
                offset = try endOfValue(at: offset, depth: depth + 1)
            }
            return offset
        case .stringMap:
            let count = try readCount(at: &offset, minimumElementSize: 2)
            try checkDepth(depth, at: start)
            for _ in 0..<count {
                let length = try readLength(at: &offset)
                offset += length
                offset = try endOfValue(at: offset, depth: depth + 1)
            }
            return offset
        }
    }

    /// Returns the offset just past the value of a top-level field whose tag is at `offset`, as
    /// ``endOfValue(at:depth:)`` does, with the values of fixed size, short integers and strings skipped in line:
    /// finding a field skips every value stored before it.
    @inline(__always)
    func endOfFieldValue(at offset: Int) throws(RecordFormatError) -> Int {
        guard offset >= 0, offset < buffer.count - 1 else { return try endOfValue(at: offset, depth: 1) }
        let end: Int
        switch buffer[offset] {
        case ValueKind.null.rawValue, ValueKind.false.rawValue, ValueKind.true.rawValue: return offset + 1
        case ValueKind.int.rawValue, ValueKind.uint.rawValue:
            guard buffer[offset + 1] < 0x80 else { return try endOfValue(at: offset, depth: 1) }
            return offset + 2
        case ValueKind.double.rawValue, ValueKind.date.rawValue: end = offset + 9
        case ValueKind.uuid.rawValue: end = offset + 17
        case ValueKind.string.rawValue:
            let length = Int(buffer[offset + 1])
            guard length < 0x80 else { return try endOfValue(at: offset, depth: 1) }
            end = offset + 2 + length
        default: return try endOfValue(at: offset, depth: 1)
        }
        // A value past the end: the general path throws the error it deserves.
        guard end <= buffer.count else { return try endOfValue(at: offset, depth: 1) }
        return end
    }

    /// Throws if a container at `depth` would nest too deeply.
    @inline(__always)
    func checkDepth(_ depth: Int, at offset: Int) throws(RecordFormatError) {
        guard depth < RecordFormat.maximumDepth else { throw RecordFormatError(.nestingTooDeep, at: offset) }
    }

    /// Returns `offset + count` if that many bytes remain.
    @inline(__always)
    private func skip(_ count: Int, at offset: Int) throws(RecordFormatError) -> Int {
        guard count <= buffer.count - offset else { throw RecordFormatError(.truncated, at: offset) }
        return offset + count
    }
}
