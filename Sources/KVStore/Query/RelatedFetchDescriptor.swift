import Foundation

/// A fetch of models filtered, and possibly ordered, by the model their to-one relationship points to: "the tasks of
/// the projects that are not archived, newest first", or "open tasks, by their project's name".
///
/// The store plans it as two steps, never by loading every child: the parents that ``parent`` fetches (its predicate
/// planned over the parents' indexes, its sort, offset and limit applied), then the children of each through the
/// index on the children's reference field, read with one cursor, each child checked against ``descriptor``'s
/// predicate. The result is in the parents' order when ``parent`` sorts (the children of one parent in
/// ``descriptor``'s order, then ID order), and in ``descriptor``'s order (then ID order) otherwise; ``descriptor``'s
/// offset and limit then select a page of it.
///
/// ```swift
/// let recent = RelatedFetchDescriptor(
///     FetchDescriptor<Task>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)]),
///     through: \.projectID,
///     parent: FetchDescriptor<Project>(predicate: #Predicate { !$0.isArchived }))
/// let tasks = try context.fetch(recent)
/// print(try context.explain(recent))
/// // parents: index isArchived: 1 key; then children: index projectID, 1 key per parent
/// ```
public struct RelatedFetchDescriptor<Child: StoredModel, Parent: StoredModel>: Sendable {
    /// The children's own predicate and order, and the page of the result.
    public var descriptor: FetchDescriptor<Child>
    /// The children's field that holds their parent's ID; it must be indexed (a to-one relationship's field is).
    public var reference: KeyPath<Child, UUID?> & Sendable
    /// Which parents' children are fetched, and in what order when it sorts.
    public var parent: FetchDescriptor<Parent>

    /// Creates a descriptor of the children of the parents `parent` fetches.
    ///
    /// - Parameters:
    ///   - descriptor: The children's predicate, sort, offset and limit.
    ///   - reference: The children's field that holds their parent's ID.
    ///   - parent: The parents' predicate and sort (and offset and limit, which select the parents).
    public init(
        _ descriptor: FetchDescriptor<Child>, through reference: KeyPath<Child, UUID?> & Sendable,
        parent: FetchDescriptor<Parent>
    ) {
        self.descriptor = descriptor
        self.reference = reference
        self.parent = parent
    }

    /// The children found, in the descriptor's order, then paged: `children` holds each parent's children, which
    /// this filters with the children's predicate; `parentIDs` is the parents in their order.
    ///
    /// - Throws: What the children's predicate throws.
    func result(parentIDs: [UUID], children: [UUID: [Child]]) throws -> [Child] {
        var results: [Child] = []
        guard !parent.sortBy.isEmpty else {
            for id in parentIDs {
                for child in children[id] ?? [] where try descriptor.matches(child) { results.append(child) }
            }
            // In ID order, as a scan gives them, when the descriptor does not sort.
            if descriptor.sortBy.isEmpty { results.sort { $0.id.isOrdered(before: $1.id) } }
            return descriptor.sortedPage(of: results)
        }
        var ordering = descriptor.unpaged
        ordering.fetchLimit = nil
        for id in parentIDs {
            let matching = try (children[id] ?? []).filter(descriptor.matches)
            results += ordering.sortedPage(of: matching.sorted { $0.id.isOrdered(before: $1.id) })
        }
        return descriptor.page(of: results)
    }
}

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
            parentIDs: parentIDs, children: children(of: parentIDs, through: descriptor.reference))
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
        return try descriptor.result(
            parentIDs: parentIDs, children: children(of: parentIDs, through: descriptor.reference))
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
        let field = ModelIndex<Child>.fieldName(of: descriptor.reference)
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
