import Foundation
import LMDB

/// The store's operations inside one transaction, lent to the body of `ModelContainer.read(_:)` or
/// `ModelContainer.write(_:)`.
///
/// Every read sees the same snapshot; in a write transaction, reads see the transaction's own writes, and everything
/// commits together when the body returns, or nothing does when it throws.
///
/// ```swift
/// try container.write { txn in
///     let project = Project(name: "Launch")
///     try txn.insert(project)
///     try txn.insert(Task(title: "Write the README", projectID: project.id))
/// }
/// ```
public struct ModelTransaction: ~Copyable {
    let container: ModelContainer
    /// The LMDB transaction, lent for the length of the body (see ``TransactionHandle``).
    let transaction: TransactionHandle
    /// What a write must check before it commits; `nil` in a read transaction.
    let writes: WriteState?

    /// Whether the transaction can write.
    public var isReadOnly: Bool {
        transaction.pointee.isReadOnly
    }

    /// The author that the store's change history records for this transaction (`"importer"`, `"sync"`): the
    /// container's ``ModelConfiguration/historyAuthor`` unless set here; `nil` in a read transaction, where setting it
    /// does nothing. It only matters once the store records history.
    public var historyAuthor: String? {
        get { writes?.author }
        nonmutating set { writes?.author = newValue }
    }

    /// Saves `model`, replacing the stored model with its ID (an upsert), and updates the indexes.
    ///
    /// - Throws: ``KVStoreError/uniqueViolation`` when another model holds one of its unique values,
    ///   ``KVStoreError/encodingFailed`` when the model does not encode, ``KVStoreError/unknownEntity`` when `M` is not
    ///   part of the container, ``KVStoreError/readOnly`` in a read transaction, or ``KVStoreError/damaged`` or
    ///   ``KVStoreError/storage`` when the store cannot be written.
    ///
    /// References to other models are checked when the transaction ends, so related models may be inserted in any
    /// order within it.
    ///
    /// A model new to the store whose value a unique constraint with `onConflict: .update` finds held by another
    /// stored model merges into that one, as SwiftData's `@Attribute(.unique)` does: the stored model keeps its ID and
    /// takes the new values, and references to the new model's ID saved in this transaction are redirected to it.
    ///
    /// - Returns: The ID the model's values are stored under: `model.id`, or the ID of the stored model it merged
    ///   into.
    @discardableResult
    public func insert<M: StoredModel>(_ model: M) throws -> UUID {
        try run {
            let store = try container.store(for: M.self)
            return try store.save(model, in: transaction.pointee, writes: writes)
        }
    }

    /// Deletes the model of type `type` with `id` and its index entries, applying the delete rules of its
    /// relationships.
    ///
    /// - Returns: The deleted model, or `nil` when there was none.
    /// - Throws: ``KVStoreError/deleteDenied`` when a `.deny` relationship has related models,
    ///   ``KVStoreError/unknownEntity`` when `M` is not part of the container, ``KVStoreError/corruptRecord`` when its
    ///   record does not decode, ``KVStoreError/readOnly`` in a read transaction, or ``KVStoreError/damaged`` or
    ///   ``KVStoreError/storage`` when the store cannot be written.
    @discardableResult
    public func delete<M: StoredModel>(_ type: M.Type, id: UUID) throws -> M? {
        try run {
            let store = try container.store(for: M.self)
            let model = try store.model(for: id, in: transaction.pointee, reader: store.reader)
            guard model != nil else { return nil }
            writes?.hasDeletes = true
            try DeletionEngine(stores: container, changes: writes?.changes).delete(
                [(store, [id])], in: transaction.pointee)
            return model
        }
    }

    /// Deletes the models of type `type` with `ids`, applying delete rules, in this transaction.
    ///
    /// - Returns: How many of the models existed and were deleted (not counting those their rules reached).
    /// - Throws: ``KVStoreError/deleteDenied`` when a `.deny` relationship has related models,
    ///   ``KVStoreError/unknownEntity`` when `M` is not part of the container, ``KVStoreError/readOnly`` in a read
    ///   transaction, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be written.
    @discardableResult
    public func delete<M: StoredModel>(_ type: M.Type, ids: [UUID]) throws -> Int {
        try run {
            writes?.hasDeletes = true
            let store = try container.store(for: M.self)
            let deleted = try DeletionEngine(stores: container, changes: writes?.changes).delete(
                [(store, ids)], in: transaction.pointee)
            return Set(ids).intersection(deleted[store.name] ?? []).count
        }
    }

    /// Deletes, with delete rules, the models of several entities at once.
    func delete(_ requests: [(store: any AnyEntityStore, ids: [UUID])]) throws {
        writes?.hasDeletes = true
        try run {
            _ = try DeletionEngine(stores: container, changes: writes?.changes).delete(
                requests, in: transaction.pointee)
        }
    }

    /// Checks that every reference written in the transaction names a stored model.
    ///
    /// The referenced IDs are looked up in one batch per target entity, in key order through one cursor, each
    /// distinct ID once; the first missing one in the order they were written is reported.
    func verifyReferences() throws {
        guard let writes, !writes.references.isEmpty else { return }
        if !writes.merges.isEmpty { try redirectReferencesToMergedModels(writes) }
        var stores: [String: any AnyEntityStore] = [:]
        func store(_ name: String) throws -> any AnyEntityStore {
            if let store = stores[name] { return store }
            let store = try container.store(named: name)
            stores[name] = store
            return store
        }
        let references = writes.references
        // The positions of the references to each target entity; a transaction references few entities.
        var targets: [(entity: String, positions: [Int])] = []
        for (position, reference) in references.enumerated() {
            if let index = targets.firstIndex(where: { $0.entity == reference.target }) {
                targets[index].positions.append(position)
            } else {
                targets.append((reference.target, [position]))
            }
        }
        var missing: [Int] = []
        for (entity, positions) in targets {
            let ids = positions.map { references[$0].targetID }
            missing += try store(entity).missing(ids, in: transaction.pointee).map { positions[$0] }
        }
        for position in missing.sorted() {
            let reference = references[position]
            if writes.hasDeletes {
                // A model deleted later in the transaction no longer holds its references, and a nullify rule of a
                // later delete may have removed the reference: what counts is the model as it stands at the end.
                let referrer = try store(reference.entity)
                if try !referrer.exists(reference.id, in: transaction.pointee) { continue }
                if try !holds(reference, in: referrer) { continue }
            }
            throw KVStoreError(
                .missingReference, entity: reference.entity, id: reference.id, field: reference.field,
                message: "\(reference.entity) \(reference.id): \(reference.field) references \(reference.target) "
                    + "\(reference.targetID), which does not exist; nothing of this save was written")
        }
        writes.references.removeAll()
    }

    /// Points the references saved to a model that merged into a stored one (``WriteState/merges``) at the stored
    /// one, as SwiftData's relationships follow the object that survives an upsert; those references need no check
    /// then, as their targets are stored.
    private func redirectReferencesToMergedModels(_ writes: WriteState) throws {
        let merges = writes.merges
        var referrers: [String: [String: Set<UUID>]] = [:]
        for reference in writes.references where merges[reference.targetID] != nil {
            // A referrer that merged itself is stored under its holder's ID.
            referrers[reference.entity, default: [:]][reference.field, default: []].insert(
                merges[reference.id] ?? reference.id)
        }
        guard !referrers.isEmpty else { return }
        writes.references.removeAll { merges[$0.targetID] != nil }
        for (entity, fields) in referrers {
            let store = try container.store(named: entity)
            for (field, ids) in fields {
                try store.rewriteReferences(
                    in: field, of: ids.sorted { $0.isOrdered(before: $1) }, through: { merges[$0] ?? $0 },
                    in: transaction.pointee, changes: writes.changes)
            }
        }
    }

    /// Whether the referring model still holds the reference in its field.
    private func holds(_ reference: PendingReference, in store: any AnyEntityStore) throws -> Bool {
        guard let relationship = store.allRelationships.first(where: { $0.field == reference.field }) else {
            return true
        }
        return try store.storedReferences(of: [reference.id], relationship: relationship.name, in: transaction.pointee)
            .contains(reference.targetID)
    }

    /// The model of type `type` with `id`, or `nil` when there is none.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when the stored bytes do not decode, ``KVStoreError/unknownEntity`` when
    ///   `M` is not part of the container, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func model<M: StoredModel>(for id: UUID, as type: M.Type = M.self) throws -> M? {
        try run {
            let store = try container.store(for: M.self)
            return try store.model(for: id, in: transaction.pointee, reader: store.reader)
        }
    }

    /// The models with the given IDs, in the same order, with `nil` for the IDs that have none.
    ///
    /// The lookups run in key order inside this one transaction.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when a stored record does not decode, ``KVStoreError/unknownEntity``
    ///   when `M` is not part of the container, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func models<M: StoredModel>(for ids: [UUID], as type: M.Type = M.self) throws -> [M?] {
        try run { try container.store(for: M.self).models(for: ids, in: transaction.pointee) }
    }

    /// The models that match `descriptor`.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when a stored record does not decode, ``KVStoreError/unknownEntity``
    ///   when `M` is not part of the container, what the predicate throws as it evaluates a model, or
    ///   ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func fetch<M: StoredModel>(_ descriptor: FetchDescriptor<M>) throws -> [M] {
        try run { try container.store(for: M.self).fetch(descriptor, in: transaction.pointee) }
    }

    /// The number of models that match `descriptor`'s predicate: counted in the index, without reading a model,
    /// when the index answers the predicate exactly (an equality or `contains` on an integer, `Bool`, `UUID` or
    /// string attribute, or on `id`, or comparisons of an integer attribute).
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when a stored record does not decode, ``KVStoreError/unknownEntity``
    ///   when `M` is not part of the container, what the predicate throws as it evaluates a model, or
    ///   ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func fetchCount<M: StoredModel>(_ descriptor: FetchDescriptor<M>) throws -> Int {
        try run { try container.store(for: M.self).count(descriptor, in: transaction.pointee) }
    }

    /// The IDs of the models that match `descriptor`, in its order: read from the index, without reading a model,
    /// when the index answers the predicate exactly (as for ``fetchCount(_:)``) in the descriptor's order.
    ///
    /// - Throws: What ``fetch(_:)->[M]`` throws.
    public func fetchIdentifiers<M: StoredModel>(_ descriptor: FetchDescriptor<M>) throws -> [UUID] {
        try run { try container.store(for: M.self).identifiers(descriptor, in: transaction.pointee) }
    }

    /// The value of `aggregate` over the models `predicate` matches (all of them when it is `nil`), computed in this
    /// transaction from the index, the records or the models, in that order of preference (see ``Aggregate``).
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum does not fit its type, ``KVStoreError/corruptRecord``
    ///   when a stored record does not decode, ``KVStoreError/unknownEntity`` when `M` is not part of the container,
    ///   what the predicate throws as it evaluates a model, or ``KVStoreError/damaged`` or ``KVStoreError/storage``
    ///   when the store cannot be read.
    public func aggregate<M: StoredModel, R>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil
    )
        throws -> R
    {
        try run {
            let state = aggregate.makeState()
            try container.store(for: M.self).aggregate(
                aggregate, into: state, predicate: predicate, excluding: [], in: transaction.pointee)
            return try state.result()
        }
    }

    /// The value of `aggregate` over the models `predicate` matches, for each value of the attribute at `keyPath`
    /// that one of them holds (`nil` is a group of its own).
    ///
    /// - Throws: What ``aggregate(_:matching:)`` throws.
    public func aggregate<M: StoredModel, R, G: Hashable>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil,
        groupedBy keyPath: KeyPath<M, G> & Sendable
    ) throws -> [G: R] {
        try grouped(aggregate, predicate: predicate, by: .value(keyPath))
    }

    /// The value of `aggregate` over the models `predicate` matches, for each element of the array attribute at
    /// `keyPath` (a model is in the group of each element it holds, and in none when its array is empty).
    ///
    /// - Throws: What ``aggregate(_:matching:)`` throws.
    public func aggregate<M: StoredModel, R, E: Hashable>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil,
        groupedBy keyPath: KeyPath<M, [E]> & Sendable
    ) throws -> [E: R] {
        try grouped(aggregate, predicate: predicate, by: .elements(keyPath))
    }

    private func grouped<M: StoredModel, R, G: Hashable>(
        _ aggregate: Aggregate<M, R>, predicate: Predicate<M>?, by grouping: AggregateGrouping<M, G>
    ) throws -> [G: R] {
        try run {
            var groups: [G: AggregateState<M, R>] = [:]
            try container.store(for: M.self).aggregate(
                aggregate, groupedBy: grouping, into: &groups, predicate: predicate, excluding: [],
                in: transaction.pointee)
            return try groups.mapValues { try $0.result() }
        }
    }

    /// Runs `body`, turning binding errors into store errors.
    ///
    /// Always inlined: called apart from a member generic over the model, it looked up the metadata of its result's
    /// type (`[M]`, `M?`) at every call.
    @inline(__always)
    func run<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch {
            throw ModelContainer.mapped(error)
        }
    }
}

@available(*, unavailable)
extension ModelTransaction: Sendable {}
