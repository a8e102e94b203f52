import Foundation
import LMDB

/// Applies delete rules inside one write transaction: it finds everything a delete reaches through cascades, refuses
/// it if a `deny` relationship is blocked, removes references under `nullify`, then deletes the records with their
/// index entries.
///
/// Related models are found per entity and per parent through index reads (one read per deleted model and
/// relationship), never by scanning the related records. A model reached twice, through a cycle or two paths, is
/// deleted once.
struct DeletionEngine {
    /// Where the entity stores of related models are found: the container.
    let stores: any EntityStoreDirectory
    /// Where to record what the delete changes, when the container is observed.
    var changes: ChangeCollector?

    /// A `nullify` to apply: remove `removing` from `field` of `referrers`, models of `store`.
    private struct Nullification {
        let store: any AnyEntityStore
        let field: String
        let referrers: [UUID]
        let removing: Set<UUID>
        /// The deleted model each referrer is nullified for, when changes are collected.
        let causes: [ModelKey: ChangeSet.ModelID]
    }

    /// A `deny` to check once the whole delete is known: the related models must all be deleted too.
    private struct Denial {
        let entity: String
        let relationship: String
        let target: any AnyEntityStore
        let blocking: [UUID]
    }

    /// Deletes the models with `ids` of each entity, and what their delete rules reach.
    ///
    /// - Returns: The IDs deleted, by entity name.
    /// - Throws: ``KVStoreError/deleteDenied`` naming the relationship and how many models block it; the caller's
    ///   transaction must then be abandoned, which writes nothing.
    @discardableResult
    func delete(
        _ requests: [(store: any AnyEntityStore, ids: [UUID])], in txn: borrowing Transaction
    ) throws
        -> [String: Set<UUID>]
    {
        var visited: [String: Set<UUID>] = [:]
        var deleting: [String: Set<UUID>] = [:]
        var order: [(store: any AnyEntityStore, ids: [UUID])] = []
        // Each batch carries, when changes are collected, the deleted model whose cascade reached each of its IDs.
        var queue: [(store: any AnyEntityStore, ids: [UUID], causes: [ModelKey: ChangeSet.ModelID])] = requests.map {
            ($0.store, $0.ids, [:])
        }
        var nullifications: [Nullification] = []
        var denials: [Denial] = []
        // Why each model reached by a rule is deleted, for the change log; a model reached twice keeps the first.
        var cascades: [String: [ModelKey: ChangeSet.ModelID]] = [:]
        while !queue.isEmpty {
            let (store, candidates, causes) = queue.removeFirst()
            var fresh: [UUID] = []
            // Taken out while it grows, so that each insert changes it in place.
            var reached = causes.isEmpty ? [:] : cascades.removeValue(forKey: store.name) ?? [:]
            for id in candidates where visited[store.name, default: []].insert(id).inserted {
                if try store.exists(id, in: txn) {
                    fresh.append(id)
                    deleting[store.name, default: []].insert(id)
                    if !causes.isEmpty, let cause = causes[ModelKey(id)] { reached[ModelKey(id)] = cause }
                }
            }
            if !reached.isEmpty { cascades[store.name] = reached }
            guard !fresh.isEmpty else { continue }
            order.append((store, fresh))
            for relationship in store.allRelationships {
                // Only rules that act read the related models: noAction leaves them as they are, and nullify has
                // nothing to do on a stored side, whose references go with the deleted records.
                let stored = relationship.inverseField == nil
                if relationship.deleteRule == .noAction || (relationship.deleteRule == .nullify && stored) { continue }
                let target = try stores.store(named: relationship.target)
                let related: [UUID]
                var referrersByParent: [UUID: [UUID]] = [:]
                if let inverseField = relationship.inverseField {
                    referrersByParent = try target.referrers(to: fresh, field: inverseField, in: txn)
                    related = referrersByParent.values.flatMap { $0 }
                } else if changes != nil {
                    // The change log names the parent of each model a rule reaches: read the references per parent.
                    for parent in fresh {
                        referrersByParent[parent] = try store.storedReferences(
                            of: [parent], relationship: relationship.name, in: txn)
                    }
                    related = referrersByParent.values.flatMap { $0 }
                } else {
                    related = try store.storedReferences(of: fresh, relationship: relationship.name, in: txn)
                }
                guard !related.isEmpty else { continue }
                let causes = changes == nil ? [:] : Self.causes(referrersByParent, parentEntity: store.name)
                switch relationship.deleteRule {
                case .cascade:
                    queue.append((target, related, causes))
                case .deny:
                    denials.append(
                        Denial(entity: store.name, relationship: relationship.name, target: target, blocking: related))
                case .nullify:
                    // Only a derived side leaves references behind, in the related models' fields.
                    if let inverseField = relationship.inverseField {
                        nullifications.append(
                            Nullification(
                                store: target, field: inverseField, referrers: related, removing: Set(fresh),
                                causes: causes))
                    }
                case .noAction:
                    break
                }
            }
        }
        for denial in denials {
            let deleted = deleting[denial.target.name] ?? []
            var blocking = Set<UUID>()
            for id in denial.blocking where !deleted.contains(id) {
                if try denial.target.exists(id, in: txn) { blocking.insert(id) }
            }
            if !blocking.isEmpty {
                throw KVStoreError(
                    .deleteDenied, entity: denial.entity, field: denial.relationship,
                    message: "Cannot delete \(denial.entity): its relationship \(denial.relationship) (deny) has "
                        + "\(blocking.count) related \(denial.target.name) model\(blocking.count == 1 ? "" : "s"); "
                        + "nothing of this save was written")
            }
        }
        // The referrers are rewritten before the deletes, but logged after them, where the delete that causes
        // each rewrite stands.
        let firstNullification = changes?.entryCount ?? 0
        // The causes stay set only while the rules run, even when a write fails and the caller goes on.
        defer {
            changes?.nullifying = [:]
            changes?.cascading = [:]
        }
        for nullification in nullifications {
            let deleted = deleting[nullification.store.name] ?? []
            // In key order, so that writes append and the change log comes out the same on every run.
            let survivors = nullification.referrers.filter { !deleted.contains($0) }.sorted { $0.isOrdered(before: $1) }
            if !survivors.isEmpty {
                if let changes {
                    changes.nullifying[nullification.store.name, default: [:]].merge(nullification.causes) { first, _ in
                        first
                    }
                }
                let removing = nullification.removing
                try nullification.store.rewriteReferences(
                    in: nullification.field, of: survivors, through: { removing.contains($0) ? nil : $0 }, in: txn,
                    changes: changes)
            }
        }
        let firstDelete = changes?.entryCount ?? 0
        changes?.nullifying = [:]
        changes?.cascading = cascades
        for (store, ids) in order {
            try store.deleteModels(ids, in: txn, changes: changes)
        }
        changes?.moveToEnd(firstNullification..<firstDelete)
        return deleting
    }

    /// The parent each related model is reached from, the first in key order where there are several.
    private static func causes(
        _ referrersByParent: [UUID: [UUID]], parentEntity: String
    ) -> [ModelKey: ChangeSet.ModelID] {
        var causes: [ModelKey: ChangeSet.ModelID] = [:]
        causes.reserveCapacity(referrersByParent.values.reduce(0) { $0 + $1.count })
        for parent in referrersByParent.keys.sorted(by: { $0.isOrdered(before: $1) }) {
            let cause = ChangeSet.ModelID(entity: parentEntity, id: parent)
            for child in referrersByParent[parent] ?? [] {
                // Most models have one parent: one lookup inserts, and the rare second parent puts the first back.
                if let first = causes.updateValue(cause, forKey: ModelKey(child)) { causes[ModelKey(child)] = first }
            }
        }
        return causes
    }
}

/// Finds the store of an entity by name, for the engine's work across entities (delete rules reach related models of
/// entities the program may not declare).
protocol EntityStoreDirectory {
    /// The store of the entity named `name`: one the models declare, or one of the store's that they do not.
    ///
    /// - Throws: ``KVStoreError/unknownEntity`` when the store has no entity of that name.
    func store(named name: String) throws -> any AnyEntityStore
}
