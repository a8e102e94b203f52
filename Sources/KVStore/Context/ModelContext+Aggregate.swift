import Foundation
import LMDB

// Aggregates through a context: the store's answer for the models the context has not changed, and the context's own
// versions of those it has (inserted, changed or deleted and not saved yet), so that an aggregate agrees with a fetch.
extension ModelContext {
    /// The value of `aggregate` over the models `predicate` matches (all of them when it is `nil`), with this
    /// context's pending changes: computed in one read transaction from the index, the records or the models, in that
    /// order of preference (see ``Aggregate``), then corrected with the models this context inserted, changed or
    /// deleted.
    ///
    /// ```swift
    /// let hours = try context.aggregate(.sum(\.estimate), matching: #Predicate { $0.projectID == projectID })
    /// ```
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum does not fit its type, ``KVStoreError/closed`` after
    ///   the container closed, ``KVStoreError/corruptRecord`` when a stored record does not decode,
    ///   ``KVStoreError/unknownEntity`` when `M` is not part of the container, what the predicate throws as it
    ///   evaluates a model, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func aggregate<M: Model, R>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil
    ) throws
        -> R
    {
        if aggregate.operation == .count, let count = try fetchCount(FetchDescriptor(predicate: predicate)) as? R {
            return count
        }
        let store = try container.store(for: M.self)
        let changes = pending.changes(of: M.self)
        let state = aggregate.makeState()
        try container.read { txn in
            try txn.run {
                try store.aggregate(
                    aggregate, into: state, predicate: predicate, excluding: Set(changes.keys),
                    in: txn.transaction.pointee)
            }
        }
        for case .some(let model) in changes.values where try predicate?.evaluate(model) ?? true {
            try state.add(model)
        }
        return try state.result()
    }

    /// The value of `aggregate` over the models `predicate` matches, with this context's pending changes, for each
    /// value of the attribute at `keyPath` that one of them holds (`nil` is a group of its own).
    ///
    /// ```swift
    /// let hoursByProject = try context.aggregate(.sum(\.estimate), groupedBy: \.projectID)
    /// ```
    ///
    /// - Throws: What ``aggregate(_:matching:)-tanr`` throws.
    public func aggregate<M: Model, R, G: Hashable>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil,
        groupedBy keyPath: KeyPath<M, G> & Sendable
    ) throws -> [G: R] {
        try grouped(aggregate, predicate: predicate, by: .value(keyPath))
    }

    /// The value of `aggregate` over the models `predicate` matches, with this context's pending changes, for each
    /// element of the array attribute at `keyPath` (a model is in the group of each element it holds, and in none
    /// when its array is empty).
    ///
    /// - Throws: What ``aggregate(_:matching:)-tanr`` throws.
    public func aggregate<M: Model, R, E: Hashable>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil,
        groupedBy keyPath: KeyPath<M, [E]> & Sendable
    ) throws -> [E: R] {
        try grouped(aggregate, predicate: predicate, by: .elements(keyPath))
    }

    private func grouped<M: Model, R, G: Hashable>(
        _ aggregate: Aggregate<M, R>, predicate: Predicate<M>?, by grouping: AggregateGrouping<M, G>
    ) throws -> [G: R] {
        let store = try container.store(for: M.self)
        let changes = pending.changes(of: M.self)
        var groups: [G: AggregateState<M, R>] = [:]
        try container.read { txn in
            try txn.run {
                try store.aggregate(
                    aggregate, groupedBy: grouping, into: &groups, predicate: predicate, excluding: Set(changes.keys),
                    in: txn.transaction.pointee)
            }
        }
        for case .some(let model) in changes.values where try predicate?.evaluate(model) ?? true {
            for group in grouping.groups(model) {
                let state = groups[group] ?? aggregate.makeState()
                groups[group] = state
                try state.add(model)
            }
        }
        return try groups.mapValues { try $0.result() }
    }

    /// How ``aggregate(_:matching:)-tanr`` computes `aggregate` over the models `predicate` matches,
    /// when the context has no pending change of `M`: from an index's keys alone (`sum(estimate): index estimate
    /// keys`), from the records a plan finds, each read for the attribute alone (`sum(estimate): records of index
    /// projectID: 1 key`), or from the models a plan finds, the predicate evaluated on each (`sum(estimate): models
    /// of scan`). A count is counted as ``fetchCount(_:)-2zb79`` counts: `count: entries of index total: range ...`
    /// for a predicate an index answers exactly, `count: models of ...` otherwise.
    ///
    /// - Throws: ``KVStoreError/unknownEntity`` when `M` is not part of the container.
    public func explain<M: StoredModel, R>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil
    ) throws
        -> String
    {
        let store = try container.store(for: M.self)
        if aggregate.operation == .count {
            // Counted as fetchCount counts: the table's size, the entries of an exact plan, or the models it finds.
            guard let predicate else { return "count: the table's count of records" }
            let planned = store.plan(FetchDescriptor(predicate: predicate))
            return "count: " + (planned.isExact ? "entries of " : "models of ") + planned.description
        }
        return "\(aggregate): " + store.describe(store.aggregateRead(aggregate, predicate: predicate, grouped: false))
    }
}

// Aggregates of reference models: the store's answer for the objects this context holds unchanged or does not hold,
// and the objects it changed, inserted or deleted counted as they are now.
extension ModelContext {
    /// The value of `aggregate` over the objects `predicate` matches (all of them when it is `nil`), with this
    /// context's unsaved changes: computed from the index or the records, in one read transaction, when an index
    /// answers the predicate exactly or there is none (see ``Aggregate``), then corrected with the objects this
    /// context inserted, changed or deleted; otherwise from the objects a fetch gives.
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum does not fit its type, or what
    ///   ``fetch(_:)-3tbhk`` throws.
    public func aggregate<M: PersistentModel, R>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil
    ) throws -> R {
        let state = aggregate.makeState()
        try forEachUnsavedOrStored(aggregate, predicate: predicate) { store, excluded, txn in
            try store.aggregate(aggregate, into: state, predicate: predicate, excluding: excluded, in: txn)
        } add: { object in
            try state.add(object)
        }
        return try state.result()
    }

    /// The value of `aggregate` over the objects `predicate` matches, with this context's unsaved changes, for each
    /// value of the attribute at `keyPath` that one of them holds (`nil` is a group of its own).
    ///
    /// - Throws: What ``aggregate(_:matching:)-655sc`` throws.
    public func aggregate<M: PersistentModel, R, G: Hashable>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil,
        groupedBy keyPath: KeyPath<M, G> & Sendable
    ) throws -> [G: R] {
        try grouped(aggregate, predicate: predicate, by: .value(keyPath))
    }

    /// The value of `aggregate` over the objects `predicate` matches, with this context's unsaved changes, for each
    /// element of the array attribute at `keyPath`.
    ///
    /// - Throws: What ``aggregate(_:matching:)-655sc`` throws.
    public func aggregate<M: PersistentModel, R, E: Hashable>(
        _ aggregate: Aggregate<M, R>, matching predicate: Predicate<M>? = nil,
        groupedBy keyPath: KeyPath<M, [E]> & Sendable
    ) throws -> [E: R] {
        try grouped(aggregate, predicate: predicate, by: .elements(keyPath))
    }

    private func grouped<M: PersistentModel, R, G: Hashable>(
        _ aggregate: Aggregate<M, R>, predicate: Predicate<M>?, by grouping: AggregateGrouping<M, G>
    ) throws -> [G: R] {
        var groups: [G: AggregateState<M, R>] = [:]
        try forEachUnsavedOrStored(aggregate, predicate: predicate) { store, excluded, txn in
            try store.aggregate(
                aggregate, groupedBy: grouping, into: &groups, predicate: predicate, excluding: excluded, in: txn)
        } add: { object in
            for group in grouping.groups(object) {
                let state = groups[group] ?? aggregate.makeState()
                groups[group] = state
                try state.add(object)
            }
        }
        return try groups.mapValues { try $0.result() }
    }

    /// Runs `stored` over the store without the objects this context changed, inserted or deleted, then `add` with
    /// each changed or inserted object that matches `predicate`; or, when the predicate needs evaluating on objects
    /// (which read their relationships through this context), `add` with each object a fetch gives.
    private func forEachUnsavedOrStored<M: PersistentModel, R>(
        _ aggregate: Aggregate<M, R>, predicate: Predicate<M>?,
        stored: (EntityStore<M>, Set<UUID>, borrowing Transaction) throws -> Void, add: (M) throws -> Void
    ) throws {
        let store = try container.store(for: M.self)
        if case .models = store.aggregateRead(aggregate, predicate: predicate, grouped: false) {
            for object in try fetch(FetchDescriptor(predicate: predicate)) { try add(object) }
            return
        }
        let (changed, deleted) = try unsavedObjects(of: M.self, store: store, includingDeleted: true)
        let excluded = deleted.union(changed.keys)
        try container.read { txn in try txn.run { try stored(store, excluded, txn.transaction.pointee) } }
        for object in changed.values where try predicate?.evaluate(object) ?? true { try add(object) }
    }
}
