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
    /// `bufferSize` change sets: one that falls further behind misses the newest ones until it catches up, and the
    /// next change set it receives counts them in ``ChangeSet/missed``. Commits of other processes arrive within
    /// ``externalChangePollingInterval`` as change sets with ``ChangeSet/isExternal`` set and no IDs. The stream
    /// ends when the container closes; ending its iteration (or cancelling the task) unsubscribes.
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
            entities: entities, bufferSize: max(bufferSize, 1), lastTransactionID: last)
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

    /// Polls the store's last transaction ID while anyone subscribes, and publishes commits this process did not
    /// make.
    private func pollExternalChanges() {
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: Self.externalChangePollingInterval)
                guard let self, self.publisher.shouldKeepPolling(), !self.environment.isClosed else { return }
                // Under the write lock, a commit of this process is either published already or not begun.
                self.writeOrder.withLock { _ in
                    guard let last = try? self.environment.info().lastTransactionID,
                        last > self.publisher.lastTransactionID
                    else { return }
                    self.publisher.publish(ChangeSet(transactionID: last, isExternal: true))
                }
            }
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
