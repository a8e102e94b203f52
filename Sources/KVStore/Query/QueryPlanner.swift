import Foundation

/// Turns a fetch's predicate and sort descriptors into a `PlannedQuery`: which index (if any) reads the candidates,
/// and whether they come out already sorted.
///
/// The planner walks `Predicate.expression` (see `QueryPlanner+Expressions.swift`) and understands:
/// - `id == constant` and `[constants].contains(id)` on the record key itself (``QueryPlan/recordKey``, which the
///   caller lists among the indexes as a unique index on `id`): the records of those IDs, read directly;
/// - `attribute == constant` and `constant == attribute`, `nil` included, on a single-attribute index: one key;
/// - `<`, `<=`, `>`, `>=` either way round: a range, the bounds on one attribute merged into one range (but `<=` on a
///   `Date`, a NaN `Date` and a string that is not plain ASCII bound nothing: see `PredicateExpressions.Comparison`'s
///   `plannerTerms(indexes:)`);
/// - `[constants].contains(attribute)`: every encoded constant as a key, sorted and without duplicates;
/// - `attribute.contains(constant)` on a multi-entry index: one key;
/// - a Boolean attribute alone (`$0.isDone`): equality with `true`;
/// - `&&`: the most selective usable part (unique equality, then keys, IDs before index keys, then a two-sided range,
///   then a one-sided range), and equalities on every attribute of a compound index as one key, the components in key
///   order, or on its first attributes as the range of the keys that begin with them, narrowed by the comparisons or
///   prefix on the next attribute (as selective as keys, and preferred to them when it fixes more attributes);
/// - `attribute != nil`, either way round: a range of every key but nil's;
/// - `attribute.starts(with: constant)` on a string index: the range of the keys that begin with the prefix's key
///   (``prefixBounds(_:on:)``), merged with the other bounds on the attribute;
/// - `||`: when both sides read keys of the same index, the union of the keys; when both sides have other plans,
///   ``QueryPlan/union(_:)`` of them (nested unions flattened), ranked with the least selective side and below one
///   read of the same tier.
///
/// A constant is any operand that does not read the model: a literal, a captured value, or an expression over them
/// (`project.id`, `filter.parent?.id`, `base + 1`, `ids.max() ?? 0`), evaluated once while planning.
///
/// - `attribute != value` and `!(attribute == value)`: the union of the ranges on both sides of the value's key, a
///   candidate that only the store's counts choose (``Candidate/excludedKey``, ``EntityStore/plan(_:in:)``);
/// - `!attribute` on a Boolean attribute: equality with `false`.
///
/// Anything else (other negations, other string functions, optional chaining on the model, comparisons with a
/// non-indexed key path, values the index cannot encode) is not plannable: a conjunction uses its other parts,
/// otherwise the fetch scans. The store refines the plan with its counts (``EntityStore/plan(_:in:)``): the cheapest
/// of a conjunction's index reads, or an intersection of two. The fetch
/// evaluates the whole predicate on every candidate, so a plan only has to leave no match out.
///
/// Without a usable predicate plan, a fetch with a limit whose sort descriptors are all on the attribute of a
/// single-attribute, non-multi-entry index reads that index in order (reversed for `.reverse`) and can stop early,
/// when the index's order is exactly the sort's (see `isByteOrdered`: numbers and dates, not strings).
///
/// `description` has one of these forms, keys printed as lowercase hexadecimal and the name prefixed with `unique `
/// for a unique index:
/// - `scan`
/// - `key id: 1 key`, `key id: 3 keys` for IDs read directly
/// - `index projectID: 1 key`, `index tags: 3 keys`, `unique index email: 1 key`
/// - `index dueDate: range [k1, k2)`, with `[`/`]` for an inclusive bound, `(`/`)` for an exclusive one, and
///   `(-inf` or `+inf)` for an open end, as in `index n: range (8000000000000005, +inf)`, followed by ` reverse`
///   for a range read from its upper end
/// - `index dueDate: ordered` or `index dueDate: ordered reverse`
/// - `union of (index projectID: 1 key), (index dueDate: range [k1, +inf))`
///
/// ```swift
/// let planned = QueryPlanner.plan(
///     predicate: #Predicate<Task> { $0.projectID == projectID },
///     sortBy: [], fetchLimit: nil, fetchOffset: 0, indexes: indexes)
/// // planned.description == "index projectID: 1 key"
/// ```
enum QueryPlanner {
    /// Plans a fetch.
    /// - Parameters:
    ///   - predicate: The fetch's predicate; `nil` matches every record.
    ///   - sortBy: The fetch's sort descriptors, most significant first.
    ///   - fetchLimit: The most records the fetch returns, if limited; an ordered index read is worth it only then.
    ///   - fetchOffset: The records the fetch skips. The plan does not depend on it: a sorted read stops at
    ///     `fetchOffset + fetchLimit` matches, which is the fetch's business.
    ///   - indexes: The entity's indexes.
    /// - Returns: The plan, whether it yields candidates in sort order, and its one-line description.
    static func plan<Root>(
        predicate: Predicate<Root>?,
        sortBy: [SortDescriptor<Root>],
        fetchLimit: Int?,
        fetchOffset: Int,
        indexes: [PlannerIndex]
    ) -> PlannedQuery {
        let constraints = predicate.map { terms(of: $0.expression, indexes: indexes) } ?? []
        return plan(
            terms: constraints, predicate: predicate, sortBy: sortBy, fetchLimit: fetchLimit, indexes: indexes
        ).planned
    }

    /// Plans a fetch whose predicate has `terms`, and returns the candidate chosen, if any, beside the plan.
    static func plan<Root>(
        terms constraints: [KeyPathTerm], predicate: Predicate<Root>?, sortBy: [SortDescriptor<Root>],
        fetchLimit: Int?, indexes: [PlannerIndex]
    ) -> (planned: PlannedQuery, chosen: Candidate?) {
        let ranked = allCandidates(for: constraints, indexes: indexes)
        // A complement is never chosen without the store's counts (see `bestCandidate`).
        let best = ranked.first { $0.excludedKey == nil }
        var plan = best?.plan ?? .scan
        var fixedAttributes = best?.fixedAttributes ?? 0
        var chosen = best
        if plan == .scan, fetchLimit != nil, let ordered = orderedPlan(sortBy: sortBy, indexes: indexes) {
            plan = ordered
            fixedAttributes = 0
            chosen = nil
        }
        plan = oriented(plan, sortBy: sortBy, indexes: indexes, fixedAttributes: fixedAttributes)
        var planned = PlannedQuery(
            plan: plan,
            isSorted: isSorted(plan, sortBy: sortBy, indexes: indexes, fixedAttributes: fixedAttributes),
            uniqueIndexes: uniqueIndexes(of: plan, in: indexes),
            isExact: isExact(plan, predicate: predicate, terms: constraints, indexes: indexes)
        )
        planned.mayCount = mayCount(ranked, plan: plan)
        if planned.mayCount { planned.candidates = ranked }
        return (planned, chosen)
    }

    /// `plan`, read from its upper end when it is a range and that gives a descending sort in the index's order.
    /// - Parameters:
    ///   - plan: A plan.
    ///   - sortBy: The fetch's sort descriptors.
    ///   - indexes: The entity's indexes.
    ///   - fixedAttributes: For a range of a compound index, how many of its first attributes an equality fixes.
    static func oriented<Root>(
        _ plan: QueryPlan, sortBy: [SortDescriptor<Root>], indexes: [PlannerIndex], fixedAttributes: Int
    ) -> QueryPlan {
        // The first descriptor by position, not `first`: an optional of it looks up its type's metadata at each plan.
        guard case .range(let name, let lower, let upper, false) = plan, sortBy.count > 0, sortBy[0].order == .reverse
        else {
            return plan
        }
        let reversed = QueryPlan.range(index: name, lower: lower, upper: upper, reverse: true)
        return isSorted(reversed, sortBy: sortBy, indexes: indexes, fixedAttributes: fixedAttributes) ? reversed : plan
    }

    /// Whether the store's counts could change `plan`: it is a scan and a complement is possible, or the predicate
    /// allows reads of two indexes' keys or ranges (``EntityStore/plan(_:in:)``). Most predicates allow one read, and
    /// their fetches count nothing.
    static func mayCount(_ ranked: [Candidate], plan: QueryPlan) -> Bool {
        if case .scan = plan { return ranked.contains { $0.excludedKey != nil } }
        var reads = 0
        for candidate in ranked where candidate.excludedKey == nil {
            switch candidate.plan {
            case .keys(QueryPlan.recordKey, _): continue
            case .keys, .range: reads += 1
            case .scan, .ordered, .union, .intersection: continue
            }
            if reads > 1 { return true }
        }
        return false
    }

    /// Returns whether `plan` yields exactly the models `predicate` matches: either the predicate is a single
    /// equality or `contains` (no `&&`, `||` or `!` around it) whose one term the plan reads as keys of the record key
    /// or of a single-attribute index with exact equality (``PlannerIndex/hasExactEquality``), none of them long
    /// enough to be cut; or it is made only of `<`, `<=`, `>` and `>=` joined by `&&`, each comparing the attribute
    /// of a single-attribute index with exact order (``PlannerIndex/hasExactOrder``) whose range the plan reads with
    /// a constant encoded into its bounds. An index of floating-point numbers or dates
    /// (``PlannerIndex/hasExactOrderBelowNaN``) answers such a range exactly when one comparison bounds it from
    /// above and no constant is NaN: a NaN attribute matches no comparison with an upper bound (a `Date`'s `<=`,
    /// which a NaN date matches, gives no term), and its key sorts past every bound. A read of a compound index is
    /// exact on the conditions of ``isExactCompound(_:on:shape:terms:)``, and the plan of an `||` (a union, or one
    /// index's keys) when each side's plan answers that side exactly.
    static func isExact<Root>(
        _ plan: QueryPlan, predicate: Predicate<Root>?, terms: [KeyPathTerm], indexes: [PlannerIndex]
    ) -> Bool {
        isExact(
            plan, shape: PredicateShape(predicate.map { $0.expression as Any }), terms: terms, indexes: indexes)
    }

    /// What ``isExact(_:predicate:terms:indexes:)`` asks of a predicate's expression, found by casts when asked, or
    /// known already to a caller that has read the expression's leaves (``ComparisonPlans``).
    struct PredicateShape {
        /// Whether the expression is a single equality or `contains` (``SingleComparison``).
        let isSingleComparison: () -> Bool
        /// How many equalities and comparisons the expression is made of, `nil` when it holds anything else
        /// (``ComparisonTree``).
        let comparisonCount: () -> Int?
        /// Whether the expression is an `||` (``DisjunctionNode``).
        let isDisjunction: () -> Bool

        /// The shape of `expression`, `nil` for no predicate.
        init(_ expression: Any?) {
            isSingleComparison = { expression is any SingleComparison }
            comparisonCount = { (expression as? any ComparisonTree)?.comparisonCount }
            isDisjunction = { expression is any DisjunctionNode }
        }

        /// The shape of an expression known to be made of `leaves`, equalities and comparisons joined by `&&`.
        init(leaves: [Leaf]) {
            let isSingleEquality = leaves.count == 1 && leaves[0].comparison == nil
            isSingleComparison = { isSingleEquality }
            comparisonCount = { leaves.count }
            isDisjunction = { false }
        }
    }

    /// ``isExact(_:predicate:terms:indexes:)`` for an expression of `shape`.
    static func isExact(_ plan: QueryPlan, shape: PredicateShape, terms: [KeyPathTerm], indexes: [PlannerIndex]) -> Bool
    {
        // An `||` whose plan is the one it made of its sides' (``Candidate/isExact``).
        if terms.count == 1, case .candidate(let candidate) = terms[0] {
            return candidate.plan == plan && candidate.isExact && shape.isDisjunction()
        }
        if let name = plan.indexName, let index = indexes.first(where: { $0.name == name }), index.keyPaths.count > 1 {
            return isExactCompound(plan, on: index, shape: shape, terms: terms)
        }
        switch plan {
        case .keys(let name, let keys):
            guard terms.count == 1, shape.isSingleComparison(),
                let index = indexes.first(where: { $0.name == name }), index.hasExactEquality,
                index.keyPaths.count == 1
            else { return false }
            return keys.allSatisfy { $0.count <= IndexKey.maximumLength }
        case .range(let name, _, _, _):
            // Every comparison gave a term (one between two attributes gives none), all of them on the index's.
            guard shape.comparisonCount() == terms.count, let index = indexes.first(where: { $0.name == name }),
                index.hasExactOrder || (index.hasExactOrderBelowNaN && hasUpperBound(terms)),
                let attribute = index.attributes.first, let encode = index.encodeComponents.first
            else { return false }
            return terms.allSatisfy { term in
                guard case .compare(let path, _, let value) = term else { return false }
                return path == attribute && !isNaNConstant(value) && encode(value) != nil
            }
        case .scan, .ordered, .union, .intersection:
            return false
        }
    }

    /// Returns whether `plan`, a read of `index`, a compound index, yields exactly the models a predicate of `shape`
    /// with `terms` matches: the predicate is made only of `==`, `<`, `<=`, `>` and `>=` joined by `&&`, each giving
    /// one term; the equalities fix the index's first attributes, one value each, with exact equality; the
    /// comparisons, if any, are on the next attribute, with exact order (or exact order below NaN, one of them
    /// bounding it from above, no constant NaN); and every attribute's key components are bounded
    /// (``KeyComponentTraits/isBounded``), few enough that no key is ever cut.
    ///
    /// The plan is then the one ``compoundCandidate(on:terms:)`` makes of those terms: one key of every attribute's
    /// component, or the range of the keys that begin with the fixed attributes' components (self-delimiting, so
    /// exactly the models with those values), bounded by every comparison's component (each begins with a presence
    /// byte, so each bound has a successor).
    static func isExactCompound(
        _ plan: QueryPlan, on index: PlannerIndex, shape: PredicateShape, terms: [KeyPathTerm]
    ) -> Bool {
        let (attributes, traits) = (index.attributes, index.componentTraits)
        guard !index.isMultiEntry, traits.count == attributes.count, index.encodeComponents.count == attributes.count,
            traits.allSatisfy(\.isBounded),
            attributes.count * IndexKey.largestBoundedComponent <= IndexKey.maximumLength,
            shape.comparisonCount() == terms.count
        else { return false }
        // The component of each fixed attribute: that of its equalities, all of one value.
        var components: [[UInt8]?] = Array(repeating: nil, count: attributes.count)
        for term in terms {
            guard case .equal(let path, let value) = term else { continue }
            guard let position = attributes.firstIndex(of: path), traits[position].hasExactEquality,
                let component = index.encodeComponents[position](value),
                components[position] == nil || components[position] == component
            else { return false }
            components[position] = component
        }
        let fixed = components.firstIndex { $0 == nil } ?? attributes.count
        guard components[fixed...].allSatisfy({ $0 == nil }) else { return false }
        var (isRanged, hasUpperBound) = (false, false)
        for term in terms {
            switch term {
            case .equal: continue
            case .compare(let path, let comparison, let value):
                guard fixed < attributes.count, path == attributes[fixed],
                    traits[fixed].hasExactOrder || traits[fixed].hasExactOrderBelowNaN, !isNaNConstant(value),
                    index.encodeComponents[fixed](value) != nil
                else { return false }
                isRanged = true
                if comparison == .lessThan || comparison == .lessThanOrEqual { hasUpperBound = true }
            case .oneOf, .containsElement, .prefix, .candidate:
                return false
            }
        }
        // A NaN component sorts after every other: only an upper bound leaves it out, as the comparisons do.
        guard !isRanged || traits[fixed].hasExactOrder || hasUpperBound else { return false }
        switch plan {
        case .keys(_, let keys): return fixed == attributes.count && keys.count == 1
        case .range: return fixed < attributes.count
        case .scan, .ordered, .union, .intersection: return false
        }
    }

    /// Whether one of `terms` is a `<` or `<=` comparison, an upper bound.
    private static func hasUpperBound(_ terms: [KeyPathTerm]) -> Bool {
        terms.contains { term in
            guard case .compare(_, let comparison, _) = term else { return false }
            return comparison == .lessThan || comparison == .lessThanOrEqual
        }
    }

    /// Returns an ordered read of the index on the sort attribute, or of a compound index whose attributes the sort
    /// descriptors name in key order and one direction; `nil` when there is none, or the attributes are not in byte
    /// order: reading an index in order pays only when its order is the fetch's whole order.
    /// - Parameters:
    ///   - sortBy: The fetch's sort descriptors.
    ///   - indexes: The entity's indexes.
    static func orderedPlan<Root>(sortBy: [SortDescriptor<Root>], indexes: [PlannerIndex]) -> QueryPlan? {
        guard let first = sortBy.first, let keyPath = first.keyPath, isByteOrdered(first) else { return nil }
        let reverse = first.order == .reverse
        if sortBy.allSatisfy({ $0.keyPath == keyPath }),
            let index = indexes.first(where: {
                !$0.isMultiEntry && $0.keyPaths == [keyPath] && $0.name != QueryPlan.recordKey
            })
        {
            return .ordered(index: index.name, reverse: reverse)
        }
        // A compound index whose every attribute the sort names, in key order and one direction.
        guard let index = indexes.first(where: { followsCompoundOrder($0, sortBy, after: 0) }) else { return nil }
        return .ordered(index: index.name, reverse: reverse)
    }

    /// Returns whether a plan yields its candidates in the order of the sort descriptors.
    ///
    /// No sort descriptor: any order is sorted. No key, or one key of a unique index: at most one record. One key of
    /// an index: every candidate has the same values of the index's attributes, so sort descriptors on them all
    /// tie. Several keys and ranges read in ascending key order, so they follow a forward sort on the index's
    /// attribute, and a range of a compound index within equalities on its first `fixedAttributes` follows a forward
    /// sort on all the others, in key order (models that tie on all of them come in ID order, as a stable sort of a
    /// scan leaves them); an ordered read follows a sort in its own direction.
    /// - Parameters:
    ///   - plan: The chosen plan.
    ///   - sortBy: The fetch's sort descriptors.
    ///   - indexes: The entity's indexes.
    ///   - fixedAttributes: For a range of a compound index, how many of its first attributes an equality fixes.
    static func isSorted<Root>(
        _ plan: QueryPlan, sortBy: [SortDescriptor<Root>], indexes: [PlannerIndex], fixedAttributes: Int = 0
    ) -> Bool {
        // The first descriptor by position, not `first` (see `oriented`).
        guard sortBy.count > 0 else { return true }
        let first = sortBy[0]
        let reverse: Bool
        switch plan {
        case .scan, .union, .intersection:
            return false
        case .keys(let name, let keys):
            guard let index = indexes.first(where: { $0.name == name }) else { return false }
            if keys.isEmpty || (keys.count == 1 && index.isUnique) { return true }
            // IDs read in byte order, which `SortDescriptor` need not give for UUIDs.
            if name == QueryPlan.recordKey { return false }
            if keys.count == 1 {
                return !index.isMultiEntry && sortBy.allSatisfy { $0.keyPath.map(index.keyPaths.contains) ?? false }
            }
            guard sortsOnlyBy(index, sortBy) else { return false }
            reverse = false
        case .range(let name, _, _, let isReversed):
            guard let index = indexes.first(where: { $0.name == name }),
                sortsOnlyBy(index, sortBy) || followsCompoundOrder(index, sortBy, after: fixedAttributes)
            else { return false }
            reverse = isReversed
        case .ordered(let name, let isReversed):
            guard let index = indexes.first(where: { $0.name == name }),
                sortsOnlyBy(index, sortBy) || followsCompoundOrder(index, sortBy, after: 0)
            else { return false }
            reverse = isReversed
        }
        return isByteOrdered(first) && (first.order == .reverse) == reverse
    }

    /// Returns whether every sort descriptor is on the attribute of a single-attribute, non-multi-entry index.
    /// - Parameters:
    ///   - index: The plan's index.
    ///   - sortBy: The fetch's sort descriptors, at least one.
    static func sortsOnlyBy<Root>(_ index: PlannerIndex, _ sortBy: [SortDescriptor<Root>]) -> Bool {
        guard !index.isMultiEntry, index.keyPaths.count == 1, let keyPath = index.keyPaths.first else { return false }
        return sortBy.allSatisfy { $0.keyPath == keyPath }
    }

    /// Returns whether the sort descriptors are, in order, sorts in one direction on every attribute of a compound
    /// index after its first `fixed` ones, each ordering models as the index does (``isByteOrdered(_:)``).
    /// - Parameters:
    ///   - index: The plan's index.
    ///   - sortBy: The fetch's sort descriptors, at least one.
    ///   - fixed: How many of the index's first attributes an equality fixes.
    static func followsCompoundOrder<Root>(
        _ index: PlannerIndex, _ sortBy: [SortDescriptor<Root>], after fixed: Int
    ) -> Bool {
        guard !index.isMultiEntry, index.keyPaths.count > 1, sortBy.count == index.keyPaths.count - fixed else {
            return false
        }
        return zip(sortBy, index.keyPaths.dropFirst(fixed)).allSatisfy { descriptor, keyPath in
            descriptor.keyPath == keyPath && descriptor.order == sortBy[0].order && isByteOrdered(descriptor)
        }
    }

    /// Returns whether a sort descriptor orders models exactly as an index on its attribute does: the attribute is an
    /// integer, a floating-point number or a `Date`, or an optional of one (`nil` first either way), whose `<` the key
    /// encoding preserves, and Foundation's stable sort and the index both break ties in ID order.
    ///
    /// Strings are left out: the keys hold their NFC form in UTF-8 byte order, which is `String`'s `<` for strings in
    /// NFC, but for strings holding decomposed characters this platform's `<` orders differently, and is not even a
    /// total order there (`"\u{E4}A"` and `"a\u{308}"` are neither less nor greater than each other, nor equal).
    /// So are raw-value enums (their `Comparable` order is their declaration order, the keys hold raw values) and
    /// custom key encodings. Such sorts read every match and sort it.
    /// - Parameter descriptor: A sort descriptor.
    static func isByteOrdered<Root>(_ descriptor: SortDescriptor<Root>) -> Bool {
        guard let keyPath = descriptor.keyPath else { return false }
        return keyOrderIsComparableOrder(type(of: keyPath).valueType)
    }

    /// Whether the index keys of values of `type` sort as the values' `<`.
    private static func keyOrderIsComparableOrder(_ type: Any.Type) -> Bool {
        if let optional = type as? any AnyOptional.Type { return keyOrderIsComparableOrder(optional.wrappedType) }
        return keyOrderedTypes.contains(ObjectIdentifier(type))
    }

    /// The types whose index keys sort as their `<` does.
    private static let keyOrderedTypes: Set<ObjectIdentifier> = [
        ObjectIdentifier(Int.self), ObjectIdentifier(Int8.self), ObjectIdentifier(Int16.self),
        ObjectIdentifier(Int32.self), ObjectIdentifier(Int64.self), ObjectIdentifier(UInt.self),
        ObjectIdentifier(UInt8.self), ObjectIdentifier(UInt16.self), ObjectIdentifier(UInt32.self),
        ObjectIdentifier(UInt64.self), ObjectIdentifier(Double.self), ObjectIdentifier(Float.self),
        ObjectIdentifier(Date.self),
    ]

    /// The names of the unique indexes among those `plan` reads.
    static func uniqueIndexes(of plan: QueryPlan, in indexes: [PlannerIndex]) -> [String] {
        switch plan {
        case .scan: return []
        case .union(let plans), .intersection(let plans): return plans.flatMap { uniqueIndexes(of: $0, in: indexes) }
        case .keys(let name, _), .range(let name, _, _, _), .ordered(let name, _):
            // No array is made for the common plan on an index that is not unique.
            return indexes.contains { $0.name == name && $0.isUnique } ? [name] : []
        }
    }

    /// Returns the one-line description of a plan, in the format documented on `QueryPlanner`, given the unique
    /// indexes among those it reads (``uniqueIndexes(of:in:)``).
    static func describe(_ plan: QueryPlan, uniqueIndexes: [String]) -> String {
        func index(_ name: String) -> String {
            uniqueIndexes.contains(name) ? "unique index \(name)" : "index \(name)"
        }
        switch plan {
        case .scan:
            return "scan"
        case .keys(let name, let keys):
            let index = name == QueryPlan.recordKey ? "key id" : index(name)
            return "\(index): \(keys.count) \(keys.count == 1 ? "key" : "keys")"
        case .range(let name, let lower, let upper, let reverse):
            let from = lower.map { ($0.isInclusive ? "[" : "(") + hex($0.key) } ?? "(-inf"
            let to = upper.map { hex($0.key) + ($0.isInclusive ? "]" : ")") } ?? "+inf)"
            return "\(index(name)): range \(from), \(to)\(reverse ? " reverse" : "")"
        case .ordered(let name, let reverse):
            return "\(index(name)): ordered\(reverse ? " reverse" : "")"
        case .union(let plans):
            return "union of "
                + plans.map { "(" + describe($0, uniqueIndexes: uniqueIndexes) + ")" }
                .joined(separator: ", ")
        case .intersection(let plans):
            return "intersection of "
                + plans.map { "(" + describe($0, uniqueIndexes: uniqueIndexes) + ")" }
                .joined(separator: ", ")
        }
    }

    /// Returns bytes as lowercase hexadecimal, two digits a byte.
    /// - Parameter bytes: An index key.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var result = ""
        result.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0f)])
        }
        return result
    }
}
