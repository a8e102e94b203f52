import Foundation

/// A type whose values can be the key of a secondary index.
///
/// A conforming type appends an order-preserving encoding of its value: for
/// any two values, comparing their encodings byte by byte (a shorter prefix
/// first) gives the same order as comparing the values. Every encoding is
/// self-delimiting and starts with a presence byte (`0x01` for a value,
/// `0x00` for nil), so compound keys are concatenations of components and an
/// optional attribute encodes like a non-optional one, with nil first.
///
/// The integer types, `Float`, `Double`, `Bool`, `String`, `UUID`, `Date` and
/// `Optional` of any of them conform. An enum with raw values gets its raw
/// value's encoding by declaring the conformance:
///
/// ```swift
/// enum Status: String, Codable, IndexKeyEncodable {
///     case open, done
/// }
/// ```
///
/// Note that a raw-value enum sorts by its raw values, not by case order.
public protocol IndexKeyEncodable: SendableMetatype {
    /// Appends this value's order-preserving encoding, presence byte first, to `bytes`.
    func appendIndexKey(to bytes: inout [UInt8])
}

extension IndexKeyEncodable where Self: RawRepresentable, RawValue: IndexKeyEncodable {
    /// Appends the encoding of the raw value.
    public func appendIndexKey(to bytes: inout [UInt8]) {
        rawValue.appendIndexKey(to: &bytes)
    }
}

extension Optional: IndexKeyEncodable where Wrapped: IndexKeyEncodable {
    /// Appends the wrapped value's encoding, or the single byte `0x00` for nil, which sorts first.
    public func appendIndexKey(to bytes: inout [UInt8]) {
        switch self {
        case .none: bytes.append(IndexKey.absent)
        case .some(let wrapped): wrapped.appendIndexKey(to: &bytes)
        }
    }
}

extension Int: IndexKeyEncodable {
    /// Appends the value as a signed 64-bit integer: big-endian with the sign bit flipped.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendSigned(Int64(self), to: &bytes) }
}

extension Int8: IndexKeyEncodable {
    /// Appends the value as a signed 64-bit integer: big-endian with the sign bit flipped.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendSigned(Int64(self), to: &bytes) }
}

extension Int16: IndexKeyEncodable {
    /// Appends the value as a signed 64-bit integer: big-endian with the sign bit flipped.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendSigned(Int64(self), to: &bytes) }
}

extension Int32: IndexKeyEncodable {
    /// Appends the value as a signed 64-bit integer: big-endian with the sign bit flipped.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendSigned(Int64(self), to: &bytes) }
}

extension Int64: IndexKeyEncodable {
    /// Appends the value big-endian with the sign bit flipped.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendSigned(self, to: &bytes) }
}

extension UInt: IndexKeyEncodable {
    /// Appends the value as an unsigned 64-bit integer, big-endian.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendUnsigned(UInt64(self), to: &bytes) }
}

extension UInt8: IndexKeyEncodable {
    /// Appends the value as an unsigned 64-bit integer, big-endian.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendUnsigned(UInt64(self), to: &bytes) }
}

extension UInt16: IndexKeyEncodable {
    /// Appends the value as an unsigned 64-bit integer, big-endian.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendUnsigned(UInt64(self), to: &bytes) }
}

extension UInt32: IndexKeyEncodable {
    /// Appends the value as an unsigned 64-bit integer, big-endian.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendUnsigned(UInt64(self), to: &bytes) }
}

extension UInt64: IndexKeyEncodable {
    /// Appends the value big-endian.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendUnsigned(self, to: &bytes) }
}

extension Double: IndexKeyEncodable {
    /// Appends the bit pattern big-endian, inverted for negatives and with the
    /// sign bit set otherwise; `-0.0` encodes as `0.0`, and every NaN as one NaN, after infinity.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendDouble(self, to: &bytes) }
}

extension Float: IndexKeyEncodable {
    /// Appends the value converted exactly to `Double`, so Float and Double attributes share an encoding.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendDouble(Double(self), to: &bytes) }
}

extension Bool: IndexKeyEncodable {
    /// Appends `0x00` for false and `0x01` for true, after the presence byte.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendBool(self, to: &bytes) }
}

extension String: IndexKeyEncodable {
    /// Appends the NFC-normalized UTF-8, with `0x00` escaped as `0x00 0xFF`,
    /// then the terminator `0x00 0x01`, so a string sorts before its extensions.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendString(self, to: &bytes) }
}

extension UUID: IndexKeyEncodable {
    /// Appends the UUID's 16 bytes, which sort time-ordered (version 7) UUIDs by time.
    public func appendIndexKey(to bytes: inout [UInt8]) { IndexKey.appendUUID(self, to: &bytes) }
}

extension Date: IndexKeyEncodable {
    /// Appends `timeIntervalSinceReferenceDate` encoded as a `Double`.
    public func appendIndexKey(to bytes: inout [UInt8]) {
        IndexKey.appendDouble(timeIntervalSinceReferenceDate, to: &bytes)
    }
}
