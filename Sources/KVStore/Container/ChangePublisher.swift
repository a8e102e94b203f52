import Foundation
import LMDB
import Synchronization

/// Hands committed change sets to the container's subscribers, in commit order, without ever making a writer wait
/// for a subscriber.
///
/// Each subscriber has a buffer of `bufferSize` change sets. Without history, a subscriber that falls further
/// behind misses the newest change sets until it catches up; the next change set it receives says how many it missed
/// (``ChangeSet/missed``), so it can read the store afresh.
///
/// When the store records history, change sets go out in the order of the history's entries: the publisher keeps a
/// cursor, the last position delivered, and a local commit right after it goes out at once, while one after entries
/// of other processes not read yet waits for the container's poll, which delivers the entries after the cursor in
/// order. A subscriber whose buffer is full then falls behind instead of missing anything: it gets nothing new until
/// the poll has given it, from the history, every entry after the last one it took (``catchUpCandidates()``,
/// ``catchUp(_:from:entries:pruned:origin:)``); only entries the history pruned meanwhile count as missed.
final class ChangePublisher: Sendable {
    private struct Subscriber {
        let entities: Set<String>?
        let continuation: AsyncStream<ChangeSet>.Continuation
        var missed = 0
        /// The history position after which this subscriber catches up from the history, while it is behind.
        var behindAfter: UInt64?

        /// Whether `changes` concern the subscriber.
        func wants(_ changes: ChangeSet) -> Bool {
            guard let entities, changes.isContentKnown else { return true }
            return !entities.isDisjoint(with: changes.entities)
        }
    }

    /// The last history entry delivered to the subscribers that are not behind, and the history it is of.
    struct HistoryCursor: Sendable, Equatable {
        var storeID: UUID
        var position: UInt64
    }

    private struct State {
        var subscribers: [UUID: Subscriber] = [:]
        /// The last transaction this process published or knows about.
        var lastTransactionID = 0
        var isPolling = false
        /// The change sets published since each open recording started, in commit order.
        var recordings: [UUID: [ChangeSet]] = [:]
        /// Where delivery stands in the store's history, while it records one and anyone subscribes.
        var history: HistoryCursor?
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

    /// The history cursor, while delivery follows the history.
    var historyCursor: HistoryCursor? {
        state.withLock { $0.history }
    }

    /// A stream of the change sets that touch `entities` (all when `nil`), from now on.
    ///
    /// - Parameter historyStart: The store's last history entry, when it records history: delivery follows the
    ///   history from there, unless it already does.
    /// - Returns: The stream, and whether the caller must start polling for other processes' commits.
    func subscribe(
        entities: Set<String>?, bufferSize: Int, lastTransactionID: Int, historyStart: HistoryCursor?
    ) -> (AsyncStream<ChangeSet>, Bool) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ChangeSet>.makeStream(bufferingPolicy: .bufferingOldest(bufferSize))
        let startPolling = state.withLock { state -> Bool in
            state.subscribers[id] = Subscriber(entities: entities, continuation: continuation)
            state.lastTransactionID = max(state.lastTransactionID, lastTransactionID)
            if state.history == nil || state.subscribers.count == 1 { state.history = historyStart }
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

    /// Hands the change set of a commit of this container to every recording, and to every subscriber it concerns;
    /// when delivery follows the history and entries of other processes before it were not delivered yet, the
    /// subscribers get it from the container's next poll instead, after those.
    func publish(_ changes: ChangeSet) {
        state.withLock { state in
            state.lastTransactionID = max(state.lastTransactionID, changes.transactionID)
            for id in state.recordings.keys { state.recordings[id]?.append(changes) }
            if let token = changes.historyToken, let cursor = state.history, cursor.storeID == token.storeID {
                guard token.position == cursor.position + 1 else { return }
                state.history?.position = token.position
            }
            Self.deliver(changes, in: &state)
        }
    }

    /// Delivers the history entries after the cursor to the subscribers, in order (entries of this container
    /// included: ``publish(_:)`` left them to this), and notes `lastTransactionID` as known.
    func publishHistory(_ entries: [HistoryEntry], origin: UInt64, lastTransactionID: Int?) {
        state.withLock { state in
            for entry in entries {
                guard let cursor = state.history, cursor.storeID == entry.token.storeID,
                    entry.token.position > cursor.position
                else { continue }
                state.history?.position = entry.token.position
                state.lastTransactionID = max(state.lastTransactionID, entry.transactionID)
                Self.deliver(ChangeSet(entry, origin: origin), in: &state)
            }
            if let lastTransactionID { state.lastTransactionID = max(state.lastTransactionID, lastTransactionID) }
        }
    }

    /// Makes delivery follow the history from `cursor` on, or stop following it (`nil`): the history was switched
    /// on or off, or pruned past the cursor. Subscribers behind lose what they had not taken: they count it as
    /// missed.
    func resetHistory(to cursor: HistoryCursor?) {
        state.withLock { state in
            guard state.history != cursor else { return }
            state.history = cursor
            for (id, subscriber) in state.subscribers where subscriber.behindAfter != nil {
                state.subscribers[id]?.behindAfter = nil
                state.subscribers[id]?.missed += 1
            }
        }
    }

    /// Yields `changes` to each subscriber it concerns that is not behind; with history, a full buffer puts the
    /// subscriber behind, from the entry before this one, instead of counting a miss.
    private static func deliver(_ changes: ChangeSet, in state: inout State) {
        for (id, subscriber) in state.subscribers where subscriber.behindAfter == nil && subscriber.wants(changes) {
            var delivered = changes
            delivered.missed = subscriber.missed
            switch subscriber.continuation.yield(delivered) {
            case .enqueued: state.subscribers[id]?.missed = 0
            case .dropped:
                if let token = changes.historyToken, state.history?.storeID == token.storeID {
                    state.subscribers[id]?.behindAfter = token.position - 1
                } else {
                    state.subscribers[id]?.missed += 1
                }
            case .terminated: break
            @unknown default: break
            }
        }
    }

    /// The subscribers behind, with the position after which each catches up, and the cursor they catch up to.
    func catchUpCandidates() -> (subscribers: [(id: UUID, after: UInt64)], cursor: HistoryCursor?) {
        state.withLock { state in
            let behind = state.subscribers.compactMap { id, subscriber in
                subscriber.behindAfter.map { (id, $0) }
            }
            return (behind, state.history)
        }
    }

    /// Gives the subscriber `id`, behind after `after`, the history `entries` that follow (read after `after`, or
    /// after the last pruned one when `pruned` entries after `after` are gone), until its buffer is full; once it
    /// took everything up to the cursor, it is live again.
    func catchUp(_ id: UUID, from after: UInt64, entries: [HistoryEntry], pruned: Int, origin: UInt64) {
        state.withLock { state in
            guard var subscriber = state.subscribers[id], subscriber.behindAfter == after, let cursor = state.history
            else { return }
            subscriber.missed += pruned
            var position = after + UInt64(pruned)
            for entry in entries where entry.token.position > position && entry.token.position <= cursor.position {
                let changes = ChangeSet(entry, origin: origin)
                if subscriber.wants(changes) {
                    var delivered = changes
                    delivered.missed = subscriber.missed
                    guard case .enqueued = subscriber.continuation.yield(delivered) else { break }
                    subscriber.missed = 0
                }
                position = entry.token.position
            }
            subscriber.behindAfter = position >= cursor.position ? nil : position
            state.subscribers[id] = subscriber
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
