import Foundation

/// Reading the values that containers decode directly, without a nested `init(from:)`.
///
/// Each reader takes the offset of the value's tag, advances it past the
/// value, and takes the value's coding path as an autoclosure, built only
/// when an error needs it.
extension RecordDecoding {
    /// Returns whether the value at `offset` is null or missing (-1).
    func isNil(at offset: Int) throws -> Bool {
        guard offset >= 0 else { return true }
        var position = offset
        return try reader.readKind(at: &position) == .null
    }

    /// Reads a Boolean.
    func decodeBool(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        let kind = try readKind(at: &offset, path: path())
        switch kind {
        case .false: return false
        case .true: return true
        default: throw mismatch(Bool.self, found: kind, at: offset - 1, path: path())
        }
    }

    /// Reads a string, validating its UTF-8.
    func decodeString(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> String {
        let kind = try readKind(at: &offset, path: path())
        guard kind == .string else { throw mismatch(String.self, found: kind, at: offset - 1, path: path()) }
        return try reader.readText(at: &offset)
    }

    /// Reads an integer into any width, throwing instead of truncating.
    func decodeInteger<I: FixedWidthInteger>(
        _ type: I.Type, at offset: inout Int, path: @autoclosure () -> [any CodingKey]
    ) throws -> I {
        let kind = try readKind(at: &offset, path: path())
        switch kind {
        case .int:
            let value = RecordFormat.unzigzag(try reader.readVarint(at: &offset))
            guard let result = I(exactly: value) else { throw outOfRange(I.self, value: "\(value)", path: path()) }
            return result
        case .uint:
            let value = try reader.readVarint(at: &offset)
            guard let result = I(exactly: value) else { throw outOfRange(I.self, value: "\(value)", path: path()) }
            return result
        default:
            throw mismatch(I.self, found: kind, at: offset - 1, path: path())
        }
    }

    /// Reads a Double: a double, a float, or an integer it represents exactly.
    func decodeDouble(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> Double {
        let kind = try readKind(at: &offset, path: path())
        switch kind {
        case .double:
            return Double(bitPattern: try reader.readLittleEndian(at: &offset, count: 8))
        case .float:
            return Double(
                Float(bitPattern: UInt32(truncatingIfNeeded: try reader.readLittleEndian(at: &offset, count: 4))))
        case .int, .uint:
            let start = offset - 1
            let integer = try readAnyInteger(kind, at: &offset)
            guard
                let value = integer.signed.flatMap(Double.init(exactly:))
                    ?? integer.unsigned.flatMap(Double.init(exactly:))
            else { throw inexact(Double.self, at: start, path: path()) }
            return value
        default:
            throw mismatch(Double.self, found: kind, at: offset - 1, path: path())
        }
    }

    /// Reads a Float: a float, or a double or integer it represents exactly.
    func decodeFloat(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> Float {
        let kind = try readKind(at: &offset, path: path())
        switch kind {
        case .float:
            return Float(bitPattern: UInt32(truncatingIfNeeded: try reader.readLittleEndian(at: &offset, count: 4)))
        case .double:
            let start = offset - 1
            let double = Double(bitPattern: try reader.readLittleEndian(at: &offset, count: 8))
            if double.isNaN { return .nan }
            guard let value = Float(exactly: double) else { throw inexact(Float.self, at: start, path: path()) }
            return value
        case .int, .uint:
            let start = offset - 1
            let integer = try readAnyInteger(kind, at: &offset)
            guard
                let value = integer.signed.flatMap(Float.init(exactly:))
                    ?? integer.unsigned.flatMap(Float.init(exactly:))
            else { throw inexact(Float.self, at: start, path: path()) }
            return value
        default:
            throw mismatch(Float.self, found: kind, at: offset - 1, path: path())
        }
    }

    /// Reads a Date.
    func decodeDate(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> Date {
        let kind = try readKind(at: &offset, path: path())
        guard kind == .date else { throw mismatch(Date.self, found: kind, at: offset - 1, path: path()) }
        let interval = Double(bitPattern: try reader.readLittleEndian(at: &offset, count: 8))
        return Date(timeIntervalSinceReferenceDate: interval)
    }

    /// Reads a UUID.
    func decodeUUID(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> UUID {
        let kind = try readKind(at: &offset, path: path())
        guard kind == .uuid else { throw mismatch(UUID.self, found: kind, at: offset - 1, path: path()) }
        return try reader.readUUID(at: &offset)
    }

    /// Reads a URL from its absolute string.
    func decodeURL(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> URL {
        let kind = try readKind(at: &offset, path: path())
        guard kind == .url else { throw mismatch(URL.self, found: kind, at: offset - 1, path: path()) }
        let start = offset
        let text = try reader.readText(at: &offset)
        guard let url = URL(string: text) else { throw RecordFormatError(.invalidText(text), at: start) }
        return url
    }

    /// Reads a Decimal from its text, or from an integer.
    func decodeDecimal(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> Decimal {
        let kind = try readKind(at: &offset, path: path())
        switch kind {
        case .decimal:
            let start = offset
            let text = try reader.readText(at: &offset)
            if text == RecordFormat.decimalNaN { return .nan }
            guard let decimal = Decimal(string: text, locale: nil) else {
                throw RecordFormatError(.invalidText(text), at: start)
            }
            return decimal
        case .int, .uint:
            let integer = try readAnyInteger(kind, at: &offset)
            return integer.signed.map { Decimal($0) } ?? integer.unsigned.map { Decimal($0) } ?? 0
        default:
            throw mismatch(Decimal.self, found: kind, at: offset - 1, path: path())
        }
    }

    /// Reads Data, copying the bytes out of the record.
    func decodeData(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> Data {
        let kind = try readKind(at: &offset, path: path())
        guard kind == .data else { throw mismatch(Data.self, found: kind, at: offset - 1, path: path()) }
        let length = try reader.readLength(at: &offset)
        return Data(try reader.readSlice(at: &offset, count: length))
    }

    // MARK: Helpers

    /// Reads a tag; a missing value (offset -1) throws `valueNotFound`.
    @inline(__always)
    private func readKind(at offset: inout Int, path: @autoclosure () -> [any CodingKey]) throws -> ValueKind {
        guard offset >= 0 else {
            throw DecodingError.valueNotFound(
                Any.self, DecodingError.Context(codingPath: path(), debugDescription: "The value is missing."))
        }
        return try reader.readKind(at: &offset)
    }

    /// Reads the payload of an int or uint as whichever it is.
    private func readAnyInteger(_ kind: ValueKind, at offset: inout Int) throws -> (signed: Int64?, unsigned: UInt64?) {
        let payload = try reader.readVarint(at: &offset)
        return kind == .int ? (RecordFormat.unzigzag(payload), nil) : (nil, payload)
    }

    /// The error for a value of the wrong kind: `valueNotFound` for null, `typeMismatch` otherwise.
    func mismatch(_ type: Any.Type, found kind: ValueKind, at offset: Int, path: [any CodingKey]) -> DecodingError {
        if kind == .null {
            return DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: path, debugDescription: "Expected \(type) but found null."))
        }
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path,
                debugDescription: "Expected \(type) but the record stores a \(kind.typeName) value at byte \(offset)."))
    }

    /// The error for an integer that does not fit the requested type.
    private func outOfRange(_ type: Any.Type, value: String, path: [any CodingKey]) -> DecodingError {
        DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path, debugDescription: "The stored integer \(value) does not fit in \(type)."))
    }

    /// The error for a number the requested floating-point type cannot represent exactly.
    private func inexact(_ type: Any.Type, at offset: Int, path: [any CodingKey]) -> DecodingError {
        DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path,
                debugDescription: "The number stored at byte \(offset) is not exactly representable as \(type)."))
    }
}
