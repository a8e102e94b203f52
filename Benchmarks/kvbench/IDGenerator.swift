import Foundation
import TestSupport

/// How record IDs are generated, which decides where new records land in the B+tree.
enum IDOrder: String, Codable, CaseIterable, Sendable {
    /// UUID version 7: a 48-bit millisecond timestamp, a 12-bit counter and random bits, strictly increasing, so
    /// new records append at the right edge of the tree. KVStore's default.
    case timeOrdered = "time-ordered"
    /// UUID version 4: random, so new records land anywhere in the tree.
    case random

    /// A short label for tables and charts.
    var label: String {
        switch self {
        case .timeOrdered: "v7"
        case .random: "v4"
        }
    }
}

/// Generates the IDs of one kind of record, deterministically from a seed.
///
/// Time-ordered IDs start at 2025-01-01T00:00:00Z and advance one millisecond every 1,000 IDs, with the counter in
/// the 12 bits after the version, so each ID is greater than the one before, as with a fast real generator.
struct IDGenerator {
    /// The order of the IDs.
    let order: IDOrder
    private var random: SplitMix64
    private var millisecond = Self.firstMillisecond
    private var counter: UInt64 = 0

    /// Creates a generator of IDs in `order`.
    init(order: IDOrder, seed: UInt64) {
        self.order = order
        random = SplitMix64(seed: seed)
    }

    /// The next ID.
    mutating func next() -> UUID {
        let bits = random.next()
        var high: UInt64
        switch order {
        case .timeOrdered:
            high = Self.timeOrderedHigh(millisecond: millisecond, counter: counter)
            counter += 1
            if counter == 1_000 {
                counter = 0
                millisecond += 1
            }
        case .random:
            high = random.next() & ~0xF000 | 0x4000
        }
        return Self.uuid(high: high, bits: bits)
    }

    /// The time-ordered ID that the `index`th call of ``next()`` (from 0) returns on a new generator with `seed`,
    /// made without the calls before it: the generator's `k`th random number depends only on its seed and `k`, and
    /// its time on `index`. A series of millions of projects then keeps no list of their IDs.
    static func timeOrderedID(at index: Int, seed: UInt64) -> UUID {
        // SplitMix64 adds its constant to the state before each number: the `index`th number is the first of a
        // generator whose seed is `index` steps along.
        var random = SplitMix64(seed: seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        let high = timeOrderedHigh(
            millisecond: firstMillisecond + UInt64(index / 1_000), counter: UInt64(index % 1_000))
        return uuid(high: high, bits: random.next())
    }

    /// The time of the first time-ordered ID: 2025-01-01T00:00:00Z, in milliseconds since 1970.
    private static let firstMillisecond: UInt64 = 1_735_689_600_000

    /// The high half of a time-ordered ID: 48-bit timestamp | version 7 | 12-bit counter.
    private static func timeOrderedHigh(millisecond: UInt64, counter: UInt64) -> UInt64 {
        millisecond << 16 | 0x7000 | counter
    }

    /// The ID of `high` and the random `bits`, with the variant 0b10 in the top bits of the low half.
    private static func uuid(high: UInt64, bits: UInt64) -> UUID {
        let low = bits & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        let highBigEndian = high.bigEndian
        let lowBigEndian = low.bigEndian
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: highBigEndian, as: UInt64.self)
            bytes.storeBytes(of: lowBigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: uuid)
    }
}
