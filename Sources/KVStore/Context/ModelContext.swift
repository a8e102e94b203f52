import Foundation
import LMDB

/// A unit of work: models inserted and deleted here are pending until ``save()`` writes them all in one transaction.
///
/// ```swift
/// let context = ModelContext(container)
/// context.insert(Project(name: "Launch"))
/// try context.save()
///
/// let open = try context.fetch(FetchDescriptor<Task>(predicate: #Predicate { !$0.isDone }))
/// ```
///
/// Reads see the store as last saved, with this context's pending changes laid over it: a pending insert is
/// fetched (when it matches), a pending delete is not. A context is not `Sendable`: use one per task or actor; the
/// models it returns are values that go anywhere.
public final class ModelContext {
    /// The container the context reads and writes.
    public let container: ModelContainer

    /// Pending changes by entity and ID, and the order they were made in.
    private var changes: [ChangeKey: Change] = [:]
    private var order: [ChangeKey] = []

    private struct ChangeKey: Hashable {
        let entity: ObjectIdentifier
        let id: UUID
    }

    /// Models read ahead by a fetch's `relationshipsToPrefetch`, until the next save or rollback.
    private var prefetched: [ChangeKey: any Model] = [:]
    /// Children lists read ahead, by child entity, field and parent.
    private var prefetchedChildren: [ChildrenKey: [UUID]] = [:]

    private struct ChildrenKey: Hashable {
        let entity: String
        let field: String
        let parent: UUID
    }

    private enum Change {
        case insert(any Model)
        case delete(any Model.Type)
    }

    /// Creates a context on a container.
    public init(_ container: ModelContainer) {
        self.container = container
    }

    /// Whether there are changes that ``save()`` would write.
    public var hasChanges: Bool {
        !changes.isEmpty
    }

    /// Registers `model` to be saved: inserted, or replacing the stored model with the same ID.
    public func insert<M: Model>(_ model: M) {
        record(ChangeKey(entity: ObjectIdentifier(M.self), id: model.id), .insert(model))
    }

    /// Registers `model` to be deleted.
    public func delete<M: Model>(_ model: M) {
        delete(M.self, id: model.id)
    }

    /// Registers the model of type `type` with `id` to be deleted.
    public func delete<M: Model>(_ type: M.Type, id: UUID) {
        record(ChangeKey(entity: ObjectIdentifier(M.self), id: id), .delete(M.self))
    }

    private func record(_ key: ChangeKey, _ change: Change) {
        if changes.updateValue(change, forKey: key) == nil { order.append(key) }
    }

    /// Writes every pending change in one write transaction, keeping the indexes in step, then forgets them.
    ///
    /// Within an entity, models are written in ID order, which appends time-ordered IDs at the end of the tree.
    ///
    /// - Throws: ``KVStoreError/uniqueViolation`` and the other write errors; nothing of the save is written then,
    ///   and the changes stay pending.
    public func save() throws {
        guard hasChanges else { return }
        // Entities in the order they were first changed, models in ID order within each.
        var entityOrder: [ObjectIdentifier: Int] = [:]
        for key in order where entityOrder[key.entity] == nil { entityOrder[key.entity] = entityOrder.count }
        let pending = order.compactMap { key in changes[key].map { (key, $0) } }
            .sorted { lhs, rhs in
                let (left, right) = (entityOrder[lhs.0.entity] ?? 0, entityOrder[rhs.0.entity] ?? 0)
                return left != right ? left < right : lhs.0.id.isOrdered(before: rhs.0.id)
            }
        try container.write { txn in
            var deletes: [(store: any AnyEntityStore, ids: [UUID])] = []
            for (key, change) in pending {
                switch change {
                case .insert(let model):
                    try txn.insert(model)
                case .delete(let type):
                    let store = try container.store(named: entityName(of: type))
                    if let last = deletes.last, last.store === store {
                        deletes[deletes.count - 1].ids.append(key.id)
                    } else {
                        deletes.append((store, [key.id]))
                    }
                }
            }
            // Deletes run after the inserts, all in one pass of the delete rules.
            if !deletes.isEmpty { try txn.delete(deletes) }
        }
        changes.removeAll()
        order.removeAll()
        forgetPrefetched()
    }

    /// Forgets every pending change, and the models prefetched so far.
    public func rollback() {
        changes.removeAll()
        order.removeAll()
        forgetPrefetched()
    }

    private func forgetPrefetched() {
        prefetched.removeAll()
        prefetchedChildren.removeAll()
    }

    // MARK: - Reading

    /// The model of type `type` with `id`, counting pending changes, or `nil`.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when the stored bytes do not decode, ``KVStoreError/closed`` after
    ///   the container closed, or what `ModelContainer.read(_:)` and ``ModelTransaction/model(for:as:)`` throw.
    public func model<M: Model>(for id: UUID, as type: M.Type = M.self) throws -> M? {
        switch changes[ChangeKey(entity: ObjectIdentifier(M.self), id: id)] {
        case .insert(let model): return model as? M
        case .delete: return nil
        case nil:
            if let model = prefetched[ChangeKey(entity: ObjectIdentifier(M.self), id: id)] as? M { return model }
            return try container.read { txn in try txn.model(for: id, as: M.self) }
        }
    }

    /// The models with the given IDs, in the same order, with `nil` for IDs that have none; one read transaction,
    /// lookups in key order.
    ///
    /// - Throws: ``KVStoreError/closed`` after the container closed, ``KVStoreError/schemaChanged`` when the store's
    ///   schema moved past the container's models, ``KVStoreError/corruptRecord`` when a stored record does not decode,
    ///   ``KVStoreError/unknownEntity`` when `M` is not part of the container, or ``KVStoreError/damaged`` or
    ///   ``KVStoreError/storage`` when the store cannot be read.
    public func models<M: Model>(for ids: [UUID], as type: M.Type = M.self) throws -> [M?] {
        let entity = ObjectIdentifier(M.self)
        var results: [M?]
        if !prefetched.isEmpty, ids.allSatisfy({ prefetched[ChangeKey(entity: entity, id: $0)] != nil }) {
            results = ids.map { prefetched[ChangeKey(entity: entity, id: $0)] as? M }
        } else {
            results = try container.read { txn in try txn.models(for: ids, as: M.self) }
        }
        if changes.isEmpty { return results }
        for (position, id) in ids.enumerated() {
            switch changes[ChangeKey(entity: ObjectIdentifier(M.self), id: id)] {
            case .insert(let model): results[position] = model as? M
            case .delete: results[position] = nil
            case nil: break
            }
        }
        return results
    }

    /// The models that match `descriptor`, sorted and paged as it says.
    ///
    /// - Throws: ``KVStoreError/closed`` after the container closed, ``KVStoreError/schemaChanged`` when the store's
    ///   schema moved past the container's models, ``KVStoreError/corruptRecord`` when a stored record does not decode,
    ///   ``KVStoreError/unknownEntity`` when `M` is not part of the container, ``KVStoreError/invalidModel`` for a
    ///   relationship to prefetch that `M` does not declare, what the predicate throws as it evaluates a model, or
    ///   ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func fetch<M: Model>(_ descriptor: FetchDescriptor<M>) throws -> [M] {
        let results = try fetchWithPendingChanges(descriptor)
        if !descriptor.relationshipsToPrefetch.isEmpty {
            try prefetch(descriptor.relationshipsToPrefetch, of: results)
        }
        return results
    }

    private func fetchWithPendingChanges<M: Model>(_ descriptor: FetchDescriptor<M>) throws -> [M] {
        let overlay = pending(M.self)
        guard !overlay.isEmpty else { return try container.read { txn in try txn.fetch(descriptor) } }
        // Pending changes may enter or leave the page, so fetch everything that matches, then page.
        var unpaged = descriptor
        unpaged.fetchLimit = nil
        unpaged.fetchOffset = 0
        var results = try container.read { txn in try txn.fetch(unpaged) }
        results.removeAll { overlay[$0.id] != nil }
        for case .some(let model) in overlay.values where try descriptor.matches(model) {
            results.append(model)
        }
        return descriptor.sortedPage(of: results)
    }

    /// The number of models that match `descriptor`'s predicate.
    ///
    /// - Throws: What ``fetch(_:)`` throws.
    public func fetchCount<M: Model>(_ descriptor: FetchDescriptor<M>) throws -> Int {
        if pending(M.self).isEmpty { return try container.read { txn in try txn.fetchCount(descriptor) } }
        var unpaged = descriptor
        unpaged.fetchLimit = nil
        unpaged.fetchOffset = 0
        return try fetch(unpaged).count
    }

    /// The IDs of the models that match `descriptor`, in its order.
    ///
    /// - Throws: What ``fetch(_:)`` throws.
    public func fetchIdentifiers<M: Model>(_ descriptor: FetchDescriptor<M>) throws -> [UUID] {
        try fetch(descriptor).map(\.id)
    }

    /// Calls `body` with the models that match `descriptor`'s predicate, `batchSize` at a time, each batch read in a
    /// transaction of its own so memory stays bounded whatever the store's size. Models come in ID order (creation
    /// order for time-ordered IDs); pending changes are not included.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the descriptor sorts or pages, or what `body` throws.
    public func enumerate<M: Model>(
        _ descriptor: FetchDescriptor<M>,
        batchSize: Int = 1000,
        _ body: ([M]) throws -> Void
    ) throws {
        guard descriptor.sortBy.isEmpty, descriptor.fetchLimit == nil, descriptor.fetchOffset == 0, batchSize > 0
        else {
            throw KVStoreError(
                .invalidModel, entity: M.entity.name,
                message: "enumerate walks in ID order in batches: use a descriptor without sort, limit or offset, "
                    + "and a positive batch size")
        }
        let store = try container.store(for: M.self)
        var after: [UInt8]? = nil
        while true {
            let page = try container.read { txn in
                try txn.run {
                    try store.page(after: after, limit: batchSize, in: txn.transaction.pointee) { model in
                        try descriptor.predicate?.evaluate(model) ?? true
                    }
                }
            }
            if !page.models.isEmpty { try body(page.models) }
            if page.isLast { return }
            after = page.lastKey
        }
    }

    /// How a fetch of `descriptor` reads the store: `scan`, or which index and keys.
    ///
    /// - Throws: ``KVStoreError/unknownEntity`` when `M` is not part of the container.
    public func explain<M: Model>(_ descriptor: FetchDescriptor<M>) throws -> String {
        try container.store(for: M.self).plan(descriptor).description
    }

    /// Reads the models related to `models` through the named relationships, in one read transaction, and keeps them.
    private func prefetch<M: Model>(_ names: [String], of models: [M]) throws {
        let store = try container.store(for: M.self)
        let ids = models.map(\.id)
        let (found, children) = try container.read { txn -> ([any Model], [ChildrenKey: [UUID]]) in
            var found: [any Model] = []
            var children: [ChildrenKey: [UUID]] = [:]
            for name in names {
                guard let relationship = store.relationshipDescriptions.first(where: { $0.name == name }) else {
                    throw KVStoreError(
                        .invalidModel, entity: store.name, field: name,
                        message: "\(store.name) has no relationship named \(name) to prefetch")
                }
                let target = try container.store(named: entityName(of: relationship.target))
                switch relationship.storage {
                case .field(_, _, _, let references, _):
                    let related = Set(models.flatMap(references))
                    found += try txn.run { try target.anyModels(for: Array(related), in: txn.transaction.pointee) }
                case .inverse(let field, _):
                    let byParent = try txn.run {
                        try target.referrers(to: ids, field: field, in: txn.transaction.pointee)
                    }
                    for id in ids {
                        children[ChildrenKey(entity: target.name, field: field, parent: id)] = byParent[id] ?? []
                    }
                    let all = Array(Set(byParent.values.flatMap { $0 }))
                    found += try txn.run { try target.anyModels(for: all, in: txn.transaction.pointee) }
                }
            }
            return (found, children)
        }
        for model in found { prefetched[ChangeKey(entity: ObjectIdentifier(type(of: model)), id: model.id)] = model }
        prefetchedChildren.merge(children) { _, new in new }
    }

    /// The prefetched children of `parentIDs`, when every parent's list was prefetched.
    func prefetchedChildren<Child: Model>(of parentIDs: [UUID], field: String) -> [UUID: [Child]]? {
        guard !prefetchedChildren.isEmpty else { return nil }
        let entity = Child.entity.name
        var result: [UUID: [Child]] = [:]
        for parent in parentIDs {
            guard let ids = prefetchedChildren[ChildrenKey(entity: entity, field: field, parent: parent)] else {
                return nil
            }
            let children = ids.compactMap {
                prefetched[ChangeKey(entity: ObjectIdentifier(Child.self), id: $0)] as? Child
            }
            guard children.count == ids.count else { return nil }
            if !children.isEmpty { result[parent] = children.sorted { $0.id.isOrdered(before: $1.id) } }
        }
        return result
    }

    /// The pending changes of one entity: a model to insert, or `nil` for a delete.
    private func pending<M: Model>(_ type: M.Type) -> [UUID: M?] {
        var overlay: [UUID: M?] = [:]
        for (key, change) in changes where key.entity == ObjectIdentifier(M.self) {
            switch change {
            case .insert(let model): overlay[key.id] = .some(model as? M)
            case .delete: overlay[key.id] = .some(nil)
            }
        }
        return overlay
    }
}

@available(*, unavailable)
extension ModelContext: Sendable {}
