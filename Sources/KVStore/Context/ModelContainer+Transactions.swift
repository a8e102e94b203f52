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
    /// One write transaction runs at a time; the body may run again from the start if the store had to grow, or
    /// when another process or container changed the store's schema since this container last looked, so it should
    /// have no effects outside the transaction. Subscribers to ``changes`` receive what it changed once it
    /// commits.
    ///
    /// - Parameter body: The reads and writes to do. It must not `await`.
    /// - Returns: What `body` returns.
    /// - Throws: ``KVStoreError/closed`` after ``close()``, ``KVStoreError/uniqueViolation``,
    ///   ``KVStoreError/missingReference``, ``KVStoreError/deleteDenied``, ``KVStoreError/schemaChanged`` once the
    ///   store moved past the container's models, ``KVStoreError/migrationInProgress`` when another process's
    ///   migration did not end within ``ModelConfiguration/migrationWaitTimeout``, or what `body` throws; nothing is
    ///   written then.
    public func write<R>(_ body: (borrowing ModelTransaction) throws -> R) throws -> R {
        try performWrite(body)
    }

    /// The write transaction behind both `write` methods.
    func performWrite<R>(_ body: (borrowing ModelTransaction) throws -> R) throws -> R {
        let started = observer == nil ? nil : ContinuousClock.now
        do {
            let (result, changes) = try writeOrder.withLock { commits in
                let deadline = ContinuousClock.now + configuration.migrationWaitTimeout
                while true {
                    do {
                        return try writeOnce(body, commits: &commits)
                    } catch is SchemaReloadNeeded {
                        _ = try reloadSchema(waitingUntil: deadline)
                    }
                }
            }
            if let observer, let changes, let started {
                observer.container(self, didCommit: changes, duration: ContinuousClock.now - started)
            }
            return result
        } catch {
            throw failed(error, operation: "write")
        }
    }

    /// One attempt of a write: ``SchemaReloadNeeded`` when the schema must be read again first.
    private func writeOnce<R>(
        _ body: (borrowing ModelTransaction) throws -> R, commits: inout Int
    ) throws -> (R, ChangeSet?) {
        let (output, transaction, generation) = try environment.write { txn in
            try beginWrite(txn)
            let (result, changes, catalogChanged) = try withTransactionHandle(txn) { pointer in
                let changes = isObserved ? ChangeCollector(transactionID: txn.id) : nil
                let writes = WriteState(changes: changes)
                let transaction = ModelTransaction(container: self, transaction: pointer, writes: writes)
                let result = try body(transaction)
                try transaction.verifyReferences()
                return (result, changes?.changes, writes.catalogChanged)
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

    /// Maps an error to a store error and reports it to the observer.
    private func failed(_ error: any Error, operation: String) -> any Error {
        let mapped = Self.mapped(error)
        observer?.container(self, didFail: mapped, operation: operation, entity: (mapped as? KVStoreError)?.entity)
        return mapped
    }
}
