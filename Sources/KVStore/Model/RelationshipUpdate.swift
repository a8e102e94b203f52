import Foundation

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
        let unchanged = related.firstID == target?.id && (target == nil || old === target)
        related.assign(target.map { [$0] } ?? [], ids: target.map { [$0.id] } ?? [])
        if unchanged { return }
        if let loader = related.loader {
            loader.relationshipDidChange(of: owner, related: target.map { [$0] } ?? [])
            return
        }
        guard let inverse = inverseList(of: owner, sharing: related, in: Target.self) else { return }
        if let old { remove(owner, from: inverse.relatedObjects(old)) }
        if let target { append(owner, to: inverse.relatedObjects(target)) }
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
        guard let inverse = inverseList(of: owner, sharing: related, in: Target.self) else { return }
        for target in old where !targets.contains(where: { $0 === target }) {
            remove(owner, from: inverse.relatedObjects(target))
        }
        for target in targets where !old.contains(where: { $0 === target }) {
            append(owner, to: inverse.relatedObjects(target))
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
        let targets = assigned.filter { seen.insert(ObjectIdentifier($0)).inserted }
            .sorted { $0.id.isOrdered(before: $1.id) }
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

    /// The derived to-many property of `Target` that lists the owners of the stored property whose state is
    /// `related` in `owner`.
    private static func inverseList<Owner: PersistentModel, Target: PersistentModel>(
        of owner: Owner, sharing related: RelatedObjects, in _: Target.Type
    ) -> RelationshipProperty<Target>? {
        guard let field = Owner.entity.relationship(of: owner, sharing: related)?.field else { return nil }
        return Target.entity.relationships.first {
            $0.inverseField == field && $0.target == Owner.self && $0.property?.kind == .toMany
        }?.property
    }

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
