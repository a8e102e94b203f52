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
    /// The name of the children's field that holds their parent's ID; it must be indexed (a to-one relationship's
    /// field is).
    public let referenceField: String
    /// Which parents' children are fetched, and in what order when it sorts.
    public var parent: FetchDescriptor<Parent>
    /// The parent ID a child holds.
    let parentID: @Sendable (Child) -> UUID?

    /// Creates a descriptor of the children of the parents `parent` fetches, through an optional reference.
    ///
    /// - Parameters:
    ///   - descriptor: The children's predicate, sort, offset and limit.
    ///   - reference: The children's field that holds their parent's ID, such as `\Task.projectID`.
    ///   - parent: The parents' predicate and sort (and offset and limit, which select the parents).
    public init(
        _ descriptor: FetchDescriptor<Child>, through reference: KeyPath<Child, UUID?> & Sendable,
        parent: FetchDescriptor<Parent>
    ) {
        self.descriptor = descriptor
        self.parent = parent
        referenceField = ModelIndex<Child>.fieldName(of: reference)
        parentID = { $0[keyPath: reference] }
    }

    /// Creates a descriptor of the children of the parents `parent` fetches, through a reference every child holds.
    ///
    /// - Parameters:
    ///   - descriptor: The children's predicate, sort, offset and limit.
    ///   - reference: The children's field that holds their parent's ID, such as `\Post.authorID`.
    ///   - parent: The parents' predicate and sort (and offset and limit, which select the parents).
    public init(
        _ descriptor: FetchDescriptor<Child>, through reference: KeyPath<Child, UUID> & Sendable,
        parent: FetchDescriptor<Parent>
    ) {
        self.descriptor = descriptor
        self.parent = parent
        referenceField = ModelIndex<Child>.fieldName(of: reference)
        parentID = { $0[keyPath: reference] }
    }

    /// Creates a descriptor of the children of the parents `parent` fetches, through a to-one relationship property
    /// of reference models (``ToOne``).
    ///
    /// - Parameters:
    ///   - descriptor: The children's predicate, sort, offset and limit.
    ///   - relationship: The children's to-one relationship property, such as `\Task.project`, declared in their
    ///     entity with `Relationship.toOne`.
    ///   - parent: The parents' predicate and sort (and offset and limit, which select the parents).
    public init(
        _ descriptor: FetchDescriptor<Child>, through relationship: KeyPath<Child, Parent?> & Sendable,
        parent: FetchDescriptor<Parent>
    ) where Child: PersistentModel, Parent: PersistentModel {
        self.descriptor = descriptor
        self.parent = parent
        // The relationship's field and the IDs its state holds, read without loading the related object.
        var field: String?
        var storedIDs: (@Sendable (Child) -> [UUID])?
        for declared in Child.entity.relationships {
            guard case .field(let name, false, let index, let ids, _) = declared.storage, index.keyPaths.count == 1,
                index.keyPaths[0] == relationship
            else { continue }
            field = name
            storedIDs = ids
            break
        }
        referenceField = field ?? "\(relationship)"
        if let storedIDs {
            parentID = { storedIDs($0).first }
        } else {
            parentID = { $0[keyPath: relationship]?.id }
        }
    }

    /// The children found, in the descriptor's order, then paged: `children` holds each parent's children, which
    /// this filters with the children's predicate; `parentIDs` is the parents in their order.
    ///
    /// - Throws: What the children's predicate throws.
    func result(parentIDs: [UUID], children: [UUID: [Child]]) throws -> [Child] {
        guard !parent.sortBy.isEmpty else {
            let sink = ModelSink<Child>()
            for id in parentIDs {
                guard let found = children[id] else { continue }
                try Self.collect(found, matching: descriptor.predicate, into: sink)
            }
            var results = sink.take()
            // In ID order, as a scan gives them, when the descriptor does not sort.
            if descriptor.sortBy.isEmpty { results.sortByID() }
            return descriptor.sortedPage(of: results)
        }
        var ordering = descriptor.unpaged
        ordering.fetchLimit = nil
        var results: [Child] = []
        for id in parentIDs {
            guard let found = children[id] else { continue }
            let sink = ModelSink<Child>()
            try Self.collect(found, matching: descriptor.predicate, into: sink)
            results += ordering.sortedPage(of: sink.take().sortedByID())
        }
        return descriptor.page(of: results)
    }

    /// Appends to `sink` the children that `predicate` matches, every one without a predicate.
    ///
    /// The predicate is unwrapped once: evaluating an optional one per child, in code generic over the children's
    /// type, looked up the metadata of `Predicate<Child>` at every child (more than a third of a related fetch).
    ///
    /// - Throws: What the predicate throws.
    private static func collect(
        _ children: [Child], matching predicate: Predicate<Child>?, into sink: ModelSink<Child>
    ) throws {
        guard let predicate else {
            for child in children { sink.append(child) }
            return
        }
        for child in children where try predicate.evaluate(child) { sink.append(child) }
    }
}
