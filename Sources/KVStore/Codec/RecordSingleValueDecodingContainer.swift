/// The single value container of the record decoder.
struct RecordSingleValueDecodingContainer: SingleValueDecodingContainer {
    /// The decoder that owns the bytes.
    let decoding: RecordDecoding
    /// The offset of the value's tag, or -1 for a missing value.
    let offset: Int
    /// Where the container's coding path comes from.
    let path: RecordDecoding.ContainerPath

    /// The path of keys to this value.
    var codingPath: [any CodingKey] { decoding.path(path) }

    /// Returns whether the value is null or missing.
    func decodeNil() -> Bool {
        // A corrupt tag is not null; the decode that follows reports it.
        (try? decoding.isNil(at: offset)) ?? false
    }

    /// Decodes a Boolean.
    func decode(_ type: Bool.Type) throws -> Bool {
        var offset = offset
        return try decoding.decodeBool(at: &offset, path: codingPath)
    }

    /// Decodes a string.
    func decode(_ type: String.Type) throws -> String {
        var offset = offset
        return try decoding.decodeString(at: &offset, path: codingPath)
    }

    /// Decodes a Double.
    func decode(_ type: Double.Type) throws -> Double {
        var offset = offset
        return try decoding.decodeDouble(at: &offset, path: codingPath)
    }

    /// Decodes a Float.
    func decode(_ type: Float.Type) throws -> Float {
        var offset = offset
        return try decoding.decodeFloat(at: &offset, path: codingPath)
    }

    /// Decodes an Int.
    func decode(_ type: Int.Type) throws -> Int { try decodeInteger(type) }
    /// Decodes an Int8.
    func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(type) }
    /// Decodes an Int16.
    func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(type) }
    /// Decodes an Int32.
    func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(type) }
    /// Decodes an Int64.
    func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(type) }
    /// Decodes an Int128.
    func decode(_ type: Int128.Type) throws -> Int128 { try decodeInteger(type) }
    /// Decodes a UInt.
    func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(type) }
    /// Decodes a UInt8.
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(type) }
    /// Decodes a UInt16.
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(type) }
    /// Decodes a UInt32.
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(type) }
    /// Decodes a UInt64.
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(type) }
    /// Decodes a UInt128.
    func decode(_ type: UInt128.Type) throws -> UInt128 { try decodeInteger(type) }

    /// Decodes a value of any other type from this value.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoding.decodeInPlace(T.self, at: offset, path: path)
    }

    /// Decodes an integer of any width.
    private func decodeInteger<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        var offset = offset
        return try decoding.decodeInteger(I.self, at: &offset, path: codingPath)
    }
}
