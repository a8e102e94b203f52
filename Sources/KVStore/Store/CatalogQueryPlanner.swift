import Foundation

/// Plans a query over stored records, whose constraints name fields rather than key paths, over an entity's indexes
/// as the catalog describes them: the planner of tools that read a store without its program's types (`kvtool count
/// --where`, `kvtool list --where`).
///
/// It chooses as a fetch chooses: the constraints become the planner's terms with field names as attributes, the
/// catalog's indexes become ``PlannableIndex`` values whose components are the standard key encoding of record
/// values (``IndexKey/append(_:to:)``, the encoding ``RecordIndexKeys`` derives index entries with), and
/// ``QueryPlanner/bestCandidate(for:indexes:)`` picks the index and the keys, ranking candidates the same way.
/// Only indexes that are ready (fully built) and derivable (their keys are that standard encoding) are used; any other
/// could miss records. The keys are read with ``IndexCandidates``, as a fetch reads them.
///
/// ```swift
/// let lookup = CatalogQueryPlanner.lookup(
///     for: [.equal(field: "projectID", value: .uuid(projectID))], indexes: task.indexes)
/// // lookup?.index.name == "projectID", lookup?.keys.count == 1
/// ```
package enum CatalogQueryPlanner {
    /// The index lookup that finds every record meeting all of `constraints`, or `nil` when no ready, derivable
    /// index answers any of them (the caller scans the record table then).
    ///
    /// The lookup may return records that do not meet every constraint (those it does not cover, and values whose
    /// key LMDB's limit cut): the caller checks each candidate record against all of them.
    ///
    /// - Parameters:
    ///   - constraints: What the records must meet, all of it.
    ///   - indexes: The entity's indexes as the catalog lists them, in declaration order (which breaks ties).
    package static func lookup(for constraints: [FieldConstraint], indexes: [IndexCatalog]) -> IndexLookup? {
        let usable = indexes.filter { $0.isReady && $0.isDerivable }.map(CatalogPlannerIndex.init)
        let terms = constraints.map { constraint -> QueryPlanner.Term<String> in
            switch constraint {
            case .equal(let field, let value): .equal(field, value)
            case .containsElement(let field, let value): .containsElement(field, value)
            }
        }
        guard let best = QueryPlanner.bestCandidate(for: terms, indexes: usable),
            case .keys(let name, let keys) = best.plan,
            let index = indexes.first(where: { $0.name == name })
        else { return nil }
        return IndexLookup(index: index, keys: keys)
    }
}

/// A constraint on a stored field that an index can answer.
package enum FieldConstraint: Sendable, Equatable {
    /// The field (a top-level name, or a dotted path into nested objects) holds the value, as index keys compare
    /// values: one key of a plain or compound index.
    case equal(field: String, value: RecordValue)
    /// The field is an array with an element equal to the value: one key of a multi-entry index.
    case containsElement(field: String, value: RecordValue)
}

/// Where a query's candidate records are: the keys of one index.
package struct IndexLookup: Sendable, Equatable {
    /// The index, as the catalog describes it.
    package let index: IndexCatalog
    /// The keys in ascending byte order, whole: finalize each with the store's ``LongKeyHash`` to read it.
    package let keys: [[UInt8]]

    package init(index: IndexCatalog, keys: [[UInt8]]) {
        self.index = index
        self.keys = keys
    }
}

/// An index of the catalog as the planner sees it: its attributes are the indexed fields' names, and each component
/// is the standard key encoding of a ``RecordValue``.
struct CatalogPlannerIndex: PlannableIndex {
    let name: String
    let attributes: [String]
    let isUnique: Bool
    let isMultiEntry: Bool
    let encodeComponents: [@Sendable (Any) -> [UInt8]?]

    init(_ catalog: IndexCatalog) {
        name = catalog.name
        attributes = catalog.fields
        isUnique = catalog.isUnique
        isMultiEntry = catalog.isMultiEntry
        encodeComponents = Array(repeating: Self.encode, count: catalog.fields.count)
    }

    /// A record value's key component, or `nil` for anything else and for values no key holds (data, URLs,
    /// decimals, containers).
    private static let encode: @Sendable (Any) -> [UInt8]? = { value in
        guard let value = value as? RecordValue else { return nil }
        var key: [UInt8] = []
        do {
            try IndexKey.append(value, to: &key)
        } catch {
            return nil
        }
        return key
    }
}
