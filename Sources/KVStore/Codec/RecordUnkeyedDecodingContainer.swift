/// The unkeyed container of the record decoder, over an array.
///
/// Elements are read in order; the container keeps the offset of the next
/// one, and advances only when an element decodes, so a failed decode can be
/// retried as another type.
struct RecordUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    /// The decoder that owns the bytes.
    let decoding: RecordDecoding
    /// Where the container's coding path comes from.
    let path: RecordDecoding.ContainerPath
    /// How many containers enclose this one.
    let depth: Int
    /// The number of elements.
    let count: Int?
    /// The index of the next element.
    private(set) var currentIndex = 0
    /// The offset of the array's tag.
    private let offset: Int
    /// The offset of the next element.
    private var position: Int

    /// Creates a container over the array at `offset`.
    ///
    /// - Throws: `DecodingError` if the value is missing or not an array;
    ///   ``RecordFormatError`` if its count is corrupt.
    init(decoding: RecordDecoding, at offset: Int, path: RecordDecoding.ContainerPath, depth: Int) throws {
        guard offset >= 0 else {
            throw DecodingError.valueNotFound(
                [Any].self,
                DecodingError.Context(codingPath: decoding.path(path), debugDescription: "The value is missing."))
        }
        var position = offset
        let kind = try decoding.reader.readKind(at: &position)
        guard kind == .array else {
            throw decoding.mismatch([Any].self, found: kind, at: offset, path: decoding.path(path))
        }
        try decoding.reader.checkDepth(depth, at: offset)
        let count = try decoding.reader.readCount(at: &position, minimumElementSize: 1)
        self.decoding = decoding
        self.path = path
        self.depth = depth
        self.count = count
        self.offset = offset
        self.position = position
        if count == 0 { decoding.noteEnd(ofValueAt: offset, end: position) }
    }

    /// The path of keys to this container.
    var codingPath: [any CodingKey] { decoding.path(path) }

    /// Whether every element was decoded.
    var isAtEnd: Bool { currentIndex >= count ?? 0 }

    /// Decodes a null element and returns true, or returns false and leaves a non-null one.
    mutating func decodeNil() throws -> Bool {
        try checkNotAtEnd(Never?.self)
        guard try decoding.isNil(at: position) else { return false }
        advance(to: position + 1)
        return true
    }

    /// Decodes a Boolean.
    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try checkNotAtEnd(type)
        var next = position
        let value = try decoding.decodeBool(at: &next, path: elementPath)
        advance(to: next)
        return value
    }

    /// Decodes a string.
    mutating func decode(_ type: String.Type) throws -> String {
        try checkNotAtEnd(type)
        var next = position
        let value = try decoding.decodeString(at: &next, path: elementPath)
        advance(to: next)
        return value
    }

    /// Decodes a Double.
    mutating func decode(_ type: Double.Type) throws -> Double {
        try checkNotAtEnd(type)
        var next = position
        let value = try decoding.decodeDouble(at: &next, path: elementPath)
        advance(to: next)
        return value
    }

    /// Decodes a Float.
    mutating func decode(_ type: Float.Type) throws -> Float {
        try checkNotAtEnd(type)
        var next = position
        let value = try decoding.decodeFloat(at: &next, path: elementPath)
        advance(to: next)
        return value
    }

    /// Decodes an Int.
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeInteger(type) }
    /// Decodes an Int8.
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(type) }
    /// Decodes an Int16.
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(type) }
    /// Decodes an Int32.
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(type) }
    /// Decodes an Int64.
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(type) }
    /// Decodes an Int128.
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try decodeInteger(type) }
    /// Decodes a UInt.
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(type) }
    /// Decodes a UInt8.
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(type) }
    /// Decodes a UInt16.
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(type) }
    /// Decodes a UInt32.
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(type) }
    /// Decodes a UInt64.
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(type) }
    /// Decodes a UInt128.
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try decodeInteger(type) }

    /// Decodes an element of any other type.
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try checkNotAtEnd(type)
        if decoding.isSpecial(T.self) {
            let value = try decoding.decodeSpecialValue(T.self, at: position, path: elementPath)
            advance(to: try decoding.reader.endOfValue(at: position, depth: depth + 1))
            return value
        }
        let value = try decoding.decodeChild(
            T.self, at: position, key: RecordCodingKey.index(currentIndex), path: path, depth: depth)
        advance(to: try decoding.endOfValue(at: position, depth: depth + 1))
        return value
    }

    /// Returns a keyed container over the next element.
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try checkNotAtEnd(type)
        let container = try decoding.keyedContainer(
            keyedBy: NestedKey.self, at: position, path: decoding.explicitPath(elementPath), depth: depth + 1)
        advance(to: try decoding.endOfValue(at: position, depth: depth + 1))
        return KeyedDecodingContainer(container)
    }

    /// Returns an unkeyed container over the next element.
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try checkNotAtEnd([Any].self)
        let container = try RecordUnkeyedDecodingContainer(
            decoding: decoding, at: position, path: decoding.explicitPath(elementPath), depth: depth + 1)
        advance(to: try decoding.endOfValue(at: position, depth: depth + 1))
        return container
    }

    /// Returns a decoder for the next element.
    mutating func superDecoder() throws -> any Decoder {
        try checkNotAtEnd((any Decoder).self)
        let decoder = decoding.superDecoder(at: position, path: elementPath, depth: depth + 1)
        advance(to: try decoding.endOfValue(at: position, depth: depth + 1))
        return decoder
    }

    // MARK: Helpers

    /// The coding path of the next element.
    private var elementPath: [any CodingKey] {
        codingPath + [RecordCodingKey.index(currentIndex)]
    }

    /// Decodes an integer of any width.
    private mutating func decodeInteger<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        try checkNotAtEnd(type)
        var next = position
        let value = try decoding.decodeInteger(I.self, at: &next, path: elementPath)
        advance(to: next)
        return value
    }

    /// Moves past the element just decoded; after the last one, records the array's end.
    private mutating func advance(to next: Int) {
        position = next
        currentIndex += 1
        if currentIndex == count { decoding.noteEnd(ofValueAt: offset, end: position) }
    }

    /// Throws `valueNotFound` when every element was already decoded.
    private func checkNotAtEnd(_ type: Any.Type) throws {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: elementPath, debugDescription: "The array has no more elements (it has \(count ?? 0)).")
            )
        }
    }
}
