import Foundation

// Paged and streamed fetches: the models of a descriptor, in its order, a bounded number at a time, each page read in
// a transaction of its own, and a continuation to resume after the last one.
extension ModelContext {
    /// The first `limit` models of a listing of `descriptor` after `continuation` (from the start when it is `nil`),
    /// in the descriptor's order, with this context's pending changes, and where the next page starts.
    ///
    /// The descriptor's offset skips models before the first page, and its limit caps the whole listing. Each page
    /// is read in a read transaction of its own and holds at most `limit` models in memory, whatever the store's
    /// size; see ``FetchContinuation`` for what a continuation guarantees across writes.
    ///
    /// ```swift
    /// var page = try context.fetchPage(descriptor, limit: 100)
    /// while let next = page.continuation {
    ///     page = try context.fetchPage(descriptor, after: next, limit: 100)
    /// }
    /// ```
    ///
    /// - Throws: ``KVStoreError/invalidContinuation`` when `continuation` was made for another entity or descriptor,
    ///   or before the store's schema was migrated; ``KVStoreError/invalidModel`` when `limit` is not positive; what
    ///   ``fetch(_:)-9vvf6`` throws.
    public func fetchPage<M: Model>(
        _ descriptor: FetchDescriptor<M>, after continuation: FetchContinuation? = nil, limit: Int
    ) throws -> FetchPage<M> {
        try page(descriptor, after: continuation, limit: limit) { ordering, last, limit in
            let store = try container.store(for: M.self)
            let changes = pending.changes(of: M.self)
            let models = try container.read { txn in
                try txn.run {
                    try store.page(
                        ordering, after: last, limit: limit, excluding: Set(changes.keys),
                        adding: changes.values.compactMap { $0 }, in: txn.transaction.pointee)
                }
            }
            if !descriptor.relationshipsToPrefetch.isEmpty {
                try prefetch(descriptor.relationshipsToPrefetch, of: models)
            }
            return models
        }
    }

    /// The first `limit` objects of a listing of `descriptor` after `continuation`, in the descriptor's order, with
    /// this context's unsaved changes; the objects are this context's (the same instance for the same ID as every
    /// other read gives).
    ///
    /// - Throws: What ``fetchPage(_:after:limit:)-2puva`` throws, and
    ///   ``KVStoreError/encodingFailed`` when an object does not encode.
    public func fetchPage<M: PersistentModel>(
        _ descriptor: FetchDescriptor<M>, after continuation: FetchContinuation? = nil, limit: Int
    ) throws -> FetchPage<M> {
        try page(descriptor, after: continuation, limit: limit) { ordering, last, limit in
            let store = try container.store(for: M.self)
            let (changed, deleted) = try unsavedObjects(of: M.self, store: store, includingDeleted: true)
            let found = try container.read { txn in
                try txn.run {
                    try store.page(
                        ordering, after: last, limit: limit, excluding: deleted.union(changed.keys),
                        adding: Array(changed.values), in: txn.transaction.pointee)
                }
            }
            // The context's objects for what the store gave: the held ones as they are now, the others registered.
            return try heldOrRead(M.self, ids: found.map(\.id)).compactMap { $0 }
        }
    }

    /// A cursor over the models of `descriptor`, in its order, after `continuation` (from the start when it is
    /// `nil`): it reads `batchSize` models at a time, each batch in a read transaction of its own, so memory stays
    /// bounded whatever the store's size, and can give a continuation after any model it returned.
    ///
    /// ```swift
    /// var cursor = context.fetchCursor(descriptor)
    /// while let task = try cursor.next() { print(task.title) }
    /// ```
    public func fetchCursor<M: Model>(
        _ descriptor: FetchDescriptor<M>, after continuation: FetchContinuation? = nil, batchSize: Int = 1000
    ) -> FetchCursor<M> {
        cursor(descriptor, after: continuation, batchSize: batchSize) { continuation, limit in
            try self.fetchPage(descriptor, after: continuation, limit: limit)
        }
    }

    /// A cursor over the objects of `descriptor`, in its order, after `continuation`, with this context's unsaved
    /// changes (see ``fetchCursor(_:after:batchSize:)-5npr3``).
    public func fetchCursor<M: PersistentModel>(
        _ descriptor: FetchDescriptor<M>, after continuation: FetchContinuation? = nil, batchSize: Int = 1000
    ) -> FetchCursor<M> {
        cursor(descriptor, after: continuation, batchSize: batchSize) { continuation, limit in
            try self.fetchPage(descriptor, after: continuation, limit: limit)
        }
    }

    /// A cursor over `descriptor` that reads its batches with `pages` and makes its continuations here.
    private func cursor<M: StoredModel>(
        _ descriptor: FetchDescriptor<M>, after continuation: FetchContinuation?, batchSize: Int,
        pages: @escaping (FetchContinuation?, Int) throws -> FetchPage<M>
    ) -> FetchCursor<M> {
        FetchCursor(after: continuation, batchSize: batchSize, read: pages) { model, delivered in
            try self.continuation(of: descriptor, after: model, delivered: delivered)
        }
    }

    /// A page of `descriptor` after `continuation`: the continuation checked and read, the offset skipped on the
    /// first page, the limit applied, and `read` asked for the models after a position, in the descriptor's order
    /// without its offset and limit.
    private func page<M: StoredModel>(
        _ descriptor: FetchDescriptor<M>, after continuation: FetchContinuation?, limit: Int,
        read: (FetchDescriptor<M>, M?, Int) throws -> [M]
    ) throws -> FetchPage<M> {
        guard limit > 0 else {
            throw KVStoreError(
                .invalidModel, entity: M.entity.name, message: "A page holds at least one model: pass a positive limit")
        }
        let ordering = descriptor.unpaged
        var last: M?
        var delivered = 0
        if let continuation {
            (last, delivered) = try resumed(continuation, of: descriptor)
        } else {
            // The offset: pages read past, a bounded number at a time.
            var skipped = 0
            while skipped < descriptor.fetchOffset {
                let models = try read(ordering, last, min(descriptor.fetchOffset - skipped, 1000))
                guard let model = models.last else { return FetchPage(models: [], continuation: nil) }
                last = model
                skipped += models.count
            }
        }
        let wanted = descriptor.fetchLimit.map { min(limit, max($0 - delivered, 0)) } ?? limit
        guard wanted > 0 else { return FetchPage(models: [], continuation: nil) }
        let models = try read(ordering, last, wanted)
        guard models.count == wanted, let model = models.last,
            descriptor.fetchLimit.map({ delivered + models.count < $0 }) ?? true
        else { return FetchPage(models: models, continuation: nil) }
        let resume = try self.continuation(of: descriptor, after: model, delivered: delivered + wanted)
        return FetchPage(models: models, continuation: resume)
    }

    /// A continuation of a listing of `descriptor` after `model`, `delivered` models into it.
    ///
    /// - Throws: ``KVStoreError/encodingFailed`` when the model does not encode as a property list.
    func continuation<M: StoredModel>(
        of descriptor: FetchDescriptor<M>, after model: M, delivered: Int
    ) throws -> FetchContinuation {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        do {
            return try FetchContinuation(
                FetchContinuation.Contents(
                    entity: M.entity.name, schemaVersion: container.schemaMark,
                    descriptor: descriptor.continuationHash, last: try encoder.encode([model]), delivered: delivered))
        } catch {
            throw KVStoreError(
                .encodingFailed, entity: M.entity.name, id: model.id,
                message: "The last model of the page does not encode into a continuation", cause: error)
        }
    }

    /// The last model and the count delivered that `continuation` holds, once checked against `descriptor`.
    private func resumed<M: StoredModel>(
        _ continuation: FetchContinuation, of descriptor: FetchDescriptor<M>
    ) throws -> (M, Int) {
        let contents = try FetchContinuation.contents(of: continuation.token)
        let entity = M.entity.name
        func invalid(_ reason: String) -> KVStoreError {
            KVStoreError(
                .invalidContinuation, entity: entity, message: "The continuation \(reason): start the listing again")
        }
        guard contents.entity == entity else { throw invalid("is of a listing of \(contents.entity), not \(entity)") }
        guard contents.descriptor == descriptor.continuationHash else {
            throw invalid("is of a listing with another predicate, sort, offset or limit")
        }
        guard contents.schemaVersion == container.schemaMark else {
            throw invalid("was made before the store's schema was migrated")
        }
        guard let last = try? PropertyListDecoder().decode([M].self, from: contents.last).first else {
            throw invalid("holds a model that no longer decodes")
        }
        return (last, contents.delivered)
    }
}

/// Reads the models of a fetch one at a time, in the descriptor's order, a batch per read transaction: memory holds
/// one batch whatever the store's size. Made by ``ModelContext/fetchCursor(_:after:batchSize:)-5npr3``.
///
/// Each batch reads the store as it is then, after the last model returned (keyset pagination, see
/// ``FetchContinuation``), so writes between batches neither repeat nor skip a model that stayed in place.
///
/// ```swift
/// var cursor = context.fetchCursor(descriptor, batchSize: 500)
/// while let task = try cursor.next() {
///     if shouldStop { saved = try cursor.continuation(); break }
/// }
/// ```
public struct FetchCursor<M: StoredModel> {
    private let read: (FetchContinuation?, Int) throws -> FetchPage<M>
    private let resume: (M, Int) throws -> FetchContinuation
    private let batchSize: Int
    private var batch: [M] = []
    private var position = 0
    /// Where the current batch started.
    private var batchStart: FetchContinuation?
    /// Where the next batch starts; `nil` at the end.
    private var nextBatch: FetchContinuation?
    private var isOver = false
    /// How many models the cursor returned.
    private var delivered = 0

    init(
        after continuation: FetchContinuation?, batchSize: Int,
        read: @escaping (FetchContinuation?, Int) throws -> FetchPage<M>,
        resume: @escaping (M, Int) throws -> FetchContinuation
    ) {
        self.read = read
        self.resume = resume
        self.batchSize = max(1, batchSize)
        nextBatch = continuation
        batchStart = continuation
        if let continuation, let contents = try? FetchContinuation.contents(of: continuation.token) {
            delivered = contents.delivered
        }
    }

    /// The next model, or `nil` once the listing is over.
    ///
    /// - Throws: What ``ModelContext/fetchPage(_:after:limit:)-2puva`` throws.
    public mutating func next() throws -> M? {
        if position == batch.count {
            guard !isOver else { return nil }
            let page = try read(nextBatch, batchSize)
            batchStart = nextBatch
            batch = page.models
            position = 0
            nextBatch = page.continuation
            isOver = page.continuation == nil
            guard !batch.isEmpty else { return nil }
        }
        let model = batch[position]
        position += 1
        delivered += 1
        return model
    }

    /// Where a cursor made with it would go on after the last model ``next()`` returned: the continuation this one
    /// started after when it returned none, and `nil` when the listing is over.
    ///
    /// - Throws: ``KVStoreError/encodingFailed`` when the last model does not encode into a continuation.
    public func continuation() throws -> FetchContinuation? {
        if position == batch.count && isOver { return nil }
        guard position > 0 else { return batchStart }
        return try resume(batch[position - 1], delivered)
    }
}
