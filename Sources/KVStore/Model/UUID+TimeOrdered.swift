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
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
            raw[6] = 0x70 | UInt8(counter >> 8)
            raw[7] = UInt8(truncatingIfNeeded: counter)
            for index in 8..<16 { raw[index] = UInt8(truncatingIfNeeded: tail >> (8 * UInt64(index - 8))) }
            raw[8] = 0x80 | (raw[8] & 0x3F)  // RFC 9562 variant
        }
        return UUID(uuid: bytes)
    }
}
