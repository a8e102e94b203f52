import Foundation
import LMDB

/// The plans of predicates made of equalities and comparisons between attributes and constants joined by `&&`
/// (`$0.customerID == customer && $0.placedAt >= start && $0.placedAt < end`, `$0.total > threshold`), worked out in
/// full once per shape and reused with each new set of constants.
///
/// A shape is the expression's type, the attribute of each term and what the term asks (`==`, or which comparison).
/// The planner chooses among the candidates the terms allow by what they are (the index, unique or not, keys or a
/// range, which bounds, how many attributes fixed), never by the constants' values, which only go into the keys and
/// bounds: so the candidate chosen for a shape, kept as a template (its index and its place among that index's
/// candidates), is the one chosen for the next constants, and only that index's candidates are made again. Anything
/// the template cannot answer goes to ``QueryPlanner`` in full, so the plans are the planner's own: a shape whose
/// plan is no candidate of an index (a scan, an ordered read), a template index whose candidates come out otherwise
/// (a constant that does not encode), and a plan that the store's counts may change and that is not exact (the
/// counts need every candidate).
///
/// Reading the terms out of the predicate is worked out once per expression type too (``ComparisonTreeType``): the
/// casts that walk the expression tree cost more than the rest of a templated plan.
///
/// Templates are kept per shape: first by the key path objects, a literal being made once per place in the program,
/// then by equality of key paths (a nested path such as `$0.address.city` is a new object at every plan). Each table
/// stops growing at ``capacity`` entries; later shapes are looked up by equality, or planned in full each time.
final class ComparisonPlans<Root>: Sendable {
    /// The most entries of each table.
    static var capacity: Int { 256 }

    /// The tables. (Key paths are immutable objects, and the readers hold no state.)
    private let tables = Locked(ComparisonPlanTables())

    /// Plans a fetch as ``QueryPlanner/plan(predicate:sortBy:fetchLimit:fetchOffset:indexes:)`` does, from a template
    /// when the predicate has a shape planned before.
    func plan(
        predicate: Predicate<Root>?, sortBy: [SortDescriptor<Root>], fetchLimit: Int?, fetchOffset: Int,
        indexes: [PlannerIndex]
    ) -> PlannedQuery {
        plan(
            predicate: predicate, expression: predicate?.expression, sortBy: sortBy, fetchLimit: fetchLimit,
            fetchOffset: fetchOffset, indexes: indexes)
    }

    /// Plans a fetch as ``plan(predicate:sortBy:fetchLimit:fetchOffset:indexes:)`` does, with `expression`, the
    /// predicate's (``FetchDescriptor`` keeps it beside the predicate): reading it out of the optional predicate
    /// here, in code generic over the model, would copy the predicate.
    func plan(
        predicate: Predicate<Root>?, expression: (any StandardPredicateExpression<Bool>)?,
        sortBy: [SortDescriptor<Root>], fetchLimit: Int?, fetchOffset: Int, indexes: [PlannerIndex]
    ) -> PlannedQuery {
        func planInFull() -> PlannedQuery {
            QueryPlanner.plan(
                predicate: predicate, sortBy: sortBy, fetchLimit: fetchLimit, fetchOffset: fetchOffset,
                indexes: indexes)
        }
        guard let expression, let leaves = leaves(of: expression) else { return planInFull() }
        var terms: [QueryPlanner.KeyPathTerm] = []
        var shape = ComparisonShape(expression: ObjectIdentifier(type(of: expression)), capacity: leaves.count)
        terms.reserveCapacity(leaves.count)
        for leaf in leaves {
            let term: QueryPlanner.KeyPathTerm?
            if let comparison = leaf.comparison {
                term = QueryPlanner.comparisonTerm(leaf.keyPath, comparison, leaf.constant)
            } else {
                term = .equal(leaf.keyPath, leaf.constant)
            }
            guard let term else { continue }
            terms.append(term)
            shape.append(leaf)
        }
        let leafShape = QueryPlanner.PredicateShape(leaves: leaves)
        guard let template = template(for: shape, leaves: leaves) else {
            let (planned, chosen) = QueryPlanner.plan(
                terms: terms, predicate: predicate, sortBy: sortBy, fetchLimit: fetchLimit, indexes: indexes)
            remember(chosen, of: planned, for: shape, leaves: leaves, terms: terms, indexes: indexes)
            return planned
        }
        guard let position = template.index, position < indexes.count else { return planInFull() }
        let candidate: QueryPlanner.Candidate
        // Whether the plan is exact, when the template tells: see `ComparisonTemplate.isExact`.
        var isKnownExact = false
        if let layout = template.compound {
            var everyTermRead = true
            guard
                let made = QueryPlanner.compoundCandidate(
                    on: indexes[position], terms: terms, layout: layout, everyTermRead: &everyTermRead),
                made.kind == template.kind
            else { return planInFull() }
            candidate = made
            isKnownExact =
                template.isExact && everyTermRead && !layout.hasRepeatedEquality
                && !terms.contains(where: Self.comparesWithNaN)
        } else {
            let found = QueryPlanner.candidates(on: indexes[position], terms: terms)
            guard found.count == template.candidates, template.offset < found.count,
                found[template.offset].kind == template.kind
            else { return planInFull() }
            candidate = found[template.offset]
        }
        let plan = QueryPlanner.oriented(
            candidate.plan, sortBy: sortBy, indexes: indexes, fixedAttributes: candidate.fixedAttributes)
        var planned = PlannedQuery(
            plan: plan,
            isSorted: QueryPlanner.isSorted(
                plan, sortBy: sortBy, indexes: indexes, fixedAttributes: candidate.fixedAttributes),
            uniqueIndexes: QueryPlanner.uniqueIndexes(of: plan, in: indexes),
            isExact: isKnownExact || QueryPlanner.isExact(plan, shape: leafShape, terms: terms, indexes: indexes))
        planned.mayCount = template.mayCount
        // The store weighs an inexact plan's candidates by its counts: the planner ranks them all.
        guard !planned.mayCount || planned.isExact else { return planInFull() }
        return planned
    }

    /// Whether `term` compares with a NaN constant.
    private static func comparesWithNaN(_ term: QueryPlanner.KeyPathTerm) -> Bool {
        guard case .compare(_, _, let value) = term else { return false }
        return isNaNConstant(value)
    }

    /// The leaves of `expression` when it is made of equalities and comparisons of attributes and constants joined
    /// by `&&`, read by its type's reader.
    private func leaves(of expression: any StandardPredicateExpression<Bool>) -> [QueryPlanner.Leaf]? {
        let type = ObjectIdentifier(Swift.type(of: expression))
        let known = tables.withLock { $0.readers[type] }
        if let known { return known?(expression) }
        let reader = (Swift.type(of: expression) as? any QueryPlanner.ComparisonTreeType.Type).flatMap {
            QueryPlanner.rootLeafReader($0)
        }
        tables.withLock { tables in
            if tables.readers.count < Self.capacity { tables.readers[type] = .some(reader) }
        }
        return reader?(expression)
    }

    /// The template of `shape`, if one was made.
    private func template(for shape: ComparisonShape, leaves: [QueryPlanner.Leaf]) -> ComparisonTemplate? {
        if let known = tables.withLock({ $0.byObject[shape]?.template }) { return known }
        let equatable = shape.equatable(leaves)
        return tables.withLock { tables in
            guard let template = tables.byKeyPath[equatable] else { return nil }
            if tables.byObject.count < Self.capacity { tables.byObject[shape] = (equatable.keyPaths, template) }
            return template
        }
    }

    /// Keeps `chosen`, the candidate the planner chose for `terms`, as the template of `shape`: its index, and its
    /// place among the candidates of that index.
    private func remember(
        _ chosen: QueryPlanner.Candidate?, of planned: PlannedQuery, for shape: ComparisonShape,
        leaves: [QueryPlanner.Leaf], terms: [QueryPlanner.KeyPathTerm], indexes: [PlannerIndex]
    ) {
        var template = ComparisonTemplate(index: nil, offset: 0, candidates: 0, kind: nil, mayCount: planned.mayCount)
        if let chosen, let name = chosen.plan.indexName,
            let position = indexes.firstIndex(where: { $0.name == name })
        {
            let index = indexes[position]
            let found = QueryPlanner.candidates(on: index, terms: terms)
            if let offset = found.firstIndex(of: chosen) {
                template = ComparisonTemplate(
                    index: position, offset: offset, candidates: found.count, kind: chosen.kind,
                    mayCount: planned.mayCount)
                // A compound index's one candidate is its compound candidate.
                if index.attributes.count > 1, found.count == 1 {
                    template.compound = QueryPlanner.CompoundLayout(of: terms, on: index)
                    template.isExact = planned.isExact
                }
            }
        }
        let equatable = shape.equatable(leaves)
        tables.withLock { tables in
            if tables.byKeyPath.count < Self.capacity { tables.byKeyPath[equatable] = template }
            if tables.byObject.count < Self.capacity { tables.byObject[shape] = (equatable.keyPaths, template) }
        }
    }
}

extension QueryPlanner {
    /// An equality or a comparison of an attribute and a constant, a leaf of a predicate made of them and `&&`, as
    /// its node's `plannerTerms(indexes:)` reads it.
    struct Leaf {
        /// The attribute.
        var keyPath: AnyKeyPath
        /// The comparison, flipped when the constant is on the left (`5 < $0.n` is `$0.n > 5`); `nil` for `==`.
        var comparison: PredicateExpressions.ComparisonOperator?
        /// The constant, boxed as typed.
        var constant: Any
    }

    /// Appends the leaves of a node of type `E` to an array, or returns `false` when an operand is not an attribute
    /// or a constant.
    typealias LeafReader<E> = (E, inout [Leaf]) -> Bool

    /// An expression type whose nodes are made of equalities and comparisons of attributes and constants joined by
    /// `&&`.
    protocol ComparisonTreeType {
        /// A reader of the nodes of this type, made once: the roles of the operands are worked out from their types,
        /// so that reading a node calls their members directly; `nil` when the type is not such a tree.
        static var plannerLeafReader: LeafReader<Self>? { get }
    }

    /// The reader of the leaves of expressions of type `T`, from the expression as a predicate holds it.
    static func rootLeafReader<T: ComparisonTreeType>(
        _: T.Type
    ) -> ((any StandardPredicateExpression<Bool>) -> [Leaf]?)? {
        guard let reader = T.plannerLeafReader else { return nil }
        return { expression in
            func read<E: StandardPredicateExpression<Bool>>(_ node: E) -> [Leaf]? {
                var leaves: [Leaf] = []
                // Room for the common conjunctions, which would otherwise grow the array at every leaf.
                leaves.reserveCapacity(4)
                return reader(knownTypeCast(node, to: T.self), &leaves) ? leaves : nil
            }
            return read(expression)
        }
    }

    /// The reader of the leaves of operands of type `E`, `nil` when `E` is no such tree.
    static func leafReader<E>(of _: E.Type) -> LeafReader<E>? {
        guard let tree = E.self as? any ComparisonTreeType.Type else { return nil }
        return leafReader(tree, as: E.self)
    }

    private static func leafReader<T: ComparisonTreeType, E>(_: T.Type, as _: E.Type) -> LeafReader<E>? {
        guard let reader = T.plannerLeafReader else { return nil }
        return { node, leaves in reader(knownTypeCast(node, to: T.self), &leaves) }
    }

    /// The reader of a binary node of type `E` whose operands, which `lhs` and `rhs` read, are of types `L` and `R`,
    /// one the attribute and the other the constant by their types; `nil` when neither or both can be the attribute.
    /// `makeLeaf` makes the leaf of the attribute's key path and the constant, with whether the constant was on the
    /// left.
    static func binaryLeafReader<E, L: PredicateExpression, R: PredicateExpression>(
        _: E.Type, lhs: @escaping (E) -> L, rhs: @escaping (E) -> R,
        makeLeaf: @escaping (E, AnyKeyPath, Any, _ isFlipped: Bool) -> Leaf
    ) -> LeafReader<E>? {
        let lhsAttribute = L.self as? any KeyPathOperand.Type
        let rhsAttribute = R.self as? any KeyPathOperand.Type
        if let lhsAttribute, rhsAttribute == nil {
            return attributeReader(lhsAttribute, lhs, constant: constantReader(of: R.self), rhs) {
                makeLeaf($0, $1, $2, false)
            }
        }
        if let rhsAttribute, lhsAttribute == nil {
            return attributeReader(rhsAttribute, rhs, constant: constantReader(of: L.self), lhs) {
                makeLeaf($0, $1, $2, true)
            }
        }
        return nil
    }

    /// A reader of nodes of type `E` whose operand `attribute` reads, of type `A`, is the attribute, and whose
    /// operand `constant` reads is a constant through `readConstant`.
    private static func attributeReader<E, A: KeyPathOperand, O, C>(
        _: A.Type, _ attribute: @escaping (E) -> O, constant readConstant: @escaping (C) -> Any?,
        _ constant: @escaping (E) -> C, makeLeaf: @escaping (E, AnyKeyPath, Any) -> Leaf
    ) -> LeafReader<E> {
        { node, leaves in
            guard let keyPath = knownTypeCast(attribute(node), to: A.self).plannerKeyPath,
                let value = readConstant(constant(node))
            else { return false }
            leaves.append(makeLeaf(node, keyPath, value))
            return true
        }
    }
}

extension PredicateExpressions.Conjunction: QueryPlanner.ComparisonTreeType {
    static var plannerLeafReader: QueryPlanner.LeafReader<Self>? {
        guard let left = QueryPlanner.leafReader(of: LHS.self), let right = QueryPlanner.leafReader(of: RHS.self)
        else { return nil }
        return { node, leaves in left(node.lhs, &leaves) && right(node.rhs, &leaves) }
    }
}

extension PredicateExpressions.Equal: QueryPlanner.ComparisonTreeType {
    static var plannerLeafReader: QueryPlanner.LeafReader<Self>? {
        QueryPlanner.binaryLeafReader(Self.self, lhs: { $0.lhs }, rhs: { $0.rhs }) { _, keyPath, constant, _ in
            QueryPlanner.Leaf(keyPath: keyPath, comparison: nil, constant: constant)
        }
    }
}

extension PredicateExpressions.Comparison: QueryPlanner.ComparisonTreeType {
    static var plannerLeafReader: QueryPlanner.LeafReader<Self>? {
        QueryPlanner.binaryLeafReader(Self.self, lhs: { $0.lhs }, rhs: { $0.rhs }) {
            node, keyPath, constant, isFlipped in
            QueryPlanner.Leaf(
                keyPath: keyPath, comparison: isFlipped ? node.op.plannerFlipped : node.op, constant: constant)
        }
    }
}

extension QueryPlanner.Candidate {
    /// What a template compares of a candidate made again with other constants: everything the ranking reads but
    /// the keys' bytes.
    var kind: CandidateKind {
        var kind = CandidateKind(
            isUnique: isUnique, attributeCount: attributeCount, fixedAttributes: fixedAttributes,
            unionTier: unionTier, excludes: excludedKey != nil)
        switch plan {
        case .keys(let name, let keys): kind.read = .keys(name, keys.count)
        case .range(let name, let lower, let upper, let reverse):
            kind.read = .range(name, lower?.isInclusive, upper?.isInclusive, reverse)
        case .scan, .ordered, .union, .intersection: kind.read = .other
        }
        return kind
    }
}

/// A candidate's ``QueryPlanner/Candidate/kind``.
struct CandidateKind: Equatable {
    /// How the candidate reads: how many keys of which index, or a range of which index with which bounds.
    enum Read: Equatable {
        case keys(String, Int)
        case range(String, Bool?, Bool?, Bool)
        case other
    }

    var isUnique: Bool
    var attributeCount: Int
    var fixedAttributes: Int
    var unionTier: Int
    var excludes: Bool
    var read = Read.other
}

/// A predicate's shape (see ``ComparisonPlans``): its expression type, and the attribute (by key path object) and the
/// comparison of each term, in order.
private struct ComparisonShape: Hashable {
    var expression: ObjectIdentifier
    var keyPaths: [ObjectIdentifier] = []
    var comparisons: [UInt8] = []

    /// The shape of an expression of the type `expression` with room for `capacity` terms.
    init(expression: ObjectIdentifier, capacity: Int) {
        self.expression = expression
        keyPaths.reserveCapacity(capacity)
        comparisons.reserveCapacity(capacity)
    }

    /// Adds the term of `leaf`.
    mutating func append(_ leaf: QueryPlanner.Leaf) {
        keyPaths.append(ObjectIdentifier(leaf.keyPath))
        comparisons.append(Self.code(of: leaf.comparison))
    }

    /// The shape with the key paths compared by equality, of the shape made of `leaves`: the key paths of the leaves
    /// that gave terms, which the identifiers name.
    func equatable(_ leaves: [QueryPlanner.Leaf]) -> EquatableShape {
        let byObject = Dictionary(leaves.map { (ObjectIdentifier($0.keyPath), $0.keyPath) }) { first, _ in first }
        return EquatableShape(
            expression: expression, keyPaths: keyPaths.compactMap { byObject[$0] }, comparisons: comparisons)
    }

    /// A comparison as a number: 0 for `==`.
    static func code(of comparison: PredicateExpressions.ComparisonOperator?) -> UInt8 {
        switch comparison {
        case nil: 0
        case .lessThan: 1
        case .lessThanOrEqual: 2
        case .greaterThan: 3
        case .greaterThanOrEqual: 4
        }
    }

    struct EquatableShape: Hashable {
        var expression: ObjectIdentifier
        var keyPaths: [AnyKeyPath]
        var comparisons: [UInt8]
    }
}

/// How the planner chose for one shape.
private struct ComparisonTemplate {
    /// The position in the indexes of the index of the candidate chosen; `nil` when the plan was no candidate of an
    /// index: such shapes are planned in full each time.
    let index: Int?
    /// The chosen candidate's position among those of its index.
    let offset: Int
    /// How many candidates its index had.
    let candidates: Int
    /// The chosen candidate's kind, which the one made again must have.
    let kind: CandidateKind?
    /// The plan's ``PlannedQuery/mayCount``, which depends on the shape alone.
    let mayCount: Bool
    /// For a candidate of a compound index, where the terms fall on its attributes: its candidate is made again from
    /// the new values without matching the terms' attributes again.
    var compound: QueryPlanner.CompoundLayout?
    /// Whether the plan was exact (``PlannedQuery/isExact``), known for a compound index's candidate. Exactness
    /// then depends on the values in only these ways, checked before it is taken as known: a value that does not
    /// encode (an equality's changes the candidate's kind; a comparison's is left out, `everyTermRead`), two
    /// equalities on one attribute with different values, and a comparison with NaN. Otherwise the planner checks.
    var isExact = false
}

/// What ``ComparisonPlans`` has learnt, behind its lock, declared outside the generic class (see
/// `EqualityPlanTables`).
private struct ComparisonPlanTables {
    /// The leaf reader of each expression type, `nil` for a type that is not such a tree.
    var readers: [ObjectIdentifier: ((any StandardPredicateExpression<Bool>) -> [QueryPlanner.Leaf]?)?] = [:]
    /// The templates by key path objects, the key paths held so that their identifiers keep naming them.
    var byObject: [ComparisonShape: (keyPaths: [AnyKeyPath], template: ComparisonTemplate)] = [:]
    /// The templates by key paths.
    var byKeyPath: [ComparisonShape.EquatableShape: ComparisonTemplate] = [:]
}
