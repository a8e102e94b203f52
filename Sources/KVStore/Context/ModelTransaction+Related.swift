import Foundation
import LMDB

/// Reading related models in batches, without one lookup per model (no N+1).
extension ModelTransaction {
    /// The children of each parent, found through the index on the children's to-one field: one index read per
    /// parent, then the children read in key order.
    ///
    /// ```swift
    /// let tasksByProject = try txn.children(of: projectIDs, through: \Task.projectID)
    /// ```
    ///
    /// - Parameters:
    ///   - parentIDs: The parents' IDs.
    ///   - reference: The children's field that holds the parent's ID; it must be indexed (a to-one relationship
    ///     is).
    /// - Returns: Each parent's children, in ID order; parents without children are absent.
    /// - Throws: ``KVStoreError/invalidRelationship`` when `reference` is not indexed, ``KVStoreError/unknownEntity``
    ///   when `Child` is not part of the container, ``KVStoreError/corruptRecord`` when a child's record does not
    ///   decode, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func children<Child: StoredModel>(
        of parentIDs: [UUID],
        through reference: KeyPath<Child, UUID?> & Sendable
    ) throws -> [UUID: [Child]] {
        try children(of: parentIDs, field: ModelIndex<Child>.fieldName(of: reference))
    }

    /// The models whose many-to-many field holds each ID, found through its multi-entry index.
    ///
    /// - Parameters:
    ///   - parentIDs: The IDs to look for.
    ///   - reference: The children's `[UUID]` field; it must be indexed (a many-to-many relationship is).
    /// - Returns: The models holding each ID; IDs no model holds are absent.
    /// - Throws: ``KVStoreError/invalidRelationship`` when `reference` is not indexed, ``KVStoreError/unknownEntity``
    ///   when `Child` is not part of the container, ``KVStoreError/corruptRecord`` when a child's record does not
    ///   decode, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func children<Child: StoredModel>(
        of parentIDs: [UUID],
        through reference: KeyPath<Child, [UUID]> & Sendable
    ) throws -> [UUID: [Child]] {
        try children(of: parentIDs, field: ModelIndex<Child>.fieldName(of: reference))
    }

    /// The models that `sources` reference through a to-one field, read in one batch.
    ///
    /// - Parameters:
    ///   - sources: The referencing models, such as tasks.
    ///   - reference: Their field holding the related ID, such as `\Task.projectID`.
    ///   - type: The related model type.
    /// - Returns: The related models by ID; dangling IDs are absent.
    /// - Throws: ``KVStoreError/unknownEntity`` when `Target` is not part of the container,
    ///   ``KVStoreError/corruptRecord`` when a related record does not decode, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func related<Source: StoredModel, Target: StoredModel>(
        _ sources: [Source],
        through reference: KeyPath<Source, UUID?>,
        as type: Target.Type
    ) throws -> [UUID: Target] {
        try models(byID: Set(sources.compactMap { $0[keyPath: reference] }), as: Target.self)
    }

    /// The models that `sources` reference through a many-to-many field, read in one batch.
    ///
    /// - Parameters:
    ///   - sources: The referencing models, such as tasks.
    ///   - reference: Their `[UUID]` field, such as `\Task.tagIDs`.
    ///   - type: The related model type.
    /// - Returns: The related models by ID; dangling IDs are absent.
    /// - Throws: ``KVStoreError/unknownEntity`` when `Target` is not part of the container,
    ///   ``KVStoreError/corruptRecord`` when a related record does not decode, or ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be read.
    public func related<Source: StoredModel, Target: StoredModel>(
        _ sources: [Source],
        through reference: KeyPath<Source, [UUID]>,
        as type: Target.Type
    ) throws -> [UUID: Target] {
        try models(byID: Set(sources.flatMap { $0[keyPath: reference] }), as: Target.self)
    }

    func children<Child: StoredModel>(of parentIDs: [UUID], field: String) throws -> [UUID: [Child]] {
        try run { try container.store(for: Child.self).children(of: parentIDs, field: field, in: transaction.pointee) }
    }

    private func models<Target: StoredModel>(byID ids: Set<UUID>, as type: Target.Type) throws -> [UUID: Target] {
        var result: [UUID: Target] = [:]
        for case .some(let model) in try models(for: Array(ids), as: Target.self) { result[model.id] = model }
        return result
    }
}

extension ModelContext {
    /// The children of each parent through the children's to-one field, with this context's pending changes laid
    /// over the stored ones, in one read transaction: one index read per parent, then the children in key order.
    /// Children prefetched by a fetch are served from memory.
    ///
    /// A pending insert is listed under the parent its field names (and no longer under the one it was stored with);
    /// a pending delete is not listed.
    ///
    /// - Throws: ``KVStoreError/closed`` after the container closed, ``KVStoreError/schemaChanged`` when the store's
    ///   schema moved past the container's models, or what the transaction's `children(of:through:)` throws:
    ///   ``KVStoreError/invalidRelationship`` for a field without an index, ``KVStoreError/unknownEntity``,
    ///   ``KVStoreError/corruptRecord``.
    public func children<Child: Model>(
        of parentIDs: [UUID],
        through reference: KeyPath<Child, UUID?> & Sendable
    ) throws -> [UUID: [Child]] {
        let stored =
            try prefetchedChildren(of: parentIDs, field: ModelIndex<Child>.fieldName(of: reference))
            ?? container.read { txn in try txn.children(of: parentIDs, through: reference) }
        return overlaid(stored, parents: parentIDs) { child in child[keyPath: reference].map { [$0] } ?? [] }
    }

    /// The models whose many-to-many field holds each ID, with this context's pending changes laid over the stored
    /// ones, in one read transaction.
    ///
    /// - Throws: ``KVStoreError/closed`` after the container closed, ``KVStoreError/schemaChanged`` when the store's
    ///   schema moved past the container's models, or what the transaction's `children(of:through:)` throws:
    ///   ``KVStoreError/invalidRelationship`` for a field without an index, ``KVStoreError/unknownEntity``,
    ///   ``KVStoreError/corruptRecord``.
    public func children<Child: Model>(
        of parentIDs: [UUID],
        through reference: KeyPath<Child, [UUID]> & Sendable
    ) throws -> [UUID: [Child]] {
        let stored = try container.read { txn in try txn.children(of: parentIDs, through: reference) }
        return overlaid(stored, parents: parentIDs) { $0[keyPath: reference] }
    }

    /// The models that `sources` reference through a to-one field, as this context sees them (a pending insert in
    /// place of the stored model, a pending delete absent), in one read transaction.
    ///
    /// - Throws: What ``models(for:as:)`` throws.
    public func related<Source: Model, Target: Model>(
        _ sources: [Source],
        through reference: KeyPath<Source, UUID?>,
        as type: Target.Type
    ) throws -> [UUID: Target] {
        try models(byID: Set(sources.compactMap { $0[keyPath: reference] }), as: Target.self)
    }

    /// The models that `sources` reference through a many-to-many field, as this context sees them, in one read
    /// transaction.
    ///
    /// - Throws: What ``models(for:as:)`` throws.
    public func related<Source: Model, Target: Model>(
        _ sources: [Source],
        through reference: KeyPath<Source, [UUID]>,
        as type: Target.Type
    ) throws -> [UUID: Target] {
        try models(byID: Set(sources.flatMap { $0[keyPath: reference] }), as: Target.self)
    }

    private func models<Target: Model>(byID ids: Set<UUID>, as type: Target.Type) throws -> [UUID: Target] {
        var result: [UUID: Target] = [:]
        for case .some(let model) in try models(for: Array(ids), as: Target.self) { result[model.id] = model }
        return result
    }
}
