import Foundation

// The planner walks `Predicate.expression`, a tree of generic `PredicateExpressions` values, through the internal
// protocols below, which the `PredicateExpressions` types it understands adopt in retroactive extensions. A node that
// adopts none of them (`NotEqual`, `Negation`, string functions, optional chaining, closures such as
// `contains(where:)`, ...) simply contributes nothing, so an unknown expression can never make the planner fail: at
// worst the fetch scans.
//
// The walk descends only through `Conjunction`, `Disjunction` and the operands of the nodes below, never into a
// nested closure (`OptionalFlatMap`, `SequenceContainsWhere`, ...), so every `Variable` it meets is the predicate's
// own input. Key paths are matched against the indexes' key paths, whose equality compares their root types too.

extension QueryPlanner {
    /// An operand that reads an attribute of the predicate's input: the input itself, or a key path from it.
    protocol KeyPathOperand {
        /// The key path from the predicate's input to this operand's value (`\Input.self` for the input itself), or
        /// `nil` when the key paths cannot be joined.
        var plannerKeyPath: AnyKeyPath? { get }
    }

    /// The predicate's input itself, whose key path is the identity.
    protocol InputOperand {}

    /// An operand whose value is known while planning: a captured value, a literal or `nil`.
    protocol ConstantOperand {
        /// The value, boxed as the attribute's encoder expects it (an optional stays an optional, so a `nil`
        /// constant is `.some(Optional<Wrapped>.none)`), or `nil` when it cannot be worked out.
        var plannerConstant: Any? { get }
    }

    /// A constant operand that is a sequence, such as the array in `[1, 2].contains($0.n)`.
    protocol ConstantSequenceOperand {
        /// The sequence's elements, each boxed.
        var plannerElements: [Any] { get }
    }

    /// A Boolean expression node that can describe what it asks of the indexed attributes.
    /// A node that compares an attribute with constants and nothing more (`==`, `contains`): when the plan reads
    /// exactly its term's models, the node holds for all of them.
    protocol SingleComparison {}

    /// An `||` node, whose plan may answer it exactly when each side's answers that side
    /// (``Candidate/isExact``).
    protocol DisjunctionNode {}

    /// A node that may be made only of `==`, `<`, `<=`, `>` and `>=` joined by `&&`, which a range of an index with
    /// exact order answers exactly (a compound index's with equalities on its first attributes).
    protocol ComparisonTree {
        /// How many equalities and comparisons the node is made of, or `nil` when it holds anything else.
        var comparisonCount: Int? { get }
    }

    protocol Node {
        /// Returns the constraints this node puts on attributes; every record that satisfies the node satisfies each
        /// returned term, so a plan built from any one term leaves no match out.
        /// - Parameter indexes: The indexes available, for nodes (such as a disjunction) that plan their parts.
        func plannerTerms(indexes: [PlannerIndex]) -> [KeyPathTerm]
    }

    /// Returns the constraints of any expression, or none when the planner does not understand it.
    /// - Parameters:
    ///   - expression: A node of a predicate's expression tree.
    ///   - indexes: The indexes available.
    static func terms(of expression: Any, indexes: [PlannerIndex]) -> [KeyPathTerm] {
        guard let node = expression as? any Node else { return [] }
        return node.plannerTerms(indexes: indexes)
    }

    /// Matches a binary node's operands as an attribute and a constant, in either order.
    /// - Parameters:
    ///   - lhs: The node's left operand.
    ///   - rhs: The node's right operand.
    /// - Returns: The attribute's key path, the constant, and whether the constant was on the left (so an ordering
    ///   operator must be flipped), or `nil` when the operands are not one attribute and one constant.
    static func attributeAndConstant(_ lhs: Any, _ rhs: Any) -> (keyPath: AnyKeyPath, constant: Any, isFlipped: Bool)? {
        if let attribute = lhs as? any KeyPathOperand, let keyPath = attribute.plannerKeyPath,
            let value = constant(rhs)
        {
            return (keyPath, value, false)
        }
        if let attribute = rhs as? any KeyPathOperand, let keyPath = attribute.plannerKeyPath,
            let value = constant(lhs)
        {
            return (keyPath, value, true)
        }
        return nil
    }

    /// The value of an operand that does not depend on the predicate's input, worked out once before planning: a
    /// literal or captured value, or any expression over them (a property or method of a captured value, optional
    /// chaining, arithmetic, ...), boxed as typed (an optional stays an optional). `nil` when the operand reads the
    /// input, or cannot be evaluated.
    ///
    /// An expression that is neither a known constant nor the input is evaluated without any bindings: one that
    /// reads the input throws there (its variable is unbound), and so does one that fails on its own. Either way it is
    /// no constant, and the fetch, which evaluates the whole predicate on every candidate, reports a real failure.
    /// - Parameter operand: An operand of a comparison.
    static func constant(_ operand: Any) -> Any? {
        if let constant = operand as? any ConstantOperand { return constant.plannerConstant }
        if operand is any KeyPathOperand { return nil }
        guard let expression = operand as? any PredicateExpression else { return nil }
        return try? evaluatedWithoutInput(expression)
    }

    /// The elements of an operand that is a constant sequence, such as `ids` in `ids.contains($0.id)` or
    /// `project.taskIDs` in `project.taskIDs.contains($0.id)`, or `nil` when it is none.
    /// - Parameter operand: The sequence operand of a `contains`.
    static func constantElements(_ operand: Any) -> [Any]? {
        if let constants = operand as? any ConstantSequenceOperand { return constants.plannerElements }
        guard let value = constant(operand), let sequence = value as? any Sequence else { return nil }
        return elements(of: sequence)
    }

    static func evaluatedWithoutInput<E: PredicateExpression>(_ expression: E) throws -> Any {
        try expression.evaluate(PredicateBindings()) as Any
    }

    private static func elements<S: Sequence>(of sequence: S) -> [Any] {
        sequence.map { $0 }
    }
}

extension PredicateExpressions.Variable: QueryPlanner.InputOperand {}

extension PredicateExpressions.Variable: QueryPlanner.KeyPathOperand {
    /// The identity key path: the variable is the predicate's input itself.
    var plannerKeyPath: AnyKeyPath? { \Output.self }
}

extension PredicateExpressions.KeyPath: QueryPlanner.KeyPathOperand where Root: QueryPlanner.KeyPathOperand {
    /// The root's key path followed by this one, so `$0.address.city` reads as `\Input.address.city`; on the input
    /// itself, this key path as it is (appending it to `\Input.self` would make a new key path for every plan).
    var plannerKeyPath: AnyKeyPath? {
        if Root.self is any QueryPlanner.InputOperand.Type { return keyPath }
        return root.plannerKeyPath?.appending(path: keyPath)
    }
}

extension PredicateExpressions.KeyPath: QueryPlanner.Node
where Root: QueryPlanner.KeyPathOperand, Output == Bool {
    /// A Boolean attribute used as a condition (`#Predicate { $0.isDone }`) is an equality with `true`.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        guard let keyPath = plannerKeyPath else { return [] }
        return [.equal(keyPath, true)]
    }
}

extension PredicateExpressions.Value: QueryPlanner.ConstantOperand {
    /// The captured value or literal, boxed as it is typed (`Optional<UUID>` stays optional, `nil` included).
    var plannerConstant: Any? { .some(value) }
}

extension PredicateExpressions.Value: QueryPlanner.ConstantSequenceOperand where Output: Sequence {
    /// The captured sequence's elements.
    var plannerElements: [Any] { value.map { $0 } }
}

extension PredicateExpressions.OptionalFlatMap: QueryPlanner.KeyPathOperand where LHS: QueryPlanner.KeyPathOperand {
    /// `$0.project?.id`, the ID of the model a to-one relationship property holds, reads as the property itself,
    /// whose relationship index is keyed by that ID (``ModelIndex/references(_:isToMany:plannedAs:read:)``). Any
    /// other optional chain reads no attribute.
    var plannerKeyPath: AnyKeyPath? {
        guard let read = transform as? any QueryPlanner.ModelIDRead, read.readsID(of: variable.key) else { return nil }
        return wrapped.plannerKeyPath
    }
}

extension QueryPlanner {
    /// An expression that may read a model's `id` from a variable.
    protocol ModelIDRead {
        /// Whether the expression is `variable.id`, the ID of the model the variable holds.
        func readsID(of variable: PredicateExpressions.VariableID) -> Bool
    }
}

extension PredicateExpressions.KeyPath: QueryPlanner.ModelIDRead {
    func readsID(of variable: PredicateExpressions.VariableID) -> Bool {
        // The key path literal `\Project.id` is the model's own property, which ``StoredModel`` makes its ID.
        guard let root = root as? any QueryPlanner.VariableRead, root.variableKey == variable else { return false }
        return Root.Output.self is any StoredModel.Type && String(describing: keyPath) == "\\\(Root.Output.self).id"
    }
}

extension QueryPlanner {
    /// A variable of a predicate.
    protocol VariableRead {
        var variableKey: PredicateExpressions.VariableID { get }
    }
}

extension PredicateExpressions.Variable: QueryPlanner.VariableRead {
    var variableKey: PredicateExpressions.VariableID { key }
}

extension PredicateExpressions.NilLiteral: QueryPlanner.ConstantOperand {
    /// `nil`, boxed as `Optional<Wrapped>.none` as `PlannerIndex.encodeComponent` expects.
    var plannerConstant: Any? { .some(Wrapped?.none as Any) }
}

extension PredicateExpressions.UnaryMinus: QueryPlanner.ConstantOperand where Wrapped: QueryPlanner.ConstantOperand {
    /// A negated constant, which is how the macro writes a negative literal such as `-3`.
    var plannerConstant: Any? {
        guard let value = wrapped.plannerConstant as? Wrapped.Output else { return nil }
        return .some(-value)
    }
}

extension PredicateExpressions.Equal: QueryPlanner.SingleComparison {}

extension PredicateExpressions.SequenceContains: QueryPlanner.SingleComparison {}

extension PredicateExpressions.Equal: QueryPlanner.Node {
    /// `attribute == constant`, either way round.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs) else { return [] }
        return [.equal(match.keyPath, match.constant)]
    }
}

extension PredicateExpressions.NotEqual: QueryPlanner.Node {
    /// `attribute != nil`, either way round: every key but nil's, which sorts before every value's. `attribute !=
    /// value`: the keys on both sides of the value's (``QueryPlanner/complementTerms(of:value:indexes:)``), which
    /// only a store's counts can tell worth reading.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs) else { return [] }
        guard (match.constant as? any AnyOptional)?.isNil == true else {
            return QueryPlanner.complementTerms(of: match.keyPath, value: match.constant, indexes: indexes)
        }
        return [.compare(match.keyPath, .greaterThan, match.constant)]
    }
}

extension QueryPlanner {
    /// A node that is an equality of an attribute and a constant.
    protocol EqualityNode {
        /// The attribute and the constant, or `nil` when the operands are not one of each.
        var plannerEquality: (keyPath: AnyKeyPath, constant: Any)? { get }
    }

    /// For `attribute != value` on a single-attribute index that is not multi-entry: the union of the ranges below
    /// and above the value's key, with that key as ``Candidate/excludedKey``, so that it is never chosen without the
    /// store's counts (``bestCandidate(for:indexes:)`` passes over it). `nil` sorts first, below every value, so the
    /// range below holds the models whose attribute is `nil`, which `!=` matches.
    static func complementTerms(
        of keyPath: AnyKeyPath, value: Any, indexes: [PlannerIndex]
    ) -> [KeyPathTerm] {
        indexes.compactMap { index -> KeyPathTerm? in
            guard !index.isMultiEntry, !index.isRecordKey, index.keyPaths.count == 1,
                index.matches(keyPath, index.attributes[0]), let key = index.encodeComponent(value),
                key.count <= IndexKey.maximumLength
            else { return nil }
            let below = QueryPlan.range(index: index.name, lower: nil, upper: .init(key: key, isInclusive: false))
            let above = QueryPlan.range(index: index.name, lower: .init(key: key, isInclusive: false), upper: nil)
            var candidate = Candidate(plan: .union([below, above]), isUnique: false, attributeCount: 1)
            candidate.excludedKey = key
            return .candidate(candidate)
        }
    }
}

extension PredicateExpressions.Equal: QueryPlanner.EqualityNode {
    var plannerEquality: (keyPath: AnyKeyPath, constant: Any)? {
        QueryPlanner.attributeAndConstant(lhs, rhs).map { ($0.keyPath, $0.constant) }
    }
}

extension PredicateExpressions.Negation: QueryPlanner.Node {
    /// `!attribute` on a Boolean attribute: an equality with `false`. `!(attribute == value)`: as `attribute !=
    /// value`. Any other negation is not planned.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        if let attribute = wrapped as? any QueryPlanner.KeyPathOperand, let keyPath = attribute.plannerKeyPath {
            return [.equal(keyPath, false)]
        }
        if let equality = (wrapped as? any QueryPlanner.EqualityNode)?.plannerEquality,
            (equality.constant as? any AnyOptional)?.isNil != true
        {
            return QueryPlanner.complementTerms(of: equality.keyPath, value: equality.constant, indexes: indexes)
        }
        return []
    }
}

extension PredicateExpressions.Comparison: QueryPlanner.ComparisonTree {
    var comparisonCount: Int? { 1 }
}

extension PredicateExpressions.Equal: QueryPlanner.ComparisonTree {
    var comparisonCount: Int? { 1 }
}

extension PredicateExpressions.Conjunction: QueryPlanner.ComparisonTree {
    var comparisonCount: Int? {
        guard let left = (lhs as? any QueryPlanner.ComparisonTree)?.comparisonCount,
            let right = (rhs as? any QueryPlanner.ComparisonTree)?.comparisonCount
        else { return nil }
        return left + right
    }
}

extension PredicateExpressions.Comparison: QueryPlanner.Node {
    /// `attribute < constant` and the like; `constant < attribute` is flipped to `attribute > constant`.
    ///
    /// A `Date`'s `<=` and `>=` are `Comparable`'s, `!(b < a)` and `!(a < b)`, which a NaN date on either side makes
    /// true, where the key of a NaN date sorts after every other: a NaN constant bounds nothing, and the upper bound of
    /// `<=` would leave out the models whose date is NaN, which it matches. Neither gives a term, and the fetch's
    /// evaluation decides. (A lower bound keeps those models, whose key is the last.)
    ///
    /// A string's keys sort by the bytes of its NFC form, but this platform's `String` comparison disagrees with that
    /// order for some strings that hold decomposed characters or Hangul jamo, and is not even a total order there
    /// (`"a\u{308}"` is neither less than, greater than nor equal to `"\u{E4}A"`, so `>=` matches it where its key
    /// is below the bound's). Against a constant of ASCII characters other than NUL no disagreement is known (none in
    /// 300,000 random pairs with such strings stored): only those bound an index read, and comparisons with any other
    /// string are left to the evaluation.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs) else { return [] }
        let comparison = match.isFlipped ? op.plannerFlipped : op
        return QueryPlanner.comparisonTerm(match.keyPath, comparison, match.constant).map { [$0] } ?? []
    }
}

extension QueryPlanner {
    /// The term of `attribute comparison constant`, the attribute on the left, or `nil` when the comparison bounds
    /// no index read (a NaN `Date` or a `Date`'s `<=`, a string that is not plain ASCII: see
    /// `PredicateExpressions.Comparison`'s `plannerTerms(indexes:)`).
    static func comparisonTerm(
        _ keyPath: AnyKeyPath, _ comparison: PredicateExpressions.ComparisonOperator, _ constant: Any
    ) -> KeyPathTerm? {
        // The constant's type, compared rather than cast to: a comparison's operands are of one `Comparable` type.
        func boundsNothing<T>(_ value: T) -> Bool {
            if T.self == Date.self {
                let date = knownTypeCast(value, to: Date.self)
                return date.timeIntervalSinceReferenceDate.isNaN || comparison == .lessThanOrEqual
            }
            if T.self == String.self {
                return !knownTypeCast(value, to: String.self).utf8.allSatisfy { $0 != 0 && $0 < 0x80 }
            }
            return false
        }
        return boundsNothing(constant) ? nil : .compare(keyPath, comparison, constant)
    }
}

extension PredicateExpressions.ComparisonOperator {
    /// The operator that gives the same result with the operands swapped (`5 < x` is `x > 5`).
    var plannerFlipped: Self {
        switch self {
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        }
    }
}

extension PredicateExpressions.SequenceContains: QueryPlanner.Node {
    /// `$0.tags.contains(constant)` (a multi-entry index) or `constant.contains($0.field)` (several keys).
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        if let attribute = sequence as? any QueryPlanner.KeyPathOperand, let keyPath = attribute.plannerKeyPath,
            let value = QueryPlanner.constant(element)
        {
            return [.containsElement(keyPath, value)]
        }
        if let attribute = element as? any QueryPlanner.KeyPathOperand, let keyPath = attribute.plannerKeyPath,
            let elements = QueryPlanner.constantElements(sequence)
        {
            return [.oneOf(keyPath, elements)]
        }
        return []
    }
}

extension PredicateExpressions.SequenceStartsWith: QueryPlanner.Node {
    /// `$0.name.starts(with: constant)` on a string attribute: a range of its index's keys.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        guard let attribute = base as? any QueryPlanner.KeyPathOperand, let keyPath = attribute.plannerKeyPath,
            let prefix = QueryPlanner.constant(self.prefix) as? String
        else { return [] }
        return [.prefix(keyPath, prefix)]
    }
}

extension PredicateExpressions.Conjunction: QueryPlanner.Node {
    /// Both sides hold, so every constraint of either side holds.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        QueryPlanner.terms(of: lhs, indexes: indexes) + QueryPlanner.terms(of: rhs, indexes: indexes)
    }
}

extension PredicateExpressions.Disjunction: QueryPlanner.DisjunctionNode {}

extension PredicateExpressions.Disjunction: QueryPlanner.Node {
    /// Usable when both sides are: keys of the same index are merged into one read of their union; other plans are
    /// read one after the other (``QueryPlan/union(_:)``), a union of unions flattened. A side without a plan leaves
    /// the disjunction to a scan.
    func plannerTerms(indexes: [PlannerIndex]) -> [QueryPlanner.KeyPathTerm] {
        let leftTerms = QueryPlanner.terms(of: lhs, indexes: indexes)
        let rightTerms = QueryPlanner.terms(of: rhs, indexes: indexes)
        let left = QueryPlanner.bestCandidate(for: leftTerms, indexes: indexes)
        let right = QueryPlanner.bestCandidate(for: rightTerms, indexes: indexes)
        guard let left, let right else { return [] }
        // The union reads exactly the models of either side when each side's plan reads exactly that side's.
        let isExact =
            QueryPlanner.isExact(left.plan, shape: .init(lhs), terms: leftTerms, indexes: indexes)
            && QueryPlanner.isExact(right.plan, shape: .init(rhs), terms: rightTerms, indexes: indexes)
        if case .keys(let name, let leftKeys) = left.plan, case .keys(name, let rightKeys) = right.plan {
            var union = QueryPlanner.Candidate(
                plan: .keys(index: name, keys: QueryPlanner.sortedUnique(leftKeys + rightKeys)),
                isUnique: left.isUnique,
                attributeCount: min(left.attributeCount, right.attributeCount)
            )
            union.isExact = isExact
            return [.candidate(union)]
        }
        func parts(_ plan: QueryPlan) -> [QueryPlan] {
            if case .union(let plans) = plan { plans } else { [plan] }
        }
        var union = QueryPlanner.Candidate(
            plan: .union(parts(left.plan) + parts(right.plan)), isUnique: false,
            attributeCount: min(left.attributeCount, right.attributeCount),
            unionTier: min(left.tier, right.tier, 3))
        union.isExact = isExact
        return [.candidate(union)]
    }
}
