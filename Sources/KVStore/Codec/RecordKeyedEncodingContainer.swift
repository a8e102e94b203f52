/// The keyed container of the record encoder: writes an object whose keys are
/// field ids interned in the entity's ``FieldTable``.
struct RecordKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// The encoder that owns the buffer.
    let encoding: RecordEncoding
    /// The frame the container writes to; 0 for a container that throws on every use.
    let frameID: Int
    /// Where the container's coding path comes from.
    let path: RecordEncoding.ContainerPath

    /// The path of keys to this container.
    var codingPath: [any CodingKey] { encoding.path(path) }

    /// Encodes a null entry.
    mutating func encodeNil(forKey key: Key) throws {
        try encoding.beginField(key, in: frameID)
        encoding.writeNil()
    }

    /// Encodes a Boolean entry.
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try encoding.beginField(key, in: frameID)
        encoding.write(value)
    }

    /// Encodes a string entry.
    mutating func encode(_ value: String, forKey key: Key) throws {
        try encoding.beginField(key, in: frameID)
        encoding.write(value)
    }

    /// Encodes a Double entry.
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try encoding.beginField(key, in: frameID)
        encoding.write(value)
    }

    /// Encodes a Float entry.
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try encoding.beginField(key, in: frameID)
        encoding.write(value)
    }

    /// Encodes an Int entry.
    mutating func encode(_ value: Int, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes an Int8 entry.
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes an Int16 entry.
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes an Int32 entry.
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes an Int64 entry.
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes an Int128 entry that fits in 64 bits.
    mutating func encode(_ value: Int128, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes a UInt entry.
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes a UInt8 entry.
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes a UInt16 entry.
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes a UInt32 entry.
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes a UInt64 entry.
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    /// Encodes a UInt128 entry that fits in 64 bits.
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try encodeInteger(value, forKey: key) }

    /// Encodes an entry of any other type, with its own tag for Date, UUID,
    /// URL, Decimal, Data and dictionaries keyed by data.
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let mark = try encoding.beginField(key, in: frameID)
        if encoding.encodeLeafValue(value) { return }
        try encoding.encodeChild(value, key: key, path: path, frameID: frameID, mark: mark)
    }

    /// Starts a keyed container as the entry `key`.
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(
            RecordKeyedEncodingContainer<NestedKey>(
                encoding: encoding, frameID: nestedFrame(.object, forKey: key), path: .explicit(codingPath + [key])))
    }

    /// Starts an unkeyed container as the entry `key`.
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RecordUnkeyedEncodingContainer(
            encoding: encoding, frameID: nestedFrame(.array, forKey: key), path: .explicit(codingPath + [key]))
    }

    /// Returns an encoder for the entry `super`, written when it is first used.
    mutating func superEncoder() -> any Encoder {
        RecordSuperEncoder(
            encoding: encoding, parentFrameID: frameID, key: RecordCodingKey.super,
            codingPath: codingPath + [RecordCodingKey.super])
    }

    /// Returns an encoder for the entry `key`, written when it is first used.
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        RecordSuperEncoder(encoding: encoding, parentFrameID: frameID, key: key, codingPath: codingPath + [key])
    }

    /// Writes an integer entry of any width.
    func encodeInteger<I: FixedWidthInteger>(_ value: I, forKey key: Key) throws {
        let integer = try encoding.integer(value)
        try encoding.beginField(key, in: frameID)
        encoding.write(integer)
    }

    /// Opens a nested container as the entry `key`; returns 0 if that fails,
    /// so the container throws when used (container requests cannot throw).
    private func nestedFrame(_ kind: ValueKind, forKey key: Key) -> Int {
        do {
            try encoding.beginField(key, in: frameID)
        } catch {
            return 0
        }
        return encoding.openFrame(kind)
    }
}
