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
        withKey(self) { lhs in withKey(other) { rhs in lhs.compare(rhs) < 0 } }
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
