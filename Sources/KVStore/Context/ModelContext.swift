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

    /// The changes that ``save()`` writes, and the overlay that reads lay over the store.
    var pending = PendingChanges()

    /// The author that the store's change history records for this context's saves (`"importer"`, `"sync"`), as
    /// SwiftData's `ModelContext.author`; `nil` records the container's ``ModelConfiguration/historyAuthor``. It only
    /// matters once the store records history (``ModelContainer/enableHistory(retention:)``).
    public var author: String?

    private struct ChangeKey: Hashable {
        let entity: ObjectIdentifier
        let id: UUID
    }

    /// Models read ahead by a fetch's `relationshipsToPrefetch`, until the next save or rollback.
    private var prefetched: [ChangeKey: any StoredModel] = [:]
    /// Children lists read ahead, by child entity, field and parent.
    private var prefetchedChildren: [ChildrenKey: [UUID]] = [:]

    private struct ChildrenKey: Hashable {
        let entity: String
        let field: String
        let parent: UUID
    }

    /// The ``PersistentModel`` objects the context holds, one per model.
    var tracked = TrackedObjects()
    /// The encoder of the objects' comparison encodings, reused so that each costs no setup.
    var comparisonEncoder = RecordEncoder()
    /// The encodings of the objects whose snapshots are encodings (their classes have no ``ObjectLayout``) that the
    /// last recording of changes found changed: their snapshots once a save writes them. (A copy of an object's
    /// attributes is retaken in place when a save writes it.)
    var changedEncodings: [ObjectIdentifier: [UInt8]] = [:]
    /// Changes whenever a relationship of an object the context holds changed, so that lists of related objects
    /// computed before are computed again.
    var relationshipGeneration = 0
    /// The estimated bytes of pages the last save's transaction changed in the tables of the entities it wrote (see
    /// ``WriteFootprint``). `nil` when saves are not measured; a chunked insert of classes sets it (to 0) so that its
    /// saves are, and sizes its chunks by it.
    var lastSaveChangedBytes: Int?
    /// The link through which the relationship properties of the context's objects reach it (see ``LoaderLink``).
    lazy var loaderLink = LoaderLink(self)

    /// The last error a relationship property of an object of this context met as it read related objects: such a
    /// property cannot throw, and reads `nil` or no objects instead. `nil` until a read fails.
    public internal(set) var relationshipError: (any Error)?

    /// Creates a context on a container.
    public init(_ container: ModelContainer) {
        self.container = container
    }

    /// Whether there are changes that ``save()`` would write.
    ///
    /// It is true after any ``insert(_:)-2csnj``, ``delete(_:)-6a0h7`` or ``modify(_:_:)`` until ``save()`` or ``rollback()``;
    /// it does not compare the pending models with the stored ones. For the ``PersistentModel`` objects the context
    /// holds, it is true when one was inserted or deleted, or changed since it was fetched: the answer costs a check
    /// of each object held (a comparison of its attributes' bytes, or an encoding; see the Reference Models article).
    public var hasChanges: Bool {
        // The objects' changes as they are now, not as the last fetch recorded them.
        guard (try? recordTrackedChanges()) != nil else { return !pending.isEmpty || trackedObjectsHaveChanges() }
        return !pending.isEmpty
    }

    /// Registers `model` to be saved: inserted, or replacing the stored model with the same ID.
    public func insert<M: Model>(_ model: M) {
        pending.record(.insert(model), of: M.self, id: model.id)
    }

    /// Changes `model` and registers the changed model to be saved: the value-type spelling of SwiftData's
    /// `task.isDone.toggle()` followed by `save()`.
    ///
    /// Models are values, so changing a fetched copy changes nothing by itself; `modify` changes the copy you hold
    /// and records it as a pending change in one step, and ``hasChanges`` is true afterwards. Reads through this
    /// context see the change at once; ``save()`` writes it.
    ///
    /// ```swift
    /// var task = try context.fetch(FetchDescriptor<Task>())[0]
    /// try context.modify(&task) { $0.isDone.toggle() }
    /// try context.save()
    /// ```
    ///
    /// When `change` throws or changes the model's ID, neither `model` nor the context changes.
    ///
    /// - Parameters:
    ///   - model: The model to change.
    ///   - change: Changes the model; it must keep the model's ID.
    /// - Throws: ``KVStoreError/invalidModel`` when `change` changes the model's ID, or what `change` throws.
    public func modify<M: Model>(_ model: inout M, _ change: (inout M) throws -> Void) throws {
        model = try changed(model, by: change)
        insert(model)
    }

    /// Changes the model of type `type` with `id`, as this context sees it, and registers the changed model to be
    /// saved.
    ///
    /// ```swift
    /// try context.modify(Task.self, id: taskID) { $0.title = "Renamed" }
    /// try context.save()
    /// ```
    ///
    /// - Parameters:
    ///   - type: The model type.
    ///   - id: The model's ID.
    ///   - change: Changes the model; it must keep the model's ID.
    /// - Returns: The changed model.
    /// - Throws: ``KVStoreError/modelNotFound`` when neither the store nor this context's pending changes hold a
    ///   model of `type` with `id` (or it is pending deletion), ``KVStoreError/invalidModel`` when `change` changes
    ///   the model's ID, what `change` throws, or what ``model(for:as:)-7noy`` throws.
    @discardableResult
    public func modify<M: Model>(_ type: M.Type, id: UUID, _ change: (inout M) throws -> Void) throws -> M {
        guard let model = try model(for: id, as: M.self) else {
            throw KVStoreError(
                .modelNotFound, entity: M.entity.name, id: id,
                message: "There is no \(M.entity.name) \(id) to modify: it was never saved, or it was deleted")
        }
        let result = try changed(model, by: change)
        insert(result)
        return result
    }

    /// `model` as `change` leaves it, checked to keep its ID.
    private func changed<M: Model>(_ model: M, by change: (inout M) throws -> Void) throws -> M {
        var copy = model
        try change(&copy)
        guard copy.id == model.id else {
            throw KVStoreError(
                .invalidModel, entity: M.entity.name, id: model.id,
                message: "modify must not change a model's ID (it became \(copy.id)): insert a new model instead")
        }
        return copy
    }

    /// Registers `model` to be deleted.
    public func delete<M: Model>(_ model: M) {
        delete(M.self, id: model.id)
    }

    /// Registers the model of type `type` with `id` to be deleted.
    public func delete<M: Model>(_ type: M.Type, id: UUID) {
        pending.record(.delete(M.self), of: M.self, id: id)
    }

    /// Writes every pending change in one write transaction, keeping the indexes in step, then forgets them.
    ///
    /// Within an entity, models are written in ID order, which appends time-ordered IDs at the end of the tree.
    ///
    /// A model new to the store whose value a unique constraint with `onConflict: .update` finds held by another
    /// stored model merges into it, as SwiftData's `@Attribute(.unique)` does; the result says which ID survived.
    ///
    /// - Returns: Which inserted models merged into stored ones (``SaveResult/storedID(of:)``).
    /// - Throws: ``KVStoreError/uniqueViolation`` and the other write errors; nothing of the save is written then,
    ///   and the changes stay pending.
    @discardableResult
    public func save() throws -> SaveResult {
        // Recording the changes lets go of the unchanged objects nothing else references, and the effects below of
        // the objects the save wrote that nothing else references.
        try recordTrackedChanges()
        guard !pending.isEmpty else { return SaveResult(mergedIDs: [:]) }
        let (merged, deleted, written) = try writePending()
        // Until each type's effects complete, its inserted objects may have lost the changes that recorded them.
        for (_, table) in tracked.tables { table.insertsMayBeUnrecorded = true }
        pending.removeAll()
        forgetPrefetched()
        for (type, table) in tracked.tables {
            try table.operations.didSave(self, merged: merged, written: written[type] ?? [])
        }
        changedEncodings.removeAll()
        if deleted {
            for operations in tracked.operations { try operations.reconcileAfterDeletes(self) }
        }
        relationshipGeneration += 1
        return SaveResult(mergedIDs: merged)
    }

    /// Writes the pending changes in one write transaction.
    ///
    /// - Returns: Which inserted models merged into stored ones, whether a model was deleted, and the IDs written by
    ///   model type, in the order they were written (key order, which for time-ordered IDs is the order the models
    ///   were made, and so mostly the order of their objects in memory).
    private func writePending() throws -> (merged: [UUID: UUID], deleted: Bool, written: [ObjectIdentifier: [UUID]]) {
        // A copy (of its tables' references), so that the locations stay valid in it whatever happens to `pending`,
        // and reading it needs no exclusivity check per change.
        let changes = pending
        let locations = changes.inSaveOrder
        var deleted = false
        let merged = try container.write { txn -> [UUID: UUID] in
            if let author { txn.historyAuthor = author }
            let footprints =
                lastSaveChangedBytes == nil ? [] : try footprints(of: locations, in: changes, txn: txn)
            var merged: [UUID: UUID] = [:]
            var deletes: [(store: any AnyEntityStore, ids: [UUID])] = []
            deleted = false
            for location in locations {
                switch changes.change(at: location) {
                case .insert(let model):
                    let stored = try txn.insert(model)
                    if stored != location.id { merged[location.id] = stored }
                case .delete(let type):
                    deleted = true
                    let store = try container.store(named: entityName(of: type))
                    if let last = deletes.last, last.store === store {
                        deletes[deletes.count - 1].ids.append(location.id)
                    } else {
                        deletes.append((store, [location.id]))
                    }
                }
            }
            // Deletes run after the inserts, all in one pass of the delete rules.
            if !deletes.isEmpty { try txn.delete(deletes) }
            if !footprints.isEmpty {
                var bytes = 0
                for (footprint, writes) in footprints {
                    let lmdb = txn.transaction
                    bytes += try txn.run { try footprint.changedBytes(afterWriting: writes, in: lmdb.pointee) }
                }
                lastSaveChangedBytes = bytes
            }
            return merged
        }
        // The changes of one entity are adjacent: each run is one list.
        var written: [ObjectIdentifier: [UUID]] = [:]
        var run: (entity: ObjectIdentifier, ids: [UUID])?
        for location in locations {
            if run?.entity != location.entity {
                if let run { written[run.entity] = run.ids }
                run = (location.entity, [])
            }
            run?.ids.append(location.id)
        }
        if let run { written[run.entity] = run.ids }
        return (merged, deleted, written)
    }

    /// The estimates of the pages `txn` changes in the tables of each entity of the changes at `locations` in
    /// `changes` (whose changes of one entity are adjacent), begun before it writes them, with the number of changes
    /// of each.
    private func footprints(
        of locations: [PendingChanges.Location], in changes: PendingChanges, txn: borrowing ModelTransaction
    ) throws -> [(footprint: WriteFootprint, writes: Int)] {
        func modelEntityName<T: StoredModel>(_: T) -> String { T.entity.name }
        // Each entity's run of changes, with its first ID: the changes of an entity are in key order.
        var runs: [(entity: PendingChanges.EntityKey, name: String, firstID: UUID, writes: Int)] = []
        for location in locations {
            if let last = runs.last, last.entity == location.entity {
                runs[runs.count - 1].writes += 1
                continue
            }
            let name =
                switch changes.change(at: location) {
                case .insert(let model): modelEntityName(model)
                case .delete(let type): entityName(of: type)
                }
            runs.append((location.entity, name, location.id, 1))
        }
        return try runs.map { run in
            let store = try container.store(named: run.name)
            let footprint = try txn.run {
                try WriteFootprint(store: store, firstID: run.firstID, in: txn.transaction.pointee)
            }
            return (footprint, run.writes)
        }
    }

    /// Forgets every pending change, and the models prefetched so far. The ``PersistentModel`` objects the context
    /// holds take the values they were fetched with again (the same objects), inserted ones leave it and deleted ones
    /// come back.
    public func rollback() {
        pending.removeAll()
        forgetPrefetched()
        for operations in tracked.operations { operations.rollBack(self) }
        changedEncodings.removeAll()
        tracked.releaseUnreferenced()
        relationshipGeneration += 1
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
        if let state = pending.state(of: M.self, id: id) { return state }
        if let model = prefetched[ChangeKey(entity: ObjectIdentifier(M.self), id: id)] as? M { return model }
        return try container.read { txn in try txn.model(for: id, as: M.self) }
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
        let stored: [M?]
        if !prefetched.isEmpty, ids.allSatisfy({ prefetched[ChangeKey(entity: entity, id: $0)] != nil }) {
            stored = ids.map { prefetched[ChangeKey(entity: entity, id: $0)] as? M }
        } else {
            stored = try container.read { txn in try txn.models(for: ids, as: M.self) }
        }
        return pending.overlaid(stored, ids: ids)
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

    private func fetchWithPendingChanges<M: StoredModel>(_ descriptor: FetchDescriptor<M>) throws -> [M] {
        guard pending.hasChanges(of: M.self) else { return try container.read { txn in try txn.fetch(descriptor) } }
        // Pending changes may enter or leave the page, so fetch everything that matches, then page.
        let stored = try container.read { txn in try txn.fetch(descriptor.unpaged) }
        return descriptor.sortedPage(of: try pending.overlaid(stored, matching: descriptor.matches))
    }

    /// The number of models that match `descriptor`'s predicate, with the context's pending changes: counted in the
    /// index, without reading a stored model, when the index answers the predicate exactly (see
    /// ``ModelTransaction/fetchCount(_:)``); the changed models are read to correct the count.
    ///
    /// - Throws: What ``fetch(_:)-9vvf6`` throws.
    public func fetchCount<M: Model>(_ descriptor: FetchDescriptor<M>) throws -> Int {
        let changes = pending.changes(of: M.self)
        guard !changes.isEmpty else { return try container.read { txn in try txn.fetchCount(descriptor) } }
        // The stored count, less the changed models that match as stored, plus the pending inserts that match.
        let ids = Array(changes.keys)
        let (count, stored) = try container.read { txn in
            (try txn.fetchCount(descriptor), try txn.models(for: ids, as: M.self))
        }
        var result = count
        for case .some(let model) in stored where try descriptor.matches(model) { result -= 1 }
        for case .some(let model) in changes.values where try descriptor.matches(model) { result += 1 }
        return result
    }

    /// The IDs of the models that match `descriptor`, in its order: read from the index, without reading a model,
    /// when the context has no pending change of `M` and the index answers the predicate exactly (see
    /// ``ModelTransaction/fetchIdentifiers(_:)``).
    ///
    /// - Throws: What ``fetch(_:)-9vvf6`` throws.
    public func fetchIdentifiers<M: Model>(_ descriptor: FetchDescriptor<M>) throws -> [UUID] {
        guard pending.hasChanges(of: M.self) else {
            return try container.read { txn in try txn.fetchIdentifiers(descriptor) }
        }
        return try fetch(descriptor).map(\.id)
    }

    /// Calls `body` with the models that match `descriptor`'s predicate, `batchSize` stored models at a time, each
    /// batch read in a transaction of its own so memory stays bounded whatever the store's size. Models come in ID
    /// order (creation order for time-ordered IDs), with this context's pending changes laid over the stored ones: a
    /// pending insert that matches comes in the batch where its ID falls (so a batch can hold more than `batchSize`),
    /// a pending delete does not come.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the descriptor sorts or pages, what `body` or the predicate
    ///   throws, or what ``fetch(_:)-9vvf6`` throws.
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
        let changes = pending.changes(of: M.self)
        // The pending inserts that match, in key order, each given to the batch whose keys reach past its own.
        let inserts = try changes.values.compactMap { $0 }.filter(descriptor.matches).map {
            (key: recordKey($0.id), $0)
        }
        .sorted { $0.key.lexicographicallyPrecedes($1.key) }
        var nextInsert = inserts.startIndex
        var after: [UInt8]? = nil
        while true {
            let page = try container.read { txn in
                try txn.run {
                    try store.page(after: after, limit: batchSize, in: txn.transaction.pointee) { model in
                        try changes[model.id] == nil && descriptor.matches(model)
                    }
                }
            }
            var models = page.models
            let firstInsert = nextInsert
            while nextInsert < inserts.endIndex,
                page.isLast || !(page.lastKey ?? []).lexicographicallyPrecedes(inserts[nextInsert].key)
            {
                nextInsert += 1
            }
            if firstInsert < nextInsert {
                models += inserts[firstInsert..<nextInsert].map(\.1)
                models.sortByID()
            }
            if !models.isEmpty { try body(models) }
            if page.isLast { return }
            after = page.lastKey
        }
    }

    /// The key of the record of `id`.
    private func recordKey(_ id: UUID) -> [UInt8] {
        withKey(id) { Array($0) }
    }

    /// How a fetch of `descriptor` reads the store, in one line: `scan`, or which index and keys (the formats are
    /// listed in <doc:FetchingAndThePlanner>). When the predicate allows several plans, the choice is the one a fetch
    /// makes now, by the store's counts, read in a read transaction.
    ///
    /// - Throws: ``KVStoreError/unknownEntity`` when `M` is not part of the container, ``KVStoreError/closed`` after
    ///   it closed, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func explain<M: StoredModel>(_ descriptor: FetchDescriptor<M>) throws -> String {
        let store = try container.store(for: M.self)
        let planned = store.plan(descriptor)
        guard descriptor.predicate != nil else { return planned.description }
        return try container.read { txn in
            try txn.run { try store.refined(planned, descriptor: descriptor, in: txn.transaction.pointee).description }
        }
    }

    /// How a fetch of `descriptor` reads the store, as a tree whose every step says how many entries it reads,
    /// counted in the store now; `(exact)` when the index answers the predicate, and for a sorted fetch, whether the
    /// plan reads in the sort's order or sorts after:
    ///
    /// ```text
    /// intersection: ~40 rows
    ///   index account: 1 key: 25 rows
    ///   index category: 1 key: 60 rows
    /// then sorted
    /// ```
    ///
    /// `~` marks an estimate (an intersection holds at most as many as its smallest part).
    ///
    /// - Throws: What ``explain(_:)-(FetchDescriptor<M>)`` throws.
    public func explainTree<M: StoredModel>(_ descriptor: FetchDescriptor<M>) throws -> String {
        let store = try container.store(for: M.self)
        return try container.read { txn in
            try txn.run { try store.explanation(of: descriptor, in: txn.transaction.pointee) }
        }
    }

    /// Reads the models related to `models` through the named relationships, in one read transaction, and keeps them.
    func prefetch<M: StoredModel>(_ names: [String], of models: [M]) throws {
        let store = try container.store(for: M.self)
        let ids = models.map(\.id)
        let (found, children) = try container.read { txn -> ([any StoredModel], [ChildrenKey: [UUID]]) in
            var found: [any StoredModel] = []
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
                case .inverse(let field):
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

    /// Referrers read from the store or the prefetch cache, with this context's pending changes laid over them.
    func overlaid<Child: StoredModel>(
        _ stored: [UUID: [Child]],
        parents parentIDs: [UUID],
        references: (Child) -> [UUID]
    ) -> [UUID: [Child]] {
        pending.overlaid(stored, parents: parentIDs, references: references)
    }

    /// The prefetched children of `parentIDs`, when every parent's list was prefetched.
    func prefetchedChildren<Child: StoredModel>(of parentIDs: [UUID], field: String) -> [UUID: [Child]]? {
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
            if !children.isEmpty { result[parent] = children.sortedByID() }
        }
        return result
    }
}

@available(*, unavailable)
extension ModelContext: Sendable {}
