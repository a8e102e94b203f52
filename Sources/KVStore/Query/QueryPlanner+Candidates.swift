import Foundation
import LMDB

extension QueryPlanner {
    /// One constraint on an attribute, found while walking a predicate's expression tree (the attribute is a key path
    /// from the model) or given by a query over stored records (the attribute is a field's name).
    ///
    /// Values stay boxed until they meet an index, because only the index knows how to encode its attribute.
    enum Term<Attribute> {
        /// `attribute == value`.
        case equal(Attribute, Any)
        /// `attribute <op> value`, with the attribute on the left.
        case compare(Attribute, PredicateExpressions.ComparisonOperator, Any)
        /// `[values].contains(attribute)`.
        case oneOf(Attribute, [Any])
        /// `attribute.contains(value)`, where the attribute is an array.
        case containsElement(Attribute, Any)
        /// `attribute.starts(with: prefix)`, where the attribute is a string.
        case prefix(Attribute, String)
        /// A ready plan, such as the union a disjunction plans for itself.
        case candidate(Candidate)
    }

    /// The constraints of a predicate: its attributes are key paths from the predicate's input.
    typealias KeyPathTerm = Term<AnyKeyPath>

    /// A plan the predicate allows, with what is needed to rank it against the others.
    struct Candidate: Equatable, Sendable {
        /// How the candidate reads records.
        var plan: QueryPlan
        /// Whether the plan's index is unique.
        var isUnique: Bool
        /// How many attributes the index key covers (more is more selective at equal key counts).
        var attributeCount: Int
        /// For a range of a compound index, how many of its first attributes an equality fixes.
        var fixedAttributes = 0
        /// For a union, the tier of its least selective part, at most that of keys.
        var unionTier = 0
        /// For the union of the ranges on both sides of one key (`!=` of a value, `!(a == value)`), that key: the
        /// plan reads every other key, which pays only when that key holds most of the index's entries, as the
        /// store's counts tell (``EntityStore/refined(_:descriptor:in:)``). Such a candidate ranks below every other.
        var excludedKey: [UInt8]?
        /// For the plan a disjunction makes of its sides' (a union, or one index's keys), whether it reads exactly the
        /// models the disjunction matches: each side's plan answers that side exactly
        /// (``QueryPlanner/isExact(_:shape:terms:indexes:)``).
        var isExact = false

        /// The candidate's selectivity class: unique equality (or no key at all) 4, keys or a range of a compound
        /// index within equalities on its first attributes 3, two-sided range 2, one-sided range 1, anything else 0.
        var tier: Int {
            switch plan {
            case .keys(_, let keys): keys.isEmpty || (isUnique && keys.count == 1) ? 4 : 3
            case .range where fixedAttributes > 0: 3
            case .range(_, let lower, let upper, _): lower != nil && upper != nil ? 2 : 1
            case .scan, .ordered: 0
            // Each part is read: as selective as the least selective part, and never one lookup.
            case .union: excludedKey == nil ? unionTier : 0
            case .intersection: 3
            }
        }

        /// Whether the candidate reads records by their IDs (``QueryPlan/recordKey``).
        var readsRecordKeys: Bool {
            if case .keys(QueryPlan.recordKey, _) = plan { true } else { false }
        }

        /// Whether the candidate reads several plans one after the other.
        var isUnion: Bool {
            if case .union = plan { true } else { false }
        }

        /// Whether the candidate reads keys of a unique index, each of them at most one record.
        var readsUniqueKeys: Bool {
            if case .keys = plan { isUnique } else { false }
        }

        /// Whether this candidate should be preferred to another: a higher tier, then one read over a union, then IDs
        /// over index keys (each ID is at most one record, an index key may be many), then fewer keys, then keys of a
        /// unique index, then a key over more attributes, then keys over a range. Ties keep the candidate found first
        /// (index declaration order).
        /// - Parameter other: The best candidate so far.
        func isBetter(than other: Candidate) -> Bool {
            if (excludedKey == nil) != (other.excludedKey == nil) { return excludedKey == nil }
            if tier != other.tier { return tier > other.tier }
            if isUnion != other.isUnion { return !isUnion }
            if readsRecordKeys != other.readsRecordKeys { return readsRecordKeys }
            if case .keys(_, let keys) = plan, case .keys(_, let otherKeys) = other.plan, keys.count != otherKeys.count
            {
                return keys.count < otherKeys.count
            }
            if readsUniqueKeys != other.readsUniqueKeys { return readsUniqueKeys }
            if attributeCount != other.attributeCount { return attributeCount > other.attributeCount }
            // Keys over a range that fixes as much: keys name exactly the entries a range over them would read.
            return readsKeys && !other.readsKeys
        }

        /// Whether the candidate reads keys.
        var readsKeys: Bool {
            if case .keys = plan { true } else { false }
        }
    }

    /// Returns the most selective plan the terms allow on the given indexes, or `nil` when no term is usable.
    ///
    /// This is the index choice of every query of the store: a fetch's (``PlannerIndex``, attributes are key paths)
    /// and a query over stored records by field name (``CatalogQueryPlanner``).
    /// - Parameters:
    ///   - terms: The constraints of a conjunction (or of a single node).
    ///   - indexes: The indexes available.
    static func bestCandidate<Index: PlannableIndex>(
        for terms: [Term<Index.Attribute>], indexes: [Index]
    ) -> Candidate? {
        var best: Candidate?
        var found: [Candidate] = []
        for case .candidate(let candidate) in terms {
            found.append(candidate)
        }
        for index in indexes {
            found += candidates(on: index, terms: terms)
        }
        // A complement reads most of an index unless the store's counts say otherwise: it is never chosen here.
        for candidate in found where candidate.excludedKey == nil && (best.map { candidate.isBetter(than: $0) } ?? true)
        {
            best = candidate
        }
        return best
    }

    /// Returns every plan the terms allow, the best first (``Candidate/isBetter(than:)``), for a store that weighs
    /// them by its counts.
    /// - Parameters:
    ///   - terms: The constraints of a conjunction (or of a single node).
    ///   - indexes: The indexes available.
    static func allCandidates<Index: PlannableIndex>(
        for terms: [Term<Index.Attribute>], indexes: [Index]
    ) -> [Candidate] {
        var found: [Candidate] = []
        for case .candidate(let candidate) in terms {
            found.append(candidate)
        }
        for index in indexes {
            found += candidates(on: index, terms: terms)
        }
        // A stable sort: candidates that tie keep the order bestCandidate meets them in.
        var ranked: [Candidate] = []
        for candidate in found {
            let position = ranked.firstIndex { candidate.isBetter(than: $0) } ?? ranked.endIndex
            ranked.insert(candidate, at: position)
        }
        return ranked
    }

    /// Returns every plan the terms allow on one index.
    /// - Parameters:
    ///   - index: The index to try.
    ///   - terms: The constraints of a conjunction.
    static func candidates<Index: PlannableIndex>(on index: Index, terms: [Term<Index.Attribute>]) -> [Candidate] {
        let attributes = index.attributes
        guard let attribute = attributes.first else { return [] }
        if attributes.count > 1 {
            return index.isMultiEntry ? [] : compoundCandidate(on: index, terms: terms).map { [$0] } ?? []
        }
        func keys(_ keys: [[UInt8]]) -> Candidate {
            Candidate(plan: .keys(index: index.name, keys: keys), isUnique: index.isUnique, attributeCount: 1)
        }
        var found: [Candidate] = []
        for term in terms {
            switch term {
            case .containsElement(let path, let value) where index.isMultiEntry && index.matches(path, attribute):
                if let key = index.encodeComponent(value) { found.append(keys([key])) }
            case .equal(let path, let value) where !index.isMultiEntry && index.matches(path, attribute):
                if let key = index.encodeComponent(value) { found.append(keys([key])) }
            case .oneOf(let path, let values) where !index.isMultiEntry && index.matches(path, attribute):
                let encoded = values.map(index.encodeComponent)
                if encoded.allSatisfy({ $0 != nil }) { found.append(keys(sortedUnique(encoded.compactMap { $0 }))) }
            default:
                break
            }
        }
        // IDs are looked up, not ranged over: their byte order is not the order `<` gives UUIDs.
        if !index.isMultiEntry, index.name != QueryPlan.recordKey,
            let range = rangeCandidate(on: index, attribute: attribute, terms: terms)
        {
            found.append(range)
        }
        return found
    }

    /// Returns the plan on a compound index that the terms allow: one key when every attribute has an equality (the
    /// components concatenated in key order; the first equality on an attribute wins), otherwise the range of the
    /// keys that begin with the components of the equalities on its first attributes, narrowed by the comparisons
    /// and prefixes on the next attribute; `nil` when neither the first attribute has an equality nor has a bound.
    ///
    /// The components of a key are self-delimiting (each begins with a presence byte, a string ends with its
    /// terminator), so the keys that begin with a prefix of components are a contiguous range, in the order of the
    /// next component's values.
    /// - Parameters:
    ///   - index: A compound index.
    ///   - terms: The constraints of a conjunction.
    static func compoundCandidate<Index: PlannableIndex>(on index: Index, terms: [Term<Index.Attribute>]) -> Candidate?
    {
        var everyTermRead = true
        return compoundCandidate(
            on: index, terms: terms, layout: CompoundLayout(of: terms, on: index), everyTermRead: &everyTermRead)
    }

    /// Where the terms of a conjunction fall on the attributes of a compound index: what ``compoundCandidate(on:terms:)``
    /// reads of them, by position. It depends on the terms' attributes and kinds alone, not on their values, so a
    /// plan kept for a predicate's shape (``ComparisonPlans``) makes it once and reads each new set of values
    /// through it.
    struct CompoundLayout: Sendable {
        /// For each attribute, the position of the first equality on it, if any.
        var equalities: [Int?]
        /// For each attribute, the positions of the comparisons on it, in term order.
        var comparisons: [[Int]]
        /// For each attribute, the positions of the prefixes on it, in term order.
        var prefixes: [[Int]]
        /// Whether an attribute has more than one equality (whose values may differ).
        var hasRepeatedEquality = false

        /// The layout of `terms` on `index`.
        init<Index: PlannableIndex>(of terms: [Term<Index.Attribute>], on index: Index) {
            let attributes = index.attributes
            equalities = Array(repeating: nil, count: attributes.count)
            comparisons = Array(repeating: [], count: attributes.count)
            prefixes = Array(repeating: [], count: attributes.count)
            for (position, term) in terms.enumerated() {
                for attribute in attributes.indices {
                    switch term {
                    case .equal(let path, _) where path == attributes[attribute]:
                        if equalities[attribute] == nil {
                            equalities[attribute] = position
                        } else {
                            hasRepeatedEquality = true
                        }
                    case .compare(let path, _, _) where path == attributes[attribute]:
                        comparisons[attribute].append(position)
                    case .prefix(let path, _) where path == attributes[attribute]:
                        prefixes[attribute].append(position)
                    default:
                        continue
                    }
                }
            }
        }
    }

    /// ``compoundCandidate(on:terms:)`` with the terms' `layout` on `index` made already. `everyTermRead` turns
    /// `false` when a comparison or prefix on the ranged attribute was left out because its value does not encode.
    static func compoundCandidate<Index: PlannableIndex>(
        on index: Index, terms: [Term<Index.Attribute>], layout: CompoundLayout, everyTermRead: inout Bool
    ) -> Candidate? {
        let attributes = index.attributes
        guard index.encodeComponents.count == attributes.count, layout.equalities.count == attributes.count else {
            return nil
        }
        var prefix: [UInt8] = []
        var fixed = 0
        for (position, encode) in index.encodeComponents.enumerated() {
            guard let term = layout.equalities[position], case .equal(_, let value) = terms[term],
                let component = encode(value)
            else { break }
            prefix += component
            fixed += 1
        }
        if fixed == attributes.count {
            return Candidate(
                plan: .keys(index: index.name, keys: [prefix]), isUnique: index.isUnique,
                attributeCount: attributes.count)
        }
        var lower: QueryPlan.Bound? = fixed > 0 ? QueryPlan.Bound(key: prefix, isInclusive: true) : nil
        var upper =
            fixed > 0 ? KeyRange.successor(ofPrefix: prefix).map { QueryPlan.Bound(key: $0, isInclusive: false) } : nil
        var isRanged = false
        let encode = index.encodeComponents[fixed]
        for position in layout.comparisons[fixed] {
            guard case .compare(_, let comparison, let value) = terms[position], let component = encode(value) else {
                everyTermRead = false
                continue
            }
            let key = prefix + component
            // The keys whose component equals the value all begin with `key`, and sort before its successor.
            switch comparison {
            case .greaterThanOrEqual:
                lower = tighter(lower, QueryPlan.Bound(key: key, isInclusive: true), isLower: true)
            case .greaterThan:
                guard let next = KeyRange.successor(ofPrefix: key) else {
                    everyTermRead = false
                    continue
                }
                lower = tighter(lower, QueryPlan.Bound(key: next, isInclusive: true), isLower: true)
            case .lessThan: upper = tighter(upper, QueryPlan.Bound(key: key, isInclusive: false), isLower: false)
            case .lessThanOrEqual:
                guard let next = KeyRange.successor(ofPrefix: key) else {
                    everyTermRead = false
                    continue
                }
                upper = tighter(upper, QueryPlan.Bound(key: next, isInclusive: false), isLower: false)
            }
            isRanged = true
        }
        for position in layout.prefixes[fixed] {
            guard case .prefix(_, let text) = terms[position],
                let component = stringPrefixKey(text, encode: encode.encode)
            else {
                everyTermRead = false
                continue
            }
            let key = Array((prefix + component).prefix(IndexKey.keptPrefix))
            lower = tighter(lower, QueryPlan.Bound(key: key, isInclusive: true), isLower: true)
            if let next = KeyRange.successor(ofPrefix: key) {
                upper = tighter(upper, QueryPlan.Bound(key: next, isInclusive: false), isLower: false)
            }
            isRanged = true
        }
        guard fixed > 0 || isRanged else { return nil }
        return Candidate(
            plan: .range(index: index.name, lower: lower, upper: upper), isUnique: index.isUnique,
            attributeCount: fixed + (isRanged ? 1 : 0), fixedAttributes: fixed)
    }

    /// The key component of the strings that begin with `prefix`, under the standard string encoding
    /// (``IndexKey/appendString(_:to:)``): the prefix's component without its terminator; `nil` when `encode` does
    /// not give that encoding.
    static func stringPrefixKey(_ prefix: String, encode: (Any) -> [UInt8]?) -> [UInt8]? {
        guard let key = encode(prefix), key.first == IndexKey.present,
            key.suffix(2).elementsEqual([0, IndexKey.stringTerminator])
        else { return nil }
        return Array(key.dropLast(2))
    }

    /// Merges every comparison and prefix on the index's attribute into one range, keeping the tightest bound on each
    /// side. A comparison whose value does not encode is skipped: the other bounds still cover every match.
    /// - Parameters:
    ///   - index: A single-attribute index that is not multi-entry.
    ///   - attribute: The index's attribute.
    ///   - terms: The constraints of a conjunction.
    static func rangeCandidate<Index: PlannableIndex>(
        on index: Index,
        attribute: Index.Attribute,
        terms: [Term<Index.Attribute>]
    ) -> Candidate? {
        var lower: QueryPlan.Bound?
        var upper: QueryPlan.Bound?
        for case .compare(let path, let comparison, let value) in terms where path == attribute {
            guard let key = index.encodeComponent(value) else { continue }
            switch comparison {
            case .greaterThan: lower = tighter(lower, QueryPlan.Bound(key: key, isInclusive: false), isLower: true)
            case .greaterThanOrEqual:
                lower = tighter(lower, QueryPlan.Bound(key: key, isInclusive: true), isLower: true)
            case .lessThan: upper = tighter(upper, QueryPlan.Bound(key: key, isInclusive: false), isLower: false)
            case .lessThanOrEqual: upper = tighter(upper, QueryPlan.Bound(key: key, isInclusive: true), isLower: false)
            }
        }
        for case .prefix(let path, let prefix) in terms where path == attribute {
            guard let (from, to) = prefixBounds(prefix, on: index) else { continue }
            lower = tighter(lower, from, isLower: true)
            if let to { upper = tighter(upper, to, isLower: false) }
        }
        guard lower != nil || upper != nil else { return nil }
        return Candidate(
            plan: .range(index: index.name, lower: lower, upper: upper),
            isUnique: index.isUnique,
            attributeCount: 1
        )
    }

    /// The range of the keys of the strings that start with `prefix` on a string index: from the key of `prefix`
    /// without its terminator (inclusive) to the next key of that length (exclusive), `nil` when the index does not
    /// encode strings with the standard string encoding (``IndexKey/appendString(_:to:)``).
    ///
    /// The standard encoding maps a string to its NFC form's UTF-8, `0x00` escaped, so the key of every string that
    /// `starts(with: prefix)` (a comparison of characters, canonically equivalent ones equal) begins with these bytes:
    /// the string's first characters are those of `prefix`, and normalization does not cross the boundary after them.
    /// The range may hold strings that do not start with `prefix` (a combining mark after its last character), which
    /// the fetch's evaluation of the predicate leaves out. A long prefix is cut to the bytes a cut long key keeps
    /// (``IndexKey/finalize(_:hash:)``), so that cut keys stay in the range.
    static func prefixBounds<Index: PlannableIndex>(
        _ prefix: String, on index: Index
    ) -> (lower: QueryPlan.Bound, upper: QueryPlan.Bound?)? {
        guard let encode = index.encodeComponents.first, let key = stringPrefixKey(prefix, encode: encode.encode) else {
            return nil
        }
        let start = Array(key.prefix(IndexKey.keptPrefix))
        return (
            QueryPlan.Bound(key: start, isInclusive: true),
            KeyRange.successor(ofPrefix: start).map { QueryPlan.Bound(key: $0, isInclusive: false) }
        )
    }

    /// Returns the narrower of two bounds on the same side of a range; at equal keys an exclusive bound is narrower.
    /// - Parameters:
    ///   - current: The bound so far, if any.
    ///   - new: Another bound on the same side.
    ///   - isLower: Whether both are lower bounds (the larger key is narrower) or upper bounds (the smaller is).
    static func tighter(_ current: QueryPlan.Bound?, _ new: QueryPlan.Bound, isLower: Bool) -> QueryPlan.Bound {
        guard let current else { return new }
        if current.key == new.key {
            return QueryPlan.Bound(key: new.key, isInclusive: current.isInclusive && new.isInclusive)
        }
        let newIsLarger = current.key.lexicographicallyPrecedes(new.key)
        return newIsLarger == isLower ? new : current
    }

    /// Returns keys in ascending byte order without duplicates, the order in which an index reads them.
    /// - Parameter keys: Encoded keys in any order.
    static func sortedUnique(_ keys: [[UInt8]]) -> [[UInt8]] {
        var result: [[UInt8]] = []
        for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) where result.last != key {
            result.append(key)
        }
        return result
    }
}
