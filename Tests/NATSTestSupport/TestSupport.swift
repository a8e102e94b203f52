import Foundation
import NATS
@_exported import NATSServerProcess
import Synchronization
import Testing

extension Trait where Self == ConditionTrait {
    /// Runs the tests when `nats-server` is installed; skips them with a message otherwise, except under CI, where
    /// they run and fail, saying it is missing.
    public static var requiresNATSServer: Self {
        .enabled(
            if: NATSServer.executable != nil || NATSServer.isRequired,
            "nats-server is not installed: `make deps` installs it (set CI=1 to fail rather than skip)")
    }
}

/// Runs `body` on a thread of its own and waits for it without blocking a thread of the cooperative pool, for
/// blocking work that returns what the test then checks. Expectations belong outside `body`: on another thread,
/// Swift Testing cannot tell which test an issue belongs to.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Options for tests: short timeouts, fast reconnection, and the events recorded.
public func testOptions(events: EventLog? = nil) -> NATSConnection.Options {
    var options = NATSConnection.Options()
    options.connectTimeout = .seconds(2)
    options.connectDeadline = .seconds(5)
    options.reconnectWait = .milliseconds(50)
    options.maximumReconnectWait = .milliseconds(500)
    options.requestTimeout = .seconds(5)
    if let events { options.eventHandler = { events.record($0) } }
    return options
}

/// The events a connection reported, in order, with when each came.
public final class EventLog: Sendable {
    /// An empty log.
    public init() {}

    private let events = Mutex<[(event: NATSConnection.Event, time: ContinuousClock.Instant)]>([])

    /// Records an event.
    public func record(_ event: NATSConnection.Event) {
        let now = ContinuousClock.now
        events.withLock { $0.append((event, now)) }
    }

    /// Every event recorded, in order.
    public var all: [NATSConnection.Event] {
        events.withLock { $0.map(\.event) }
    }

    /// When the first event that `matches` selects came, if one did: measured on the connection's thread, so that a
    /// test waiting for a busy cooperative pool does not count the wait.
    public func time(of matches: (NATSConnection.Event) -> Bool) -> ContinuousClock.Instant? {
        events.withLock { $0.first { matches($0.event) }?.time }
    }

    /// Waits up to `timeout` for an event that `matches` selects.
    public func wait(timeout: Duration = .seconds(10), for matches: (NATSConnection.Event) -> Bool) async -> Bool {
        await eventually(timeout: timeout) { all.contains(where: matches) }
    }
}

/// Waits up to `timeout` for `condition` to hold, checking every 5 ms.
public func eventually(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try condition()
}

extension String {
    /// The string's UTF-8 bytes.
    public var bytes: [UInt8] { Array(utf8) }
}

/// Runs `body` on a serial dispatch queue of its own rather than Swift's cooperative pool, for a test that blocks the
/// thread it runs on (child processes, fetches that wait for a stream, threads it stops): on a two-core machine the
/// pool has two threads, which the async tests of every target share. The body stays in the test's task, so its
/// expectations are the test's.
public func offPool<T>(_ body: () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(DedicatedExecutor()) { try await body() }
}

/// A task executor on a serial dispatch queue, whose threads are not the cooperative pool's.
public final class DedicatedExecutor: TaskExecutor {
    /// An executor with a queue of its own.
    public init() {}

    /// Set on the executors' queues, for the test that checks where a body runs.
    public static let marker = DispatchSpecificKey<Bool>()

    private let queue: DispatchQueue = {
        let queue = DispatchQueue(label: "kvstore.tests.off-pool")
        queue.setSpecific(key: DedicatedExecutor.marker, value: true)
        return queue
    }()

    /// Runs `job` on the queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
