import Dispatch
import LMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGINT and SIGTERM as a request to stop, for the commands that run until stopped (`replicate-publish` and
/// `replicate-follow` without `--once`): the process no longer dies of them, and the command's loop waits on them
/// between its rounds of work, then ends its work cleanly.
///
/// The signals are ignored (their default action would end the process at once) and observed through dispatch
/// sources, as server-side Swift programs do, so no code of kvtool runs in a signal handler. ``cancel()`` puts the
/// previous dispositions back.
///
/// ```swift
/// let stop = StopSignals()
/// defer { stop.cancel() }
/// while stop.wait(for: .seconds(1)) == nil { /* report progress */ }
/// ```
final class StopSignals {
    /// The signals that ask to stop.
    static let stopping: [Int32] = [SIGINT, SIGTERM]

    private let queue = DispatchQueue(label: "kvtool.stop-signals")
    private let arrived = DispatchSemaphore(value: 0)
    /// The first signal that arrived.
    private let first = Locked<Int32?>(nil)
    private var sources: [any DispatchSourceSignal] = []
    private var previous: [(signal: Int32, handler: sighandler_t?)] = []

    /// Starts watching the signals; from now on they no longer end the process.
    init() {
        for number in Self.stopping {
            previous.append((number, signal(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            let first = self.first
            let arrived = self.arrived
            source.setEventHandler {
                let isFirst = first.withLock { received in
                    guard received == nil else { return false }
                    received = number
                    return true
                }
                if isFirst { arrived.signal() }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The signal that asked to stop, if one did.
    var received: Int32? {
        first.withLock { $0 }
    }

    /// Waits up to `duration` for a signal, and returns the one that asked to stop, if one did (now or before).
    func wait(for duration: Duration) -> Int32? {
        if let received { return received }
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        _ = arrived.wait(timeout: .now() + .nanoseconds(nanoseconds))
        return received
    }

    /// Stops watching, and gives the signals their previous dispositions back.
    func cancel() {
        for source in sources { source.cancel() }
        sources = []
        for (number, handler) in previous { signal(number, handler) }
        previous = []
    }

    /// The signal's name, `SIGINT` or `SIGTERM`, for messages.
    static func name(of number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(number)"
        }
    }
}
