/// Little-endian reads from a window of a byte array, which return `nil` instead of trapping past its end.
struct ByteWindow {
    let bytes: [UInt8]
    /// Where the window starts in `bytes`.
    let base: Int
    /// The window's length.
    let count: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        base = 0
        count = bytes.count
    }

    private init(bytes: [UInt8], base: Int, count: Int) {
        self.bytes = bytes
        self.base = base
        self.count = count
    }

    /// Whether `length` bytes at `offset` lie inside the window.
    func contains(_ offset: Int, _ length: Int) -> Bool {
        offset >= 0 && length >= 0 && length <= count && offset <= count - length
    }

    /// The window of `length` bytes at `offset`, or `nil` when it does not fit.
    func window(_ offset: Int, _ length: Int) -> ByteWindow? {
        guard contains(offset, length) else { return nil }
        return ByteWindow(bytes: bytes, base: base + offset, count: length)
    }

    /// The `length` bytes at `offset`, or `nil` when they do not fit.
    func slice(_ offset: Int, _ length: Int) -> ArraySlice<UInt8>? {
        guard contains(offset, length) else { return nil }
        return bytes[(base + offset)..<(base + offset + length)]
    }

    private func integer(_ offset: Int, _ length: Int) -> UInt64? {
        guard contains(offset, length) else { return nil }
        var value: UInt64 = 0
        for index in stride(from: length - 1, through: 0, by: -1) {
            value = value << 8 | UInt64(bytes[base + offset + index])
        }
        return value
    }

    func u16(_ offset: Int) -> UInt16? { integer(offset, 2).map { UInt16(truncatingIfNeeded: $0) } }
    func u32(_ offset: Int) -> UInt32? { integer(offset, 4).map { UInt32(truncatingIfNeeded: $0) } }
    func u64(_ offset: Int) -> UInt64? { integer(offset, 8) }
}
