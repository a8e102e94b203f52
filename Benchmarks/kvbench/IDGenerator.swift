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
    private var millisecond: UInt64 = 1_735_689_600_000
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
            // 48-bit timestamp | version 7 | 12-bit counter.
            high = millisecond << 16 | 0x7000 | counter
            counter += 1
            if counter == 1_000 {
                counter = 0
                millisecond += 1
            }
        case .random:
            high = random.next() & ~0xF000 | 0x4000
        }
        // Variant 0b10 in the top bits of the low half.
        let low = bits & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        high = high.bigEndian
        let lowBigEndian = low.bigEndian
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: high, as: UInt64.self)
            bytes.storeBytes(of: lowBigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: uuid)
    }
}
