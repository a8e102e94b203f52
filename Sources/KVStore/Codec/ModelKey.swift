import Foundation

/// A model's ID as the key of in-memory tables (a context's identity map and pending changes, the change log of a
/// write transaction), hashed in a few instructions instead of the standard library's SipHash over the UUID's 16
/// bytes.
///
/// A context looks models up by ID several times per object it inserts, fetches or saves; with `UUID` keys, hashing
/// was the largest cost a reference model added to a struct's (a lookup took about 33 ns, 7.6 ns with this key;
/// an insert that grows the table 119 ns, 33 ns with it). A write transaction that collects its changes (for
/// observers or the history) looks each saved model up once.
///
/// The hash is `Hashable`'s `_rawHashValue(seed:)`, which `Dictionary` and `Set` call with their per-instance seed:
/// a 64-by-64-bit multiplication of the two halves of the ID, each mixed with a key, folded to 64 bits (the mixing of
/// wyhash). One key is the table's seed, the other random per process, so that IDs an adversary chose to collide in
/// one process do not collide in another. `hash(into:)`, for other hashers, feeds the two halves to the hasher.
struct ModelKey: Hashable {
    /// The model's ID.
    let id: UUID

    /// The key of the model with `id`.
    @inline(__always)
    init(_ id: UUID) {
        self.id = id
    }

    /// A random key of this process, mixed into every hash.
    private static let processKey = UInt64.random(in: .min ... .max)

    @inline(__always)
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id.orderedHalves == rhs.id.orderedHalves
    }

    func hash(into hasher: inout Hasher) {
        let (high, low) = id.orderedHalves
        hasher.combine(high)
        hasher.combine(low)
    }

    @inline(__always)
    func _rawHashValue(seed: Int) -> Int {
        let (high, low) = id.orderedHalves
        let product = (high ^ UInt64(truncatingIfNeeded: seed) ^ 0x243F_6A88_85A3_08D3)
            .multipliedFullWidth(by: low ^ Self.processKey)
        return Int(truncatingIfNeeded: product.high ^ product.low)
    }
}
