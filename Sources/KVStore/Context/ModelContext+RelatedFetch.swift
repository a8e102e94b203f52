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
