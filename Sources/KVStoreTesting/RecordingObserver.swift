import Foundation
import KVStore
import LMDB

/// A container observer that records every commit and every failure, for a test's assertions.
///
/// Pass one to a container, run the code under test, then look at what it recorded. It is thread-safe. The container
/// calls its hooks after each commit, outside its write lock, so the ``events`` of writers racing each other may come
/// in another order than their commits; ``commits`` are in commit order.
///
/// ```swift
/// let recorder = RecordingObserver()
/// let container = try ModelContainer.testing(Project.self, observer: recorder)
/// // ... the code under test ...
/// #expect(recorder.commits.count == 1)
/// #expect(recorder.failures.isEmpty)
/// ```
public final class RecordingObserver: ModelContainerObserver {
    /// Something the container did.
    public enum Event: Sendable, CustomStringConvertible {
        /// The container opened its store.
        case opened
        /// A write transaction committed these changes.
        case committed(ChangeSet)
        /// An operation failed.
        case failed(Failure)
        /// The container closed its store.
        case closed

        /// The event in words, as in `committed 2 changes` or `failed write: <error>`.
        public var description: String {
            switch self {
            case .opened: "opened"
            case .committed(let changes): "committed \(changes.changes.count) change(s)"
            case .failed(let failure): "failed \(failure.operation): \(failure.error)"
            case .closed: "closed"
            }
        }
    }

    /// An operation of the container that failed.
    public struct Failure: Sendable {
        /// The error the operation threw, as the container reported it (a `KVStoreError` for the store's errors).
        public let error: any Error
        /// `read` or `write`.
        public let operation: String
        /// The entity concerned, when known.
        public let entity: String?

        /// The error as a `KVStoreError`, or `nil` when it is another error (one the code under test threw).
        public var storeError: KVStoreError? { error as? KVStoreError }
    }

    // Locked is Sendable whatever it holds; every access goes through its lock.
    private let recorded = Locked<[Event]>([])

    /// Creates an observer that has recorded nothing yet.
    public init() {}

    /// Everything recorded so far, in the order the container reported it.
    public var events: [Event] {
        recorded.withLock { $0 }
    }

    /// The change sets of the commits recorded so far, in commit order.
    public var commits: [ChangeSet] {
        events.compactMap { event in
            if case .committed(let changes) = event { changes } else { nil }
        }
        .sorted { $0.transactionID < $1.transactionID }
    }

    /// Every model's change in the commits recorded so far, in commit order: the `ChangeSet.changes` of
    /// ``commits`` one after the other.
    public var changes: [ChangeSet.Change] {
        commits.flatMap(\.changes)
    }

    /// The failures recorded so far, in order.
    public var failures: [Failure] {
        events.compactMap { event in
            if case .failed(let failure) = event { failure } else { nil }
        }
    }

    /// Forgets what was recorded so far, such as the commit of a container's fixtures.
    public func removeAll() {
        recorded.withLock { $0.removeAll() }
    }

    /// Records that the container opened its store.
    public func containerDidOpen(_ container: ModelContainer) {
        recorded.withLock { $0.append(.opened) }
    }

    /// Records that the container closed its store.
    public func containerDidClose(_ container: ModelContainer) {
        recorded.withLock { $0.append(.closed) }
    }

    /// Records the commit's changes.
    public func container(_ container: ModelContainer, didCommit changes: ChangeSet, duration: Duration) {
        recorded.withLock { $0.append(.committed(changes)) }
    }

    /// Records the failure.
    public func container(_ container: ModelContainer, didFail error: any Error, operation: String, entity: String?) {
        recorded.withLock { $0.append(.failed(Failure(error: error, operation: operation, entity: entity))) }
    }
}
