import Foundation

/// Reading index keys back into values.
extension IndexKey {
    /// Parses a key into its components, given the kind of each.
    ///
    /// A nil component decodes as `.null`; integers as `.int` or `.uint`,
    /// floats and doubles as `.float` or `.double` (zero and NaN normalized),
    /// dates, UUIDs, strings and Booleans as themselves.
    ///
    /// - Parameters:
    ///   - bytes: A whole key, as built, not truncated by ``finalize(_:)``.
    ///   - kinds: The kind of each component, in order.
    /// - Throws: ``IndexKeyError/malformed(offset:reason:)`` when the bytes do
    ///   not parse as those components or continue after them;
    ///   ``IndexKeyError/notIndexable(_:)`` for a kind keys cannot hold.
    package static func decodeComponents(_ bytes: BorrowedBytes, kinds: [ValueKind]) throws -> [RecordValue] {
        var offset = 0
        var components: [RecordValue] = []
        components.reserveCapacity(kinds.count)
        for kind in kinds {
            components.append(try decodeComponent(bytes, kind: kind, at: &offset))
        }
        guard offset == bytes.count else {
            throw IndexKeyError.malformed(offset: offset, reason: "bytes after the last component")
        }
        return components
    }

    /// Decodes one component at `offset` and advances past it.
    private static func decodeComponent(
        _ bytes: BorrowedBytes, kind: ValueKind, at offset: inout Int
    ) throws -> RecordValue {
        let presence = try byte(bytes, at: &offset)
        if presence == absent { return .null }
        guard presence == present else {
            throw IndexKeyError.malformed(offset: offset - 1, reason: "presence byte \(presence)")
        }
        switch kind {
        case .null:
            throw IndexKeyError.malformed(offset: offset - 1, reason: "a value where nil was expected")
        case .false, .true:
            let start = offset
            switch try byte(bytes, at: &offset) {
            case 0: return .bool(false)
            case 1: return .bool(true)
            case let other: throw IndexKeyError.malformed(offset: start, reason: "Boolean byte \(other)")
            }
        case .int:
            return .int(Int64(bitPattern: try bigEndian(bytes, at: &offset) ^ (1 << 63)))
        case .uint:
            return .uint(try bigEndian(bytes, at: &offset))
        case .float:
            return .float(Float(double(fromOrderedBits: try bigEndian(bytes, at: &offset))))
        case .double:
            return .double(double(fromOrderedBits: try bigEndian(bytes, at: &offset)))
        case .date:
            let interval = double(fromOrderedBits: try bigEndian(bytes, at: &offset))
            return .date(Date(timeIntervalSinceReferenceDate: interval))
        case .uuid:
            guard bytes.count - offset >= 16 else {
                throw IndexKeyError.malformed(offset: offset, reason: "truncated UUID")
            }
            let uuid = bytes.loadUUID(fromByteOffset: offset)
            offset += 16
            return .uuid(uuid)
        case .string:
            return .string(try string(bytes, at: &offset))
        case .data, .url, .decimal, .array, .object, .stringMap, .intMap:
            throw IndexKeyError.notIndexable(kind)
        }
    }

    /// Reads one byte.
    private static func byte(_ bytes: BorrowedBytes, at offset: inout Int) throws -> UInt8 {
        guard offset < bytes.count else { throw IndexKeyError.malformed(offset: offset, reason: "key ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads eight bytes, most significant first.
    private static func bigEndian(_ bytes: BorrowedBytes, at offset: inout Int) throws -> UInt64 {
        guard bytes.count - offset >= 8 else { throw IndexKeyError.malformed(offset: offset, reason: "key ends early") }
        var value: UInt64 = 0
        for index in offset..<(offset + 8) {
            value = value << 8 | UInt64(bytes[index])
        }
        offset += 8
        return value
    }

    /// Reads an escaped, terminated string.
    private static func string(_ bytes: BorrowedBytes, at offset: inout Int) throws -> String {
        let start = offset
        var utf8: [UInt8] = []
        while true {
            let next = try byte(bytes, at: &offset)
            guard next == 0 else {
                utf8.append(next)
                continue
            }
            switch try byte(bytes, at: &offset) {
            case stringTerminator:
                guard let text = utf8.withBorrowedBytes({ ByteReader.validatedString($0) }) else {
                    throw IndexKeyError.malformed(offset: start, reason: "string is not valid UTF-8")
                }
                return text
            case escapedZero:
                utf8.append(0)
            case let other:
                throw IndexKeyError.malformed(offset: offset - 1, reason: "byte \(other) after 0x00 in a string")
            }
        }
    }
}
