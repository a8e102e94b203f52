import Foundation
import Synchronization

/// What reading and setting relationship properties does: the two sides stay in step.
///
/// In a context, a change notes the owner there (``RelationshipLoader/relationshipDidChange(of:related:)``), which
/// takes new related objects in and makes derived lists compute again, from the store and the context's changes.
/// Outside one (a graph built before its insert), the lists that sides hold in memory are updated here.
enum RelationshipUpdate {
    /// Sets the to-one property whose state is `related` in `owner` to `target`.
    static func setToOne<Owner: PersistentModel, Target: PersistentModel>(
        _ target: Target?, of owner: Owner, related: RelatedObjects
    ) {
        let old = related.objects?.first as? Target
        // Unwrapped rather than mapped: `Optional.map` here, unspecialized, looks up type metadata on every call.
        let (objects, ids): ([AnyObject], [UUID])
        if let target { (objects, ids) = ([target], [target.id]) } else { (objects, ids) = ([], []) }
        let unchanged = related.firstID == ids.first && (target == nil || old === target)
        related.assign(objects, ids: ids)
        if unchanged { return }
        if let loader = related.loader {
            loader.relationshipDidChange(of: owner, related: objects)
            return
        }
        guard let inverse = inverseListOffset(of: owner, sharing: related, in: Target.self) else { return }
        if let old { remove(owner, from: ObjectContents.relatedObjects(in: old, at: inverse)) }
        if let target { append(owner, to: ObjectContents.relatedObjects(in: target, at: inverse)) }
    }

    /// Sets the many-to-many property whose state is `related` in `owner` to `targets`.
    static func setManyToMany<Owner: PersistentModel, Target: PersistentModel>(
        _ targets: [Target], of owner: Owner, related: RelatedObjects
    ) {
        let old = related.manyToMany(Target.self)
        related.assign(targets, ids: targets.map(\.id))
        if let loader = related.loader {
            loader.relationshipDidChange(of: owner, related: targets)
            return
        }
        guard let inverse = inverseListOffset(of: owner, sharing: related, in: Target.self) else { return }
        for target in old where !targets.contains(where: { $0 === target }) {
            remove(owner, from: ObjectContents.relatedObjects(in: target, at: inverse))
        }
        for target in targets where !old.contains(where: { $0 === target }) {
            append(owner, to: ObjectContents.relatedObjects(in: target, at: inverse))
        }
    }

    /// The objects of the derived to-many property whose state is `related` in `owner`: computed through the context
    /// once per change of relationships there, or the list held in memory outside one.
    static func derived<Owner: PersistentModel, Target: PersistentModel>(
        _: Target.Type, of owner: Owner, related: RelatedObjects
    ) -> [Target] {
        guard let loader = related.loader else { return related.objects?.compactMap { $0 as? Target } ?? [] }
        if let objects = related.objects, related.generation == loader.relationshipGeneration {
            return objects.compactMap { $0 as? Target }
        }
        guard let field = Owner.entity.relationship(of: owner, sharing: related)?.inverseField else { return [] }
        let list = loader.loadReferrers(Target.self, field: field, to: owner.id)
        related.objects = list
        related.generation = loader.relationshipGeneration
        return list
    }

    /// Sets the derived to-many property whose state is `related` in `owner` to `targets`: each target added points
    /// at `owner` through its inverse property, and each one removed no longer does.
    static func setDerived<Owner: PersistentModel, Target: PersistentModel>(
        _ assigned: [Target], of owner: Owner, related: RelatedObjects
    ) {
        // A model is in the list once, and the list is in ID order, as it reads from the store.
        var seen = Set<ObjectIdentifier>()
        let targets = assigned.filter { seen.insert(ObjectIdentifier($0)).inserted }.sortedByID()
        let old = derived(Target.self, of: owner, related: related)
        guard let field = Owner.entity.relationship(of: owner, sharing: related)?.inverseField,
            let inverse = storedSide(field, of: Target.self)
        else {
            related.objects = targets
            return
        }
        for target in old where !targets.contains(where: { $0 === target }) {
            let state = inverse.relatedObjects(target)
            switch inverse.kind {
            case .toOne where state.ids == [owner.id]: setToOne(Owner?.none, of: target, related: state)
            case .manyToMany:
                setManyToMany(state.manyToMany(Owner.self).filter { $0 !== owner }, of: target, related: state)
            default: break
            }
        }
        for target in targets where !old.contains(where: { $0 === target }) {
            let state = inverse.relatedObjects(target)
            switch inverse.kind {
            case .toOne: setToOne(owner, of: target, related: state)
            case .manyToMany where !state.ids.contains(owner.id):
                setManyToMany(state.manyToMany(Owner.self) + [owner], of: target, related: state)
            default: break
            }
        }
        // Targets new to the context come in with their owner, which is in it.
        related.loader?.relationshipDidChange(of: owner, related: targets)
        related.objects = targets
        related.generation = related.loader?.relationshipGeneration ?? 0
    }

    /// The property of `Target` that stores the IDs in `field`.
    private static func storedSide<Target: PersistentModel>(
        _ field: String, of _: Target.Type
    ) -> RelationshipProperty<Target>? {
        Target.entity.relationships.first { $0.field == field }?.property
    }

    /// Where the derived to-many property of `Target` lies in a target object (its storage offset), the one that
    /// lists the owners of the stored property whose state is `related` in `owner`; `nil` when `Target` has none.
    private static func inverseListOffset<Owner: PersistentModel, Target: PersistentModel>(
        of owner: Owner, sharing related: RelatedObjects, in _: Target.Type
    ) -> Int? {
        for pair in inverseOffsets(of: Owner.self, in: Target.self)
        where ObjectContents.existingRelatedObjects(in: owner, at: pair.property) === related {
            return pair.inverse
        }
        return nil
    }

    /// The relationship properties of `Owner`, each as its storage offset and that of the derived to-many property of
    /// `Target` that lists the owners through it (`nil` when `Target` has none), in the order of `Owner`'s entity.
    ///
    /// Computed once per pair of types and kept: finding them in the entities looks up generic type metadata a dozen
    /// times, which made every `task.project = project` outside a context cost as much as saving the task.
    private static func inverseOffsets<Owner: PersistentModel, Target: PersistentModel>(
        of _: Owner.Type, in _: Target.Type
    ) -> [(property: Int, inverse: Int?)] {
        let key = InversePair(owner: ObjectIdentifier(Owner.self), target: ObjectIdentifier(Target.self))
        if let known = knownInverseOffsets.withLock({ $0[key] }) { return known }
        var pairs: [(property: Int, inverse: Int?)] = []
        for relationship in Owner.entity.relationships {
            guard let property = relationship.property?.offset else { continue }
            let inverse = relationship.field.flatMap { field in
                Target.entity.relationships.first {
                    $0.inverseField == field && $0.target == Owner.self && $0.property?.kind == .toMany
                }?.property?.offset
            }
            pairs.append((property, inverse))
        }
        knownInverseOffsets.withLock { $0[key] = pairs }
        return pairs
    }

    /// A pair of model types, owner and target, whose ``inverseOffsets(of:in:)`` are known.
    private struct InversePair: Hashable {
        let owner: ObjectIdentifier
        let target: ObjectIdentifier
    }

    /// The ``inverseOffsets(of:in:)`` computed so far. Entities are static, so an entry never changes.
    private static let knownInverseOffsets = Mutex<[InversePair: [(property: Int, inverse: Int?)]]>([:])

    /// Adds `owner` to a derived list held in memory, in place (a graph built before its insert appends each child
    /// of a parent in turn: a copy of the list per append made that quadratic in memory traffic).
    private static func append(_ owner: AnyObject, to list: RelatedObjects) {
        guard list.objects != nil else {
            list.objects = [owner]
            return
        }
        guard !(list.objects?.contains { $0 === owner } ?? false) else { return }
        list.objects?.append(owner)
    }

    /// Removes `owner` from a derived list held in memory.
    private static func remove(_ owner: AnyObject, from list: RelatedObjects) {
        list.objects?.removeAll { $0 === owner }
    }
}
