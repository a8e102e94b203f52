import Dispatch

/// Runs the module's blocking calls for its `async` counterparts, off Swift's cooperative thread pool.
///
/// A blocking call on the cooperative pool would hold one of its few threads (one per core) for as long as it
/// waits for the server. This queue is a concurrent dispatch queue of its own, which Dispatch serves from its
/// overcommitting threads, so waiting calls do not starve tasks.
enum Blocking {
    private static let queue = DispatchQueue(label: "NATS.blocking", attributes: .concurrent)

    /// Runs `body` on the queue and resumes with what it returned or threw.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
