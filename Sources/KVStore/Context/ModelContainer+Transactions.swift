import Foundation
import LMDB

extension ModelContainer {
    /// Runs `body` in a read transaction: one consistent snapshot of the store.
    ///
    /// - Parameter body: The reads to do. It must not `await`.
    /// - Returns: What `body` returns.
    /// - Throws: ``KVStoreError/closed`` after ``close()``, ``KVStoreError/schemaChanged`` when the store's schema
    ///   moved past the container's models, ``KVStoreError/storage`` when every reader slot is taken, or what `body`
    ///   throws.
    public func read<R>(_ body: (borrowing ModelTransaction) throws -> R) throws -> R {
        try performRead(body)
    }

    /// The read transaction behind both `read` methods.
    func performRead<R>(_ body: (borrowing ModelTransaction) throws -> R) throws -> R {
        do {
            return try environment.read { txn in
                try followCatalog(inRead: txn)
                return try withTransactionHandle(txn) { pointer in
                    try body(ModelTransaction(container: self, transaction: pointer, writes: nil))
                }
            }
        } catch {
            throw failed(schemaMapped(error), operation: "read")
        }
    }

    /// Runs `body` in a write transaction, committed when `body` returns and rolled back when it throws.
    ///
    /// One write transaction runs at a time; the body may run again from the start if the store had to grow, when
    /// another process or container changed the store's schema since this container last looked, or once the copies
    /// of external values its saves need were streamed in (a stored value assigned to another model, see
    /// ``ExternalData``), so it should have no effects outside the transaction. Subscribers to ``changes`` receive what it changed once it
    /// commits.
    ///
    /// - Parameter body: The reads and writes to do. It must not `await`.
    /// - Returns: What `body` returns.
    /// - Throws: ``KVStoreError/closed`` after ``close()``, ``KVStoreError/uniqueViolation``,
    ///   ``KVStoreError/missingReference``, ``KVStoreError/deleteDenied``, ``KVStoreError/schemaChanged`` once the
    ///   store moved past the container's models, ``KVStoreError/migrationInProgress`` when another process's
    ///   migration did not end within ``ModelConfiguration/migrationWaitTimeout``, or what `body` throws; nothing is
    ///   written then.
    @discardableResult
    public func write<R>(_ body: (borrowing ModelTransaction) throws -> R) throws -> R {
        try performWrite(body)
    }

    /// The write transaction behind both `write` methods.
    func performWrite<R>(_ body: (borrowing ModelTransaction) throws -> R) throws -> R {
        let started = observer == nil ? nil : ContinuousClock.now
        do {
            let (result, changes) = try writeOrder.withLock { commits in
                let deadline = ContinuousClock.now + configuration.migrationWaitTimeout
                var copies = ExternalValueCopies()
                // Whether the write commits or throws, the copies it staged and did not use go.
                defer { discardUnusedCopies(copies, deadline: deadline, commits: &commits) }
                return try attempts(body, copies: &copies, deadline: deadline, commits: &commits)
            }
            if let observer, let changes, let started {
                observer.container(self, didCommit: changes, duration: ContinuousClock.now - started)
            }
            return result
        } catch {
            throw failed(error, operation: "write")
        }
    }

    /// Runs the write's body until it commits: again once the schema was read again, and again once the copies of
    /// external values its saves need are staged (see ``ExternalValueCopies``).
    private func attempts<R>(
        _ body: (borrowing ModelTransaction) throws -> R, copies: inout ExternalValueCopies,
        deadline: ContinuousClock.Instant, commits: inout Int
    ) throws -> (R, ChangeSet?) {
        while true {
            do {
                return try writeOnce(body, stagedCopies: copies.staged, commits: &commits)
            } catch is SchemaReloadNeeded {
                _ = try reloadSchema(waitingUntil: deadline)
            } catch let needed as ExternalCopiesNeeded {
                try copies.stage(needed.requests, directory: path) { batch in
                    try writeBatch(batch, deadline: deadline, commits: &commits)
                }
            }
        }
    }

    /// Deletes the staged copies of external values the write did not give to a model. A failure is reported to the
    /// observer and not thrown: the write's outcome stands, and the next open of the store deletes what is left.
    private func discardUnusedCopies(
        _ copies: ExternalValueCopies, deadline: ContinuousClock.Instant, commits: inout Int
    ) {
        guard !copies.isEmpty else { return }
        do {
            try copies.discardUnused(
                read: { body in try environment.read { txn in try body(txn) } },
                write: { batch in try writeBatch(batch, deadline: deadline, commits: &commits) })
        } catch {
            observer?.container(self, didFail: Self.mapped(error), operation: "write", entity: nil)
        }
    }

    /// Runs `batch` in a write transaction of its own, inside a write that holds the write order.
    private func writeBatch(
        _ batch: (borrowing Transaction) throws -> Void, deadline: ContinuousClock.Instant, commits: inout Int
    ) throws {
        while true {
            do {
                _ = try writeOnce({ txn in try txn.run { try batch(txn.transaction.pointee) } }, commits: &commits)
                return
            } catch is SchemaReloadNeeded {
                _ = try reloadSchema(waitingUntil: deadline)
            }
        }
    }

    /// One attempt of a write: ``SchemaReloadNeeded`` when the schema must be read again first,
    /// ``ExternalCopiesNeeded`` when its saves need copies of external values that are not in `stagedCopies`.
    private func writeOnce<R>(
        _ body: (borrowing ModelTransaction) throws -> R,
        stagedCopies: [ExternalValueCopy.Key: ExternalValueDescriptor] = [:], commits: inout Int
    ) throws -> (R, ChangeSet?) {
        let (output, transaction, generation) = try environment.write { txn in
            try beginWrite(txn)
            // The container follows the catalog this transaction sees (`beginWrite` checked it): whether the store
            // records history is as the transaction finds it.
            let history = schema.withLock { $0.history }
            let (result, changes, catalogChanged) = try withTransactionHandle(txn) { pointer -> (R, ChangeSet?, Bool) in
                let changes =
                    isObserved || history != nil
                    ? ChangeCollector(transactionID: txn.id, keepsDeletedValues: history != nil) : nil
                let writes = WriteState(changes: changes, stagedCopies: stagedCopies)
                writes.author = configuration.historyAuthor
                let transaction = ModelTransaction(container: self, transaction: pointer, writes: writes)
                let result: R
                do {
                    result = try body(transaction)
                } catch is ExternalCopiesNeeded {
                    // Every copy the body asked for, though it may have caught the first request's error.
                    throw ExternalCopiesNeeded(requests: writes.copyRequests)
                }
                // A body that caught the error of a copy request must not commit without the copy.
                if !writes.copyRequests.isEmpty { throw ExternalCopiesNeeded(requests: writes.copyRequests) }
                try transaction.verifyReferences()
                var token: HistoryToken?
                if let history, let changes {
                    token = try recordHistory(changes, author: writes.author, history: history, in: txn)
                }
                var published = isObserved ? changes?.changes : nil
                published?.historyToken = token
                return (result, published, writes.catalogChanged)
            }
            let generation = catalogChanged ? try Catalog.generation(in: txn, table: catalogTable) : nil
            return ((result, changes), txn.id, generation)
        }
        commits += 1
        didCommit(transaction: transaction, generation: generation)
        // Handing the change set to the subscribers' buffers runs no subscriber code, so it can happen in commit
        // order, under the lock.
        if let changes = output.1 { publisher.publish(changes) }
        return output
    }

    /// Writes the history entry of a transaction that changed models, in the transaction, after pruning what the
    /// store's retention no longer keeps.
    ///
    /// - Returns: The entry's token, or `nil` when the transaction changed no model.
    private func recordHistory(
        _ changes: ChangeCollector, author: String?, history: HistoryState, in txn: borrowing Transaction
    ) throws -> HistoryToken? {
        let log = changes.mergedLog
        guard !log.entries.isEmpty else { return nil }
        let position = try history.table.append(
            log: log, keptValues: changes.keptValues, author: author, date: Date(), origin: historyOrigin,
            retention: history.catalog.retention, in: txn)
        return HistoryToken(storeID: history.catalog.storeID, position: position)
    }

    /// Maps an error to a store error and reports it to the observer.
    private func failed(_ error: any Error, operation: String) -> any Error {
        let mapped = Self.mapped(error)
        observer?.container(self, didFail: mapped, operation: operation, entity: (mapped as? KVStoreError)?.entity)
        return mapped
    }
}
