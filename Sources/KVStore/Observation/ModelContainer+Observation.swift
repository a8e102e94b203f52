import Foundation
import LMDB

extension ModelContainer {
    /// How often the container looks for commits made by other processes while anyone subscribes: changes another
    /// process commits reach subscribers within this delay (plus the time to read the store).
    public static let externalChangePollingInterval: Duration = .milliseconds(100)

    /// Every committed change set, from now on, in commit order. See ``changes(for:bufferSize:)``.
    public var changes: AsyncStream<ChangeSet> {
        changes(for: nil)
    }

    /// The committed change sets that touch the given model types (all when `nil`), from now on, in commit order.
    ///
    /// Change sets are delivered after the commit; a writer never waits for a subscriber. Each subscriber buffers
    /// `bufferSize` change sets. Commits of other processes (and of other containers of the store) arrive within
    /// ``externalChangePollingInterval`` with ``ChangeSet/isExternal`` set.
    ///
    /// When the store records history (``enableHistory(retention:)``), change sets come in the order of its entries,
    /// each with its ``ChangeSet/historyToken``; those of other processes carry their IDs and kinds as local ones
    /// do; and a subscriber that falls more than `bufferSize` behind misses nothing: it catches up from the history,
    /// in order, as it drains its buffer (only entries that the retention pruned before it caught up count as
    /// ``ChangeSet/missed``). Without history, a subscriber that falls behind misses the newest change sets until
    /// it catches up, and the next change set it receives counts them in ``ChangeSet/missed``; commits of other
    /// processes arrive without IDs (``ChangeSet/isContentKnown`` is false).
    ///
    /// The stream ends when the container closes; ending its iteration (or cancelling the task) unsubscribes.
    ///
    /// ```swift
    /// for await change in container.changes(for: [Task.self]) {
    ///     print(change.inserted["Task"]?.count ?? 0, "tasks inserted")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - types: The model types to hear about, or `nil` for all.
    ///   - bufferSize: How many undelivered change sets a subscriber may hold.
    public func changes(for types: [any StoredModel.Type]?, bufferSize: Int = 1024) -> AsyncStream<ChangeSet> {
        let entities = types.map { Set($0.map { entityName(of: $0) }) }
        let last = (try? environment.info().lastTransactionID) ?? 0
        let (stream, startPolling) = publisher.subscribe(
            entities: entities, bufferSize: max(bufferSize, 1), lastTransactionID: last,
            historyStart: try? historyCursorNow())
        if startPolling { pollExternalChanges() }
        return stream
    }

    /// Runs `body` and returns, with what it returns, the change sets of the commits this container made while it ran,
    /// in commit order (those of other tasks and threads too). Changes are collected meanwhile even when nothing
    /// else observes the container. For KVStoreTesting's expectations.
    ///
    /// - Throws: What `body` throws.
    package func recordingChanges<R>(_ body: () throws -> R) rethrows -> (result: R, changes: [ChangeSet]) {
        let recording = publisher.startRecording()
        do {
            let result = try body()
            return (result, publisher.finishRecording(recording))
        } catch {
            _ = publisher.finishRecording(recording)
            throw error
        }
    }

    /// Runs `body` and returns, with what it returns, the change sets of the commits this container made while it ran,
    /// as the synchronous `recordingChanges(_:)` does. It runs on the caller's actor, so `body` need not be `Sendable`.
    ///
    /// - Throws: What `body` throws.
    package func recordingChanges<R>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> R
    ) async rethrows -> (result: R, changes: [ChangeSet]) {
        let recording = publisher.startRecording()
        do {
            let result = try await body()
            return (result, publisher.finishRecording(recording))
        } catch {
            _ = publisher.finishRecording(recording)
            throw error
        }
    }

    /// Polls the store while anyone subscribes, and publishes the commits this container did not: from the history
    /// when the store records one, as change sets without content otherwise; then lets the subscribers that fell
    /// behind catch up from the history.
    private func pollExternalChanges() {
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: Self.externalChangePollingInterval)
                guard let self, self.publisher.shouldKeepPolling(), !self.environment.isClosed else { return }
                // Under the write lock, a commit of this container is either published already or not begun.
                self.writeOrder.withLock { _ in self.publishExternalChanges() }
                self.catchUpSubscribers()
            }
        }
    }

    /// The most history entries one poll reads, for delivery or for one subscriber's catch-up: the rest come at the
    /// next polls, so that a poll never holds the write order long.
    private static let historyEntriesPerPoll = 4_096

    /// Publishes what other processes committed since the last poll.
    private func publishExternalChanges() {
        let last = try? environment.info().lastTransactionID
        if (try? publishHistory(lastTransactionID: last)) == true { return }
        guard let last, last > publisher.lastTransactionID else { return }
        publisher.publish(ChangeSet(transactionID: last, isExternal: true))
    }

    /// Delivers the history entries after the publisher's cursor.
    ///
    /// - Returns: Whether delivery follows the history; `false` when the store records none, or when the cursor had
    ///   to start again (the history was switched on or off, or pruned past it), and commits before must be
    ///   published without content.
    private func publishHistory(lastTransactionID: Int?) throws -> Bool {
        let cursor = publisher.historyCursor
        guard let table = try? historyTableIfPresent() else {
            publisher.resetHistory(to: nil)
            return false
        }
        let read = try environment.read {
            txn -> (catalog: HistoryCatalog?, counter: HistoryTable.Counter, [HistoryEntry]) in
            guard
                let catalog = try Catalog.read(
                    HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalogTable)
            else { return (nil, HistoryTable.Counter(last: 0, prunedThrough: 0), []) }
            let counter = try table.counter(in: txn)
            guard let cursor, cursor.storeID == catalog.storeID, cursor.position >= counter.prunedThrough,
                cursor.position <= counter.last
            else { return (catalog, counter, []) }
            let entries = try table.entries(
                after: cursor.position, storeID: catalog.storeID, limit: Self.historyEntriesPerPoll, in: txn)
            return (catalog, counter, entries)
        }
        guard let catalog = read.catalog else {
            publisher.resetHistory(to: nil)
            return false
        }
        guard let cursor, cursor.storeID == catalog.storeID, cursor.position >= read.counter.prunedThrough,
            cursor.position <= read.counter.last
        else {
            publisher.resetHistory(
                to: ChangePublisher.HistoryCursor(storeID: catalog.storeID, position: read.counter.last))
            return false
        }
        let caughtUp = read.2.count < Self.historyEntriesPerPoll
        publisher.publishHistory(read.2, origin: historyOrigin, lastTransactionID: caughtUp ? lastTransactionID : nil)
        return true
    }

    /// Gives each subscriber that fell behind the history entries after the last one it took, as far as its buffer
    /// takes them.
    private func catchUpSubscribers() {
        let (behind, cursor) = publisher.catchUpCandidates()
        guard let cursor, !behind.isEmpty, let table = try? historyTableIfPresent() else { return }
        for (id, after) in behind {
            let read = try? environment.read { txn -> (pruned: Int, entries: [HistoryEntry]) in
                let counter = try table.counter(in: txn)
                let start = max(after, counter.prunedThrough)
                let entries = try table.entries(
                    after: start, storeID: cursor.storeID, limit: Self.historyEntriesPerPoll, in: txn)
                return (Int(start - after), entries)
            }
            guard let read else {
                publisher.resetHistory(to: nil)
                return
            }
            publisher.catchUp(id, from: after, entries: read.entries, pruned: read.pruned, origin: historyOrigin)
        }
    }

    /// Where the store's history stands now, when it records one.
    private func historyCursorNow() throws -> ChangePublisher.HistoryCursor? {
        guard let table = try historyTableIfPresent() else { return nil }
        return try environment.read { txn in
            guard
                let catalog = try Catalog.read(
                    HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalogTable)
            else { return nil }
            return ChangePublisher.HistoryCursor(storeID: catalog.storeID, position: try table.counter(in: txn).last)
        }
    }

    /// The results of `descriptor` now, then again after every commit that touches its entity and changes them.
    ///
    /// Like SwiftData's `@Query` or GRDB's `ValueObservation`: the first element comes at once; later ones only when
    /// the results differ from the last ones delivered. Cancelling the iterating task ends the observation and
    /// frees its subscription.
    ///
    /// ```swift
    /// for try await openTasks in container.observe(FetchDescriptor<Task>(predicate: #Predicate { !$0.isDone })) {
    ///     print(openTasks.count, "open tasks")
    /// }
    /// ```
    public func observe<M: Model>(_ descriptor: FetchDescriptor<M>) -> AsyncThrowingStream<[M], any Error> {
        let changes = self.changes(for: [M.self])
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var current = try await self.read { txn in try txn.fetch(descriptor) }
                    var fingerprint = Self.fingerprint(current)
                    continuation.yield(current)
                    for await _ in changes {
                        current = try await self.read { txn in try txn.fetch(descriptor) }
                        let next = Self.fingerprint(current)
                        if next != fingerprint {
                            fingerprint = next
                            continuation.yield(current)
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Bytes that are equal exactly when the models are: their records, encoded with a fresh field table.
    private static func fingerprint<M: StoredModel>(_ models: [M]) -> [[UInt8]] {
        var encoder = RecordEncoder()
        var fields = FieldTable()
        return models.map {
            (try? encoder.encode($0, fields: &fields)) ?? withBorrowedBytes(of: $0.id.uuid) { Array($0) }
        }
    }
}
