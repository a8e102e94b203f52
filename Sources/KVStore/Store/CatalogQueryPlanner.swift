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
/// could miss records. The keys are read with ``IndexCandidates``, as a fetch reads them; a range is read in key order
/// between the bounds ``IndexLookup/storedRange(hash:)`` gives.
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
    /// The lookup reads keys of an index (equalities) or a range of its keys (comparisons and prefixes on one field,
    /// after equalities on the fields before it in a compound index). It may return records that do not meet every
    /// constraint (those it does not cover, and values whose key LMDB's limit cut): the caller checks each candidate
    /// record against all of them.
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
            case .compare(let field, let comparison, let value): .compare(field, comparison.predicateOperator, value)
            case .prefix(let field, let prefix): .prefix(field, prefix)
            }
        }
        guard let best = QueryPlanner.bestCandidate(for: terms, indexes: usable) else { return nil }
        let name: String
        let reading: IndexLookup.Reading
        switch best.plan {
        case .keys(let index, let keys):
            (name, reading) = (index, .keys(keys))
        case .range(let index, let lower, let upper, _):
            let bound = { (bound: QueryPlan.Bound) in IndexKeyBound(key: bound.key, isInclusive: bound.isInclusive) }
            (name, reading) = (index, .range(lower: lower.map(bound), upper: upper.map(bound)))
        case .scan, .ordered, .union, .intersection:
            return nil
        }
        guard let index = indexes.first(where: { $0.name == name }) else { return nil }
        return IndexLookup(
            index: index, reading: reading, fixedFields: best.fixedAttributes,
            description: QueryPlanner.describe(best.plan, uniqueIndexes: index.isUnique ? [name] : []))
    }
}

/// A constraint on a stored field that an index can answer.
package enum FieldConstraint: Sendable, Equatable {
    /// The field (a top-level name, or a dotted path into nested objects) holds the value, as index keys compare
    /// values: one key of a plain or compound index.
    case equal(field: String, value: RecordValue)
    /// The field is an array with an element equal to the value: one key of a multi-entry index.
    case containsElement(field: String, value: RecordValue)
    /// The field's value compares with the value as their index keys do: a range of the keys of a plain index, or of
    /// a compound index after equalities on the fields before the field.
    case compare(field: String, FieldComparison, value: RecordValue)
    /// The field is a string whose key begins with the prefix's (its NFC form's UTF-8 begins with the prefix's): a
    /// range of keys, as ``compare(field:_:value:)`` gives.
    case prefix(field: String, String)
}

/// How a ``FieldConstraint/compare(field:_:value:)`` constraint compares the field with its value.
package enum FieldComparison: Sendable, Equatable, CaseIterable {
    /// The field's value is less than the constraint's.
    case lessThan
    /// The field's value is less than or equal to the constraint's.
    case lessThanOrEqual
    /// The field's value is greater than the constraint's.
    case greaterThan
    /// The field's value is greater than or equal to the constraint's.
    case greaterThanOrEqual

    /// The planner's operator for the comparison.
    var predicateOperator: PredicateExpressions.ComparisonOperator {
        switch self {
        case .lessThan: .lessThan
        case .lessThanOrEqual: .lessThanOrEqual
        case .greaterThan: .greaterThan
        case .greaterThanOrEqual: .greaterThanOrEqual
        }
    }
}

/// Where a query's candidate records are: keys of one index, or a range of its keys.
package struct IndexLookup: Sendable, Equatable {
    /// What the lookup reads of the index.
    package enum Reading: Sendable, Equatable {
        /// The entries under these keys, in ascending byte order, whole: finalize each with the store's
        /// ``LongKeyHash`` to read it.
        case keys([[UInt8]])
        /// The entries whose whole keys lie between the bounds, `nil` for an open end. Read them through
        /// ``IndexLookup/storedRange(hash:)``.
        case range(lower: IndexKeyBound?, upper: IndexKeyBound?)
    }

    /// The index, as the catalog describes it.
    package let index: IndexCatalog
    /// What the lookup reads.
    package let reading: Reading
    /// For a range of a compound index, how many of its first fields an equality fixes (the range is on the next
    /// one, or, when no comparison narrows it, spans every key that begins with the fixed fields' components).
    package let fixedFields: Int
    /// The library's one-line description of the plan, as a fetch's `explain` gives it: `index projectID: 1 key`,
    /// `unique index email: 1 key`, `index n: range (00, 0180000000000005)` (keys in hexadecimal).
    package let description: String

    /// Creates a lookup.
    ///
    /// - Parameters:
    ///   - index: The index, as the catalog describes it.
    ///   - reading: What the lookup reads.
    ///   - fixedFields: For a range of a compound index, how many of its first fields an equality fixes.
    ///   - description: The plan's one-line description.
    package init(index: IndexCatalog, reading: Reading, fixedFields: Int = 0, description: String) {
        self.index = index
        self.reading = reading
        self.fixedFields = fixedFields
        self.description = description
    }

    /// The keys a keys lookup reads; empty for a range.
    package var keys: [[UInt8]] {
        if case .keys(let keys) = reading { keys } else { [] }
    }

    /// Whether the range's bounds are whole keys shorter than the part of a cut key that is kept, so that every stored
    /// key, cut or not, lies between them exactly when its value meets the comparisons they come from (a cut key
    /// keeps more than either bound holds, and compares with it as its whole key does); `false` for keys.
    ///
    /// A prefix whose key is longer is cut by the planner to what a cut key keeps, so that its range holds the cut
    /// keys; such a range holds values that do not begin with the prefix.
    package var hasWholeBounds: Bool {
        guard case .range(let lower, let upper) = reading else { return false }
        return [lower, upper].allSatisfy { ($0?.key.count ?? 0) < IndexKey.keptPrefix }
    }

    /// The stored keys to read for a range: each bound finalized with `hash`, and a bound whose key is cut widened
    /// to every key of its cut prefix (cut keys that share a prefix sort by hash, not by value), as a fetch reads a
    /// range; `nil` for keys. Every entry whose whole key lies in the range lies in these bounds; entries outside the
    /// whole range are among them only when a bound was widened, and are told apart by their records.
    ///
    /// - Parameter hash: How the store completes index keys that LMDB's limit cuts.
    package func storedRange(hash: LongKeyHash) -> (lower: IndexKeyBound?, upper: IndexKeyBound?)? {
        guard case .range(let lower, let upper) = reading else { return nil }
        func stored(_ bound: IndexKeyBound?, isLower: Bool) -> IndexKeyBound? {
            guard let bound else { return nil }
            let key = IndexKey.finalized(bound.key, hash: hash)
            guard IndexKey.isGrouped(key) else { return IndexKeyBound(key: key, isInclusive: bound.isInclusive) }
            let group = IndexKey.prefixGroup(of: key)
            return IndexKeyBound(key: isLower ? group.lower : group.upper, isInclusive: true)
        }
        return (stored(lower, isLower: true), stored(upper, isLower: false))
    }
}

/// One end of a range of index keys.
package struct IndexKeyBound: Sendable, Equatable {
    /// The key.
    package let key: [UInt8]
    /// Whether keys equal to ``key`` are in the range.
    package let isInclusive: Bool

    /// Creates a bound.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - isInclusive: Whether keys equal to `key` are in the range.
    package init(key: [UInt8], isInclusive: Bool) {
        self.key = key
        self.isInclusive = isInclusive
    }

    /// Whether `key` lies on the range's side of this bound, as the lower bound (`isLower`) or the upper one.
    package func admits(_ key: some Collection<UInt8>, isLower: Bool) -> Bool {
        var order = 0
        var mine = self.key.makeIterator()
        var theirs = key.makeIterator()
        while order == 0 {
            switch (theirs.next(), mine.next()) {
            case (nil, nil): return isInclusive
            case (nil, _): order = -1
            case (_, nil): order = 1
            case (let left?, let right?): order = left < right ? -1 : left > right ? 1 : 0
            }
        }
        return isLower ? order > 0 : order < 0
    }
}

/// An index of the catalog as the planner sees it: its attributes are the indexed fields' names, and each component
/// is the standard key encoding of a ``RecordValue``.
struct CatalogPlannerIndex: PlannableIndex {
    let name: String
    let attributes: [String]
    let isUnique: Bool
    let isMultiEntry: Bool
    let encodeComponents: [KeyComponentEncoder]

    init(_ catalog: IndexCatalog) {
        name = catalog.name
        attributes = catalog.fields
        isUnique = catalog.isUnique
        isMultiEntry = catalog.isMultiEntry
        encodeComponents = Array(repeating: KeyComponentEncoder(Self.encode), count: catalog.fields.count)
    }

    /// A record value's key component, or a string's (the planner encodes a prefix as a `String`); `nil` for
    /// anything else and for values no key holds (data, URLs, decimals, containers).
    private static let encode: @Sendable (Any) -> [UInt8]? = { boxed in
        guard let value = boxed as? RecordValue ?? (boxed as? String).map(RecordValue.string) else { return nil }
        var key: [UInt8] = []
        do {
            try IndexKey.append(value, to: &key)
        } catch {
            return nil
        }
        return key
    }
}
