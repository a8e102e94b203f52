/// Writing the values that containers encode directly, without a nested `encode(to:)`.
extension RecordEncoding {
    /// Appends a null value.
    @inline(__always)
    func writeNil() {
        bytes.append(ValueKind.null.rawValue)
    }

    /// Appends a Boolean as its tag alone.
    @inline(__always)
    func write(_ value: Bool) {
        bytes.append(value ? ValueKind.true.rawValue : ValueKind.false.rawValue)
    }

    /// Appends a string.
    @inline(__always)
    func write(_ value: String) {
        bytes.appendTagged(.string, text: value)
    }

    /// Appends a Double as its little-endian bit pattern.
    @inline(__always)
    func write(_ value: Double) {
        bytes.appendTagged(.double, littleEndian: value.bitPattern, count: 8)
    }

    /// Appends a Float as its little-endian bit pattern.
    @inline(__always)
    func write(_ value: Float) {
        bytes.appendTagged(.float, littleEndian: UInt64(value.bitPattern), count: 4)
    }

    /// Returns the tag and varint payload for an integer of any width.
    ///
    /// - Throws: `EncodingError.invalidValue` for a 128-bit integer outside the 64-bit range.
    @inline(__always)
    func integer<I: FixedWidthInteger>(_ value: I) throws -> (kind: ValueKind, payload: UInt64) {
        if I.isSigned {
            guard let value = Int64(exactly: value) else { throw outOfRange(value) }
            return (.int, RecordFormat.zigzag(value))
        } else {
            guard let value = UInt64(exactly: value) else { throw outOfRange(value) }
            return (.uint, value)
        }
    }

    /// Appends an integer returned by ``integer(_:)``.
    @inline(__always)
    func write(_ integer: (kind: ValueKind, payload: UInt64)) {
        bytes.appendTagged(integer.kind, varint: integer.payload)
    }

    /// The error for an integer that does not fit in 64 bits.
    private func outOfRange<I: FixedWidthInteger>(_ value: I) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "\(value) does not fit in 64 bits, the widest integer a record stores."))
    }
}
