import Foundation

/// Lends the 16 bytes of `id`, the key of its record, to `body` as a view that must not outlive the call.
@inline(__always)
func withKey<R, E: Error>(_ id: UUID, _ body: (BorrowedBytes) throws(E) -> R) throws(E) -> R {
    try withBorrowedBytes(of: id.uuid, body)
}

extension UUID {
    /// Whether the UUID's bytes sort before `other`'s, which is the order of record keys.
    @inline(__always)
    func isOrdered(before other: UUID) -> Bool {
        orderedHalves < other.orderedHalves
    }

    /// The UUID's bytes as two big-endian integers, which compare as the bytes do (a sort of many IDs compares
    /// integers rather than bytes).
    @inline(__always)
    var orderedHalves: (UInt64, UInt64) {
        let bytes = uuid
        let high =
            UInt64(bytes.0) << 56 | UInt64(bytes.1) << 48 | UInt64(bytes.2) << 40 | UInt64(bytes.3) << 32
            | UInt64(bytes.4) << 24 | UInt64(bytes.5) << 16 | UInt64(bytes.6) << 8 | UInt64(bytes.7)
        let low =
            UInt64(bytes.8) << 56 | UInt64(bytes.9) << 48 | UInt64(bytes.10) << 40 | UInt64(bytes.11) << 32
            | UInt64(bytes.12) << 24 | UInt64(bytes.13) << 16 | UInt64(bytes.14) << 8 | UInt64(bytes.15)
        return (high, low)
    }

    /// A UUID from the first 16 bytes of `bytes`; zero-filled if there are fewer.
    @inline(__always)
    init(bytes: BorrowedBytes) {
        guard bytes.count >= 16 else {
            var padded = Array(bytes)
            padded.append(contentsOf: repeatElement(0, count: 16 - padded.count))
            self = padded.withBorrowedBytes { $0.loadUUID() }
            return
        }
        self = bytes.loadUUID()
    }
}
