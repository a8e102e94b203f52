import Foundation
import LMDB

extension UUID {
    /// A new time-ordered UUID (version 7): 48 bits of Unix time in milliseconds, then a counter and random bits.
    ///
    /// IDs made in one process are strictly increasing, also within one millisecond and when the clock steps back, so
    /// records inserted in creation order append at the right edge of the store's B+tree.
    public static func timeOrdered() -> UUID {
        TimeOrderedGenerator.shared.next()
    }
}

/// Hands out monotonic version 7 UUIDs (RFC 9562, method 3: a 12-bit counter in `rand_a`, reseeded every
/// millisecond, with the timestamp advanced when the counter overflows).
final class TimeOrderedGenerator: Sendable {
    static let shared = TimeOrderedGenerator()

    private struct State {
        var milliseconds: UInt64 = 0
        var counter: UInt16 = 0
    }

    private let state = Locked(State())

    func next() -> UUID {
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let (milliseconds, counter) = state.withLock { state -> (UInt64, UInt16) in
            if now > state.milliseconds {
                state.milliseconds = now
                // Start low in the 12-bit range so that many IDs fit in one millisecond before it overflows.
                state.counter = UInt16.random(in: 0..<0x400)
            } else if state.counter < 0xFFF {
                state.counter += 1
            } else {
                state.milliseconds += 1
                state.counter = 0
            }
            return (state.milliseconds, state.counter)
        }
        var random = SystemRandomNumberGenerator()
        let tail = random.next() as UInt64
        // Bytes 0-5: the milliseconds, big-endian; 6-7: version 7 and the counter; 8-15: random, with the variant.
        let byte = { (value: UInt64, shift: UInt64) in UInt8(truncatingIfNeeded: value >> shift) }
        let bytes: uuid_t = (
            byte(milliseconds, 40), byte(milliseconds, 32), byte(milliseconds, 24), byte(milliseconds, 16),
            byte(milliseconds, 8), byte(milliseconds, 0), 0x70 | UInt8(counter >> 8),
            UInt8(truncatingIfNeeded: counter),
            0x80 | (byte(tail, 0) & 0x3F), byte(tail, 8), byte(tail, 16), byte(tail, 24),
            byte(tail, 32), byte(tail, 40), byte(tail, 48), byte(tail, 56)
        )
        return UUID(uuid: bytes)
    }
}
