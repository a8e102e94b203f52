/// The single value container of the record encoder.
struct RecordSingleValueEncodingContainer: SingleValueEncodingContainer {
    /// Where the single value goes.
    enum Slot {
        /// The value being encoded, identified by its level.
        case level(Int)
        /// The value of a super encoder, written into its parent container on first use.
        case superValue(RecordSuperEncoder)
    }

    /// The encoder that owns the buffer.
    let encoding: RecordEncoding
    /// Where the value goes.
    let slot: Slot
    /// Where the container's coding path comes from.
    let path: RecordEncoding.ContainerPath

    /// The path of keys to this container.
    var codingPath: [any CodingKey] { encoding.path(path) }

    /// Encodes null.
    mutating func encodeNil() throws {
        try encoding.beginSingleValue(slot)
        encoding.writeNil()
    }

    /// Encodes a Boolean.
    mutating func encode(_ value: Bool) throws {
        try encoding.beginSingleValue(slot)
        encoding.write(value)
    }

    /// Encodes a string.
    mutating func encode(_ value: String) throws {
        try encoding.beginSingleValue(slot)
        encoding.write(value)
    }

    /// Encodes a Double.
    mutating func encode(_ value: Double) throws {
        try encoding.beginSingleValue(slot)
        encoding.write(value)
    }

    /// Encodes a Float.
    mutating func encode(_ value: Float) throws {
        try encoding.beginSingleValue(slot)
        encoding.write(value)
    }

    /// Encodes an Int.
    mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    /// Encodes an Int8.
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    /// Encodes an Int16.
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    /// Encodes an Int32.
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    /// Encodes an Int64.
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    /// Encodes an Int128 that fits in 64 bits.
    mutating func encode(_ value: Int128) throws { try encodeInteger(value) }
    /// Encodes a UInt.
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    /// Encodes a UInt8.
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    /// Encodes a UInt16.
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    /// Encodes a UInt32.
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    /// Encodes a UInt64.
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }
    /// Encodes a UInt128 that fits in 64 bits.
    mutating func encode(_ value: UInt128) throws { try encodeInteger(value) }

    /// Encodes a value of any other type in place of this one, with its own
    /// tag for Date, UUID, URL, Decimal, Data and dictionaries keyed by data.
    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoding.encodeSingleValue(value, slot: slot, path: path)
    }

    /// Writes an integer of any width.
    private func encodeInteger<I: FixedWidthInteger>(_ value: I) throws {
        let integer = try encoding.integer(value)
        try encoding.beginSingleValue(slot)
        encoding.write(integer)
    }
}
