/// The unkeyed container of the record encoder: writes an array.
struct RecordUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    /// The encoder that owns the buffer.
    let encoding: RecordEncoding
    /// The frame the container writes to; 0 for a container that throws on every use.
    let frameID: Int
    /// Where the container's coding path comes from.
    let path: RecordEncoding.ContainerPath
    /// The number of elements encoded through this container.
    private(set) var count = 0

    /// Creates a container writing to `frameID`.
    init(encoding: RecordEncoding, frameID: Int, path: RecordEncoding.ContainerPath) {
        self.encoding = encoding
        self.frameID = frameID
        self.path = path
    }

    /// The path of keys to this container.
    var codingPath: [any CodingKey] { encoding.path(path) }

    /// Encodes a null element.
    mutating func encodeNil() throws {
        try encoding.beginElement(in: frameID)
        encoding.writeNil()
        count += 1
    }

    /// Encodes a Boolean element.
    mutating func encode(_ value: Bool) throws {
        try encoding.beginElement(in: frameID)
        encoding.write(value)
        count += 1
    }

    /// Encodes a string element.
    mutating func encode(_ value: String) throws {
        try encoding.beginElement(in: frameID)
        encoding.write(value)
        count += 1
    }

    /// Encodes a Double element.
    mutating func encode(_ value: Double) throws {
        try encoding.beginElement(in: frameID)
        encoding.write(value)
        count += 1
    }

    /// Encodes a Float element.
    mutating func encode(_ value: Float) throws {
        try encoding.beginElement(in: frameID)
        encoding.write(value)
        count += 1
    }

    /// Encodes an Int element.
    mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    /// Encodes an Int8 element.
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    /// Encodes an Int16 element.
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    /// Encodes an Int32 element.
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    /// Encodes an Int64 element.
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    /// Encodes an Int128 element that fits in 64 bits.
    mutating func encode(_ value: Int128) throws { try encodeInteger(value) }
    /// Encodes a UInt element.
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    /// Encodes a UInt8 element.
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    /// Encodes a UInt16 element.
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    /// Encodes a UInt32 element.
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    /// Encodes a UInt64 element.
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }
    /// Encodes a UInt128 element that fits in 64 bits.
    mutating func encode(_ value: UInt128) throws { try encodeInteger(value) }

    /// Encodes an element of any other type, with its own tag for Date, UUID,
    /// URL, Decimal, Data and dictionaries keyed by data.
    mutating func encode<T: Encodable>(_ value: T) throws {
        let mark = try encoding.beginElement(in: frameID)
        if encoding.encodeLeafValue(value) {
            count += 1
            return
        }
        try encoding.encodeChild(value, key: RecordCodingKey.index(count), path: path, frameID: frameID, mark: mark)
        count += 1
    }

    /// Starts a keyed container as the next element.
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let key = RecordCodingKey.index(count)
        return KeyedEncodingContainer(
            RecordKeyedEncodingContainer<NestedKey>(
                encoding: encoding, frameID: nestedFrame(.object), path: .explicit(codingPath + [key])))
    }

    /// Starts an unkeyed container as the next element.
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = RecordCodingKey.index(count)
        return RecordUnkeyedEncodingContainer(
            encoding: encoding, frameID: nestedFrame(.array), path: .explicit(codingPath + [key]))
    }

    /// Returns an encoder for the next element, written when it is first used.
    mutating func superEncoder() -> any Encoder {
        let key = RecordCodingKey.index(count)
        count += 1
        return RecordSuperEncoder(encoding: encoding, parentFrameID: frameID, key: nil, codingPath: codingPath + [key])
    }

    /// Writes an integer element of any width.
    private mutating func encodeInteger<I: FixedWidthInteger>(_ value: I) throws {
        let integer = try encoding.integer(value)
        try encoding.beginElement(in: frameID)
        encoding.write(integer)
        count += 1
    }

    /// Opens a nested container as the next element; returns 0 if that fails,
    /// so the container throws when used (container requests cannot throw).
    private mutating func nestedFrame(_ kind: ValueKind) -> Int {
        do {
            try encoding.beginElement(in: frameID)
        } catch {
            return 0
        }
        count += 1
        return encoding.openFrame(kind)
    }
}
