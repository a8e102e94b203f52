import Foundation
import LMDB
import Synchronization

/// Hands committed change sets to the container's subscribers, in commit order, without ever making a writer wait
/// for a subscriber.
///
/// Each subscriber has a buffer of `bufferSize` change sets. A subscriber that falls further behind misses the
/// newest change sets until it catches up; the next change set it receives says how many it missed
/// (``ChangeSet/missed``), so it can read the store afresh.
final class ChangePublisher: Sendable {
    private struct Subscriber {
        let entities: Set<String>?
        let continuation: AsyncStream<ChangeSet>.Continuation
        var missed = 0
    }

    private struct State {
        var subscribers: [UUID: Subscriber] = [:]
        /// The last transaction this process published or knows about.
        var lastTransactionID = 0
        var isPolling = false
        /// The change sets published since each open recording started, in commit order.
        var recordings: [UUID: [ChangeSet]] = [:]
    }

    private let state = Locked(State())
    /// The number of subscribers and open recordings, read on every write to decide whether to collect changes at
    /// all.
    private let count = Atomic(0)

    /// Whether anyone listens or records.
    var hasSubscribers: Bool {
        count.load(ordering: .relaxed) > 0
    }

    /// The last transaction published or known.
    var lastTransactionID: Int {
        state.withLock { $0.lastTransactionID }
    }

    /// A stream of the change sets that touch `entities` (all when `nil`), from now on.
    ///
    /// - Returns: The stream, and whether the caller must start polling for other processes' commits.
    func subscribe(entities: Set<String>?, bufferSize: Int, lastTransactionID: Int) -> (AsyncStream<ChangeSet>, Bool) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ChangeSet>.makeStream(bufferingPolicy: .bufferingOldest(bufferSize))
        let startPolling = state.withLock { state -> Bool in
            state.subscribers[id] = Subscriber(entities: entities, continuation: continuation)
            state.lastTransactionID = max(state.lastTransactionID, lastTransactionID)
            count.add(1, ordering: .relaxed)
            guard !state.isPolling else { return false }
            state.isPolling = true
            return true
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.state.withLock { state in
                if state.subscribers.removeValue(forKey: id) != nil { self.count.subtract(1, ordering: .relaxed) }
            }
        }
        return (stream, startPolling)
    }

    /// Starts keeping every change set published from now on, until ``finishRecording(_:)``: the container collects
    /// changes meanwhile, as it does for a subscriber.
    ///
    /// - Returns: The recording's ID.
    func startRecording() -> UUID {
        let id = UUID()
        state.withLock { state in
            state.recordings[id] = []
            count.add(1, ordering: .relaxed)
        }
        return id
    }

    /// Ends the recording `id`.
    ///
    /// - Returns: The change sets published since it started, in commit order.
    func finishRecording(_ id: UUID) -> [ChangeSet] {
        state.withLock { state in
            guard let recorded = state.recordings.removeValue(forKey: id) else { return [] }
            count.subtract(1, ordering: .relaxed)
            return recorded
        }
    }

    /// Delivers a committed change set to every subscriber it concerns, and to every recording.
    func publish(_ changes: ChangeSet) {
        state.withLock { state in
            state.lastTransactionID = max(state.lastTransactionID, changes.transactionID)
            for id in state.recordings.keys { state.recordings[id]?.append(changes) }
            for (id, subscriber) in state.subscribers {
                if let entities = subscriber.entities, !changes.isExternal, entities.isDisjoint(with: changes.entities)
                {
                    continue
                }
                var delivered = changes
                delivered.missed = subscriber.missed
                switch subscriber.continuation.yield(delivered) {
                case .enqueued: state.subscribers[id]?.missed = 0
                case .dropped: state.subscribers[id]?.missed += 1
                case .terminated: break
                @unknown default: break
                }
            }
        }
    }

    /// Whether polling must go on; clears the polling flag when nobody listens any more.
    func shouldKeepPolling() -> Bool {
        state.withLock { state in
            if state.subscribers.isEmpty { state.isPolling = false }
            return state.isPolling
        }
    }

    /// Ends every subscription, when the container closes.
    func finishAll() {
        let continuations = state.withLock { state in
            defer { state.subscribers.removeAll() }
            // Open recordings stay open: their owners finish them.
            count.store(state.recordings.count, ordering: .relaxed)
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }
}
