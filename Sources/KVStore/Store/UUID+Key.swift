import Foundation

/// Runs `body` with the 16 bytes of a UUID, the key of its record.
@inline(__always)
func withKey<R>(_ id: UUID, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: id.uuid, body)
}

extension UUID {
    /// Whether the UUID's bytes sort before `other`'s, which is the order of record keys.
    func isOrdered(before other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { lhs in
            withUnsafeBytes(of: other.uuid) { rhs in
                // Both buffers hold the 16 bytes of a uuid_t, so their base addresses are never nil.
                guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return false }
                return memcmp(left, right, 16) < 0
            }
        }
    }
}

extension UUID {
    /// A UUID from the first 16 bytes of `bytes`; zero-filled if there are fewer.
    init(bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 16 else {
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
            self.init(uuid: value)
            return
        }
        self.init(loading: bytes.baseAddress.unsafelyUnwrapped)
    }

    /// A UUID from the 16 bytes at `address`, which need no alignment.
    ///
    /// A UUID is its 16 bytes (its one stored property is the `uuid_t` tuple), so they are loaded as two integers
    /// and reinterpreted: `init(uuid:)` takes the tuple as sixteen separate arguments, which costs several times more
    /// where records and index keys are read by the thousand. `unsafeBitCast` checks that the sizes agree.
    @inline(__always)
    init(loading address: UnsafeRawPointer) {
        self = unsafeBitCast(address.loadUnaligned(as: (UInt64, UInt64).self), to: UUID.self)
    }
}
