import Foundation

/// What to fetch: which models (a predicate), in what order, and how many.
///
/// ```swift
/// var descriptor = FetchDescriptor<Task>(
///     predicate: #Predicate { $0.projectID == projectID && !$0.isDone },
///     sortBy: [SortDescriptor(\.dueDate)])
/// descriptor.fetchLimit = 20
/// let tasks = try context.fetch(descriptor)
/// ```
///
/// The store answers equality and range predicates on indexed attributes, `contains` on multi-entry indexes, and
/// sorts on an indexed attribute with a limit, from the indexes; anything else is evaluated over every record. Ask
/// ``ModelContext/explain(_:)-(FetchDescriptor<M>)`` which plan a descriptor gets.
public struct FetchDescriptor<M: StoredModel>: Sendable {
    // The stored properties whose layout does not depend on the model come first and the predicate last: the module's
    // code, generic over the model, then reads them at fixed offsets, without looking up the descriptor's metadata.

    /// The expression of ``predicate``, kept beside it for the planner.
    ///
    /// In the module's generic code, reading the expression out of `predicate` copies the optional predicate
    /// through run-time lookups of its types, over a thousand instructions a query. Made where the model's type is
    /// known (the inlinable initializer, or the setter of `predicate`), it is read for the cost of a load.
    @usableFromInline
    var predicateExpression: (any StandardPredicateExpression<Bool>)?

    /// The order of the results; the first descriptor sorts first.
    public var sortBy: [SortDescriptor<M>]

    /// The most models to return, or `nil` for all.
    public var fetchLimit: Int?

    /// How many matching models to skip first.
    public var fetchOffset: Int

    /// Relationships of the fetched models (by name, as declared in their ``Entity``) whose related models
    /// ``ModelContext/fetch(_:)-9vvf6`` reads in the same transaction, in batches, and keeps: later calls to
    /// ``ModelContext/model(for:as:)-7noy``, ``ModelContext/models(for:as:)`` and
    /// ``ModelContext/children(of:through:)-(_,KeyPath<Child,UUID?>Sendable)`` for them read no store. Like SwiftData's `relationshipKeyPathsForPrefetching`.
    public var relationshipsToPrefetch: [String]

    /// The condition models must meet, or `nil` for all.
    public var predicate: Predicate<M>? {
        didSet { predicateExpression = predicate?.expression }
    }

    /// Creates a descriptor.
    ///
    /// - Parameters:
    ///   - predicate: The condition models must meet, or `nil` for all.
    ///   - sortBy: The order of the results.
    ///
    /// Inlinable, so that the caller's code, which knows the model's type, makes the descriptor: made in the module's
    /// generic code, it looked up the metadata of `Predicate<M>?` at every query.
    @inlinable
    public init(predicate: Predicate<M>? = nil, sortBy: [SortDescriptor<M>] = []) {
        self.predicateExpression = predicate?.expression
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
        self.fetchOffset = 0
        self.relationshipsToPrefetch = []
    }
}

// What a fetch does with the models it read, written once for the engine's fetch and the context's, which adds its
// unsaved changes to what the engine read before it sorts and pages.
extension FetchDescriptor {
    /// Whether `model` matches the predicate; every model does when there is none.
    ///
    /// - Throws: What the predicate throws as it evaluates the model.
    @inline(__always)
    func matches(_ model: M) throws -> Bool {
        try predicate?.evaluate(model) ?? true
    }

    /// `results`, models that match, in the descriptor's order (sorted here unless they come `alreadySorted`, from
    /// an ordered index read), and then the part of them its offset and limit select.
    ///
    /// Models that tie on the sort come in ID order, whatever order they were read in (a scan's is that order
    /// already, which the sort passes through in one run): so a fetch's order does not depend on the index it read,
    /// nor on the pending changes merged in, even for strings, whose `<` is not a total order on this platform.
    func sortedPage(of results: consuming [M], alreadySorted: Bool = false) -> [M] {
        if !alreadySorted && !sortBy.isEmpty {
            results.sortByID()
            results.sort(using: sortBy)
        }
        return page(of: results)
    }

    /// The descriptor without its offset and limit: every match, for a reader that pages after merging other models
    /// in.
    var unpaged: Self {
        var descriptor = self
        descriptor.fetchLimit = nil
        descriptor.fetchOffset = 0
        return descriptor
    }

    /// The part of sorted `results` that the offset and limit select.
    func page(of results: [M]) -> [M] {
        let start = min(max(fetchOffset, 0), results.count)
        let end = fetchLimit.map { min(start + max($0, 0), results.count) } ?? results.count
        // Every result: the array itself, not a copy of it through a slice.
        if start == 0 && end == results.count { return results }
        return Array(results[start..<end])
    }
}
