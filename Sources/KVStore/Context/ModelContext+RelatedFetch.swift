import Foundation

// Fetches across a to-one relationship (see RelatedFetchDescriptor): the parents, then their children through the
// reference field's index.
extension ModelTransaction {
    /// The children `descriptor` describes: the parents its parent descriptor fetches, then their children through
    /// the reference field's index, in one read transaction (see ``RelatedFetchDescriptor``).
    ///
    /// - Throws: ``KVStoreError/invalidRelationship`` when the reference field is not indexed, or what
    ///   ``fetch(_:)`` throws for either entity.
    public func fetch<Child: StoredModel, Parent: StoredModel>(
        _ descriptor: RelatedFetchDescriptor<Child, Parent>
    ) throws -> [Child] {
        let parentIDs =
            descriptor.parent.sortBy.isEmpty
            ? try fetchIdentifiers(descriptor.parent) : try fetch(descriptor.parent).map(\.id)
        return try descriptor.result(
            parentIDs: parentIDs, children: children(of: parentIDs, field: descriptor.referenceField))
    }
}

extension ModelContext {
    /// The children `descriptor` describes, with this context's pending changes: the parents its parent descriptor
    /// fetches, then their children through the reference field's index (see ``RelatedFetchDescriptor``).
    ///
    /// - Throws: ``KVStoreError/invalidRelationship`` when the reference field is not indexed, or what
    ///   ``fetch(_:)-9vvf6`` throws for either entity.
    public func fetch<Child: Model, Parent: Model>(
        _ descriptor: RelatedFetchDescriptor<Child, Parent>
    ) throws
        -> [Child]
    {
        let parentIDs =
            descriptor.parent.sortBy.isEmpty
            ? try fetchIdentifiers(descriptor.parent) : try fetch(descriptor.parent).map(\.id)
        let stored: [UUID: [Child]] = try container.read { txn in
            try txn.children(of: parentIDs, field: descriptor.referenceField)
        }
        let children = overlaid(stored, parents: parentIDs) { child in descriptor.parentID(child).map { [$0] } ?? [] }
        return try descriptor.result(parentIDs: parentIDs, children: children)
    }

    /// The children `descriptor` describes, as this context's objects with its unsaved changes: the parents its
    /// parent descriptor fetches, then their children through the relationship's index (see
    /// ``RelatedFetchDescriptor``). A child whose relationship this context changed is placed by its relationship as
    /// it is now.
    ///
    /// - Throws: ``KVStoreError/invalidRelationship`` when the relationship has no index, or what
    ///   ``fetch(_:)-3tbhk`` throws for either entity.
    public func fetch<Child: PersistentModel, Parent: PersistentModel>(
        _ descriptor: RelatedFetchDescriptor<Child, Parent>
    ) throws -> [Child] {
        let parentIDs = try fetch(descriptor.parent).map(\.id)
        let store = try container.store(for: Child.self)
        let stored = try container.read { txn in
            try txn.run {
                try store.referrers(to: parentIDs, field: descriptor.referenceField, in: txn.transaction.pointee)
            }
        }
        // The objects this context changed are placed by their relationship now; the others where the index has them.
        let (changed, deleted) = try unsavedObjects(of: Child.self, store: store, includingDeleted: true)
        var children: [UUID: [Child]] = [:]
        for (parentID, ids) in stored {
            let unchanged = ids.filter { changed[$0] == nil && !deleted.contains($0) }
            children[parentID] = try heldOrRead(Child.self, ids: unchanged).compactMap { $0 }
        }
        let selected = Set(parentIDs)
        for object in changed.values {
            guard let parentID = descriptor.parentID(object), selected.contains(parentID) else { continue }
            children[parentID, default: []].append(object)
        }
        for parentID in children.keys { children[parentID]?.sortByID() }
        return try descriptor.result(parentIDs: parentIDs, children: children)
    }

    /// How a fetch of `descriptor` reads the store: the parents' plan, then the index of the children's reference
    /// field, one key per parent: `parents: index isArchived: 1 key; then children: index projectID, 1 key per
    /// parent`.
    ///
    /// - Throws: ``KVStoreError/unknownEntity`` when either model is not part of the container,
    ///   ``KVStoreError/invalidRelationship`` when the reference field is not indexed.
    public func explain<Child: StoredModel, Parent: StoredModel>(
        _ descriptor: RelatedFetchDescriptor<Child, Parent>
    ) throws -> String {
        let field = descriptor.referenceField
        let children = try container.store(for: Child.self)
        guard let index = children.indexes.first(where: { $0.description.fields == [field] }) else {
            throw KVStoreError(
                .invalidRelationship, entity: children.name, field: field,
                message: "\(children.name) has no index on \(field), which a relationship needs")
        }
        let parents = try explain(descriptor.parent)
        return "parents: \(parents); then children: index \(index.description.name), 1 key per parent"
    }
}
