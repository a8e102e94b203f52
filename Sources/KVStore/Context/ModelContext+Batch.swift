import Foundation
import LMDB

/// Writes of many models, one write transaction per chunk, with bounded memory.
///
/// These write at once, not at the next ``ModelContext/save()``. If chunk k fails, the chunks before it stay
/// committed and the error's ``KVStoreError/committedCount`` says how many models they held, so the caller can resume.
extension ModelContext {
    /// Inserts (upserts) the models of any sequence, even a lazy one of millions, holding one chunk in memory.
    ///
    /// ```swift
    /// try context.insert(contentsOf: (0..<1_000_000).lazy.map { Task(title: "task \($0)") }) { done in
    ///     print("\(done) saved")
    /// }
    /// ```
    ///
    /// Each chunk is written in key order, in one write transaction, or in several when the pages they change pass
    /// the configuration's ``ModelConfiguration/chunkMemoryBudget``: a chunk in a store of millions of models changes
    /// a page per model in each table, and LMDB holds a copy of each until the commit.
    ///
    /// - Parameters:
    ///   - models: The models to save.
    ///   - chunkSize: How many models each write transaction holds at most.
    ///   - progress: Called after each write transaction commits, with the number of models committed so far.
    /// - Returns: The number of models saved.
    /// - Throws: ``KVStoreError/invalidModel`` for a chunk size below 1, or the error of the failing transaction (what
    ///   `ModelContainer.write(_:)` throws, such as ``KVStoreError/uniqueViolation``), with
    ///   ``KVStoreError/committedCount`` set.
    @discardableResult
    public func insert<S: Sequence>(
        contentsOf models: S,
        chunkSize: Int = 10_000,
        progress: ((Int) -> Void)? = nil
    ) throws -> Int where S.Element: Model {
        let size = try validChunkSize(chunkSize)
        let budget = container.configuration.chunkMemoryBudget
        var committed = 0
        var chunk: [S.Element] = []
        chunk.reserveCapacity(size)
        func flush() throws {
            guard !chunk.isEmpty else { return }
            // Key order keeps a chunk of random IDs close together in the tree.
            chunk.sortByID()
            var start = chunk.startIndex
            while start < chunk.endIndex {
                let written = try writeChunk(committed: committed) { txn in
                    try Self.write(
                        chunk[start...], of: container.store(for: S.Element.self), withinBudget: budget, in: txn)
                }
                start += written
                committed += written
                progress?(committed)
            }
            chunk.removeAll(keepingCapacity: true)
        }
        for model in models {
            chunk.append(model)
            if chunk.count == size { try flush() }
        }
        try flush()
        return committed
    }

    /// How many models a chunked insert's transaction writes between two estimates of the pages it changed, and so at
    /// least (unless its chunk holds fewer): estimating costs a statistics read per table.
    public static let chunkBudgetInterval = 256

    /// Inserts the first of `models` in `txn`, in order, until the pages the transaction changed in the entity's tables
    /// pass `budget` bytes (estimated every ``chunkBudgetInterval`` models), and returns how many it inserted.
    private static func write<M: Model>(
        _ models: ArraySlice<M>, of store: EntityStore<M>, withinBudget budget: Int,
        in txn: borrowing ModelTransaction
    ) throws -> Int {
        let limit = try TransactionBudget(
            store: store, firstID: models.first?.id, count: models.count, budget: budget, in: txn)
        var written = 0
        for model in models {
            try txn.insert(model)
            written += 1
            if try limit.isSpent(afterWriting: written, in: txn) { break }
        }
        return written
    }

    /// The budget of changed pages of one transaction of a chunked write of `count` models: checked every
    /// ``ModelContext/chunkBudgetInterval`` models, never after the last, and not at all when there are no more.
    private struct TransactionBudget {
        /// The estimate of the transaction's changed pages; `nil` when its models fit one interval.
        private let footprint: WriteFootprint?
        private let budget: Int
        private let count: Int

        /// Begins the estimate in `txn`, before its writes of models of `store` from `firstID` up (`nil` when they
        /// are not in key order).
        ///
        /// - Throws: What ``WriteFootprint/init(store:firstID:in:)`` throws, mapped as `ModelTransaction.run` maps it.
        init<M: StoredModel>(
            store: EntityStore<M>, firstID: UUID?, count: Int, budget: Int, in txn: borrowing ModelTransaction
        ) throws {
            let lmdb = txn.transaction
            footprint =
                count > chunkBudgetInterval
                ? try txn.run { try WriteFootprint(store: store, firstID: firstID, in: lmdb.pointee) } : nil
            self.budget = budget
            self.count = count
        }

        /// Whether the transaction, after `written` of its models, should commit and leave the rest to the next.
        ///
        /// - Throws: What ``WriteFootprint/changedBytes(afterWriting:in:)`` throws, mapped as `ModelTransaction.run`
        ///   maps it.
        func isSpent(afterWriting written: Int, in txn: borrowing ModelTransaction) throws -> Bool {
            guard let footprint, written.isMultiple(of: chunkBudgetInterval), written < count else { return false }
            let lmdb = txn.transaction
            return try txn.run { try footprint.changedBytes(afterWriting: written, in: lmdb.pointee) } >= budget
        }
    }

    /// Deletes the models of type `type` with `ids`, applying delete rules, one chunk per write transaction.
    ///
    /// - Returns: The number of the given models that existed and were deleted.
    /// - Throws: ``KVStoreError/invalidModel`` for a chunk size below 1, or the error of the failing chunk
    ///   (``KVStoreError/deleteDenied`` when a `.deny` relationship has related models, or what
    ///   `ModelContainer.write(_:)` throws), with ``KVStoreError/committedCount`` set.
    @discardableResult
    public func delete<M: Model>(
        _ type: M.Type,
        ids: [UUID],
        chunkSize: Int = 10_000,
        progress: ((Int) -> Void)? = nil
    ) throws -> Int {
        let size = try validChunkSize(chunkSize)
        var deleted = 0
        for start in stride(from: 0, to: ids.count, by: size) {
            let chunk = Array(ids[start..<min(start + size, ids.count)])
            deleted += try writeChunk(committed: deleted) { txn in try txn.delete(M.self, ids: chunk) }
            progress?(deleted)
        }
        return deleted
    }

    /// Deletes the models that match `predicate` (all when `nil`), applying delete rules, one chunk per write
    /// transaction.
    ///
    /// - Returns: The number of matching models deleted (not counting those their delete rules reached).
    /// - Throws: ``KVStoreError/invalidModel`` for a chunk size below 1, or the error of the failing chunk
    ///   (``KVStoreError/deleteDenied`` when a `.deny` relationship has related models, what
    ///   `ModelContainer.write(_:)` throws, or the predicate's error as the ``KVStoreError/cause`` of a
    ///   ``KVStoreError/storage`` error), with ``KVStoreError/committedCount`` set.
    @discardableResult
    public func delete<M: Model>(
        _ type: M.Type,
        where predicate: Predicate<M>?,
        chunkSize: Int = 10_000,
        progress: ((Int) -> Void)? = nil
    ) throws -> Int {
        let size = try validChunkSize(chunkSize)
        var descriptor = FetchDescriptor<M>(predicate: predicate)
        descriptor.fetchLimit = size
        var deleted = 0
        while true {
            let count = try writeChunk(committed: deleted) { txn -> Int in
                let ids = try txn.fetchIdentifiers(descriptor)
                return ids.isEmpty ? 0 : try txn.delete(M.self, ids: ids)
            }
            if count == 0 { return deleted }
            deleted += count
            progress?(deleted)
        }
    }

    /// Applies `change` to every model that matches `descriptor`'s predicate and saves it, one chunk per write
    /// transaction, walking in ID order so that memory stays bounded.
    ///
    /// - Parameters:
    ///   - descriptor: Which models to change; its sort, limit and offset are ignored.
    ///   - chunkSize: How many models each write transaction changes at most: a transaction also commits once the
    ///     pages it changed pass the configuration's ``ModelConfiguration/chunkMemoryBudget``, as the chunked insert
    ///     does.
    ///   - progress: Called after each write transaction commits, with the number of models changed so far.
    ///   - change: Changes one model. It must keep the model's ID.
    /// - Returns: The number of models changed.
    /// - Throws: ``KVStoreError/invalidModel`` for a chunk size below 1 or a `change` that alters a model's ID, or the
    ///   error of the failing chunk (what `ModelContainer.write(_:)` throws, such as
    ///   ``KVStoreError/uniqueViolation``, or the error `change` or the predicate threw as the ``KVStoreError/cause``
    ///   of a ``KVStoreError/storage`` error), with ``KVStoreError/committedCount`` set.
    @discardableResult
    public func update<M: Model>(
        _ descriptor: FetchDescriptor<M>,
        chunkSize: Int = 10_000,
        progress: ((Int) -> Void)? = nil,
        _ change: (inout M) throws -> Void
    ) throws -> Int {
        let size = try validChunkSize(chunkSize)
        let store = try container.store(for: M.self)
        let budget = container.configuration.chunkMemoryBudget
        var after: [UInt8]? = nil
        var updated = 0
        while true {
            let (count, last, isLast) = try writeChunk(committed: updated) { txn -> (Int, [UInt8]?, Bool) in
                let page = try txn.run {
                    try store.page(after: after, limit: size, in: txn.transaction.pointee) { model in
                        try descriptor.predicate?.evaluate(model) ?? true
                    }
                }
                let limit = try TransactionBudget(
                    store: store, firstID: nil, count: page.models.count, budget: budget, in: txn)
                var written = 0
                for var model in page.models {
                    let id = model.id
                    try change(&model)
                    guard model.id == id else {
                        throw KVStoreError(
                            .invalidModel, entity: store.name, id: id, message: "update must not change a model's ID")
                    }
                    try txn.insert(model)
                    written += 1
                    // Past the budget, the rest of the page goes to the next transaction, after this model.
                    if try limit.isSpent(afterWriting: written, in: txn) {
                        return (written, withKey(id) { Array($0) }, false)
                    }
                }
                return (page.models.count, page.lastKey, page.isLast)
            }
            updated += count
            if count > 0 { progress?(updated) }
            if isLast { return updated }
            after = last
        }
    }

    private func validChunkSize(_ size: Int) throws -> Int {
        guard size > 0 else {
            throw KVStoreError(.invalidModel, message: "The chunk size must be positive, not \(size)")
        }
        return size
    }

    /// Runs one chunk's write transaction, marking a failure with the number of models committed before it.
    private func writeChunk<R>(committed: Int, _ body: (borrowing ModelTransaction) throws -> R) throws -> R {
        do {
            return try container.write(body)
        } catch var error as KVStoreError {
            error.committedCount = committed
            throw error
        } catch {
            var wrapped = KVStoreError(.storage, message: "A batch write failed", cause: error)
            wrapped.committedCount = committed
            throw wrapped
        }
    }
}
