import Foundation
import LMDB

/// The plans of the most common predicate, one equality between an attribute and a constant (`$0.id == id`,
/// `$0.projectID == projectID`), worked out once per attribute and reused with each new constant.
///
/// For such a predicate the planner's choice does not depend on the constant: it ranks the indexes on the attribute by
/// what they are (unique or not, single or compound), never by the value, and reads the winner's key of the value. So
/// the first plan made for an attribute is kept as a template (the index it reads and the facts about it), and later
/// predicates of the same shape encode their constant with that index's encoder instead of planning again, which cost
/// several times more than the key lookup itself. Anything else, and any constant whose key the template cannot take
/// as it is (it does not encode, or it is too long for LMDB and would be cut), goes to ``QueryPlanner`` in full, so the
/// plans are the planner's own.
///
/// Reading the attribute and the constant out of the predicate is itself worked out once per expression type
/// (``QueryPlanner/EqualityNodeType``): the casts that find the operands' roles cost more than the rest of a
/// templated plan.
///
/// Templates are kept per key path: first by the key path object, a literal being made once per place in the
/// program, then by equality of key paths (a nested path such as `$0.address.city` is a new object at every plan).
/// Each table stops growing at ``capacity`` entries; later attributes are looked up by equality, or planned in full
/// each time.
final class EqualityPlans<Root>: Sendable {
    /// The most entries of each table.
    static var capacity: Int { 256 }

    /// The tables. (Key paths are immutable objects, the encoders `@Sendable`, and the readers hold no state.)
    private let tables = Locked(EqualityPlanTables())

    /// Plans a fetch as ``QueryPlanner/plan(predicate:sortBy:fetchLimit:fetchOffset:indexes:)`` does, from a template
    /// when the predicate is one equality on an attribute planned before.
    func plan(
        predicate: Predicate<Root>?, sortBy: [SortDescriptor<Root>], fetchLimit: Int?, fetchOffset: Int,
        indexes: [PlannerIndex]
    ) -> PlannedQuery {
        plan(
            predicate: predicate, expression: predicate?.expression, sortBy: sortBy, fetchLimit: fetchLimit,
            fetchOffset: fetchOffset, indexes: indexes
        ) {
            QueryPlanner.plan(
                predicate: predicate, sortBy: sortBy, fetchLimit: fetchLimit, fetchOffset: fetchOffset,
                indexes: indexes)
        }
    }

    /// Plans a fetch from a template as ``plan(predicate:sortBy:fetchLimit:fetchOffset:indexes:)`` does, and any
    /// predicate that is not one equality through `planOther` (``ComparisonPlans`` for a store).
    ///
    /// `expression` is the predicate's (``FetchDescriptor`` keeps it beside the predicate): reading it out of the
    /// optional predicate here, in code generic over the model, would copy the predicate.
    func plan(
        predicate: Predicate<Root>?, expression: (any StandardPredicateExpression<Bool>)?,
        sortBy: [SortDescriptor<Root>], fetchLimit: Int?, fetchOffset: Int, indexes: [PlannerIndex],
        otherwise planOther: () -> PlannedQuery
    ) -> PlannedQuery {
        func planInFull() -> PlannedQuery {
            QueryPlanner.plan(
                predicate: predicate, sortBy: sortBy, fetchLimit: fetchLimit, fetchOffset: fetchOffset,
                indexes: indexes)
        }
        guard let expression, let equality = self.equality(in: expression) else {
            return planOther()
        }
        guard let template = template(for: equality.keyPath) else {
            let planned = planInFull()
            remember(planned, for: equality, indexes: indexes)
            return planned
        }
        guard let index = template.index, let key = template.encode(equality.constant),
            key.count <= IndexKey.maximumLength
        else { return planInFull() }
        let plan = QueryPlan.keys(index: index, keys: [key])
        var planned = PlannedQuery(
            // `count`, not `isEmpty`: here that is `Collection`'s, called after a run-time lookup of the array's type.
            plan: plan, isSorted: sortBy.count == 0 || QueryPlanner.isSorted(plan, sortBy: sortBy, indexes: indexes),
            uniqueIndexes: template.uniqueIndexes, isExact: template.answersExactly)
        planned.mayCount = template.mayCount
        return planned
    }

    /// The attribute and the constant of `expression` when it is one equality of them, read by its type's reader.
    private func equality(
        in expression: any StandardPredicateExpression<Bool>
    ) -> (keyPath: AnyKeyPath, constant: Any)? {
        let type = ObjectIdentifier(Swift.type(of: expression))
        let known = tables.withLock { $0.readers[type] }
        if let known { return known?(expression) }
        let reader = (Swift.type(of: expression) as? any QueryPlanner.EqualityNodeType.Type)?.plannerEqualityReader
        tables.withLock { tables in
            if tables.readers.count < Self.capacity { tables.readers[type] = .some(reader) }
        }
        return reader?(expression)
    }

    /// The template of the attribute at `keyPath`, if one was made.
    private func template(for keyPath: AnyKeyPath) -> EqualityTemplate? {
        let object = ObjectIdentifier(keyPath)
        return tables.withLock { tables in
            if let known = tables.byObject[object] { return known.template }
            guard let template = tables.byKeyPath[keyPath] else { return nil }
            if tables.byObject.count < Self.capacity { tables.byObject[object] = (keyPath, template) }
            return template
        }
    }

    /// Keeps `planned`, the full plan of an equality, as the template of its attribute when it reads one key that the
    /// chosen index's encoder gives for the constant, as the template will make it for the next constants.
    private func remember(
        _ planned: PlannedQuery, for equality: (keyPath: AnyKeyPath, constant: Any), indexes: [PlannerIndex]
    ) {
        var template = EqualityTemplate(
            index: nil, encode: { _ in nil }, answersExactly: false, uniqueIndexes: [], mayCount: false)
        if case .keys(let name, let keys) = planned.plan, keys.count == 1,
            let index = indexes.first(where: { $0.name == name }), index.attributes.count == 1,
            index.matches(equality.keyPath, index.attributes[0]),
            keys[0].count <= IndexKey.maximumLength, index.encodeComponent(equality.constant) == keys[0]
        {
            template = EqualityTemplate(
                index: name, encode: index.encodeComponent, answersExactly: planned.isExact,
                uniqueIndexes: planned.uniqueIndexes, mayCount: planned.mayCount)
        }
        tables.withLock { tables in
            if tables.byKeyPath.count < Self.capacity { tables.byKeyPath[equality.keyPath] = template }
        }
    }
}

extension QueryPlanner {
    /// Reads the attribute and the constant of an equality node of one type, or returns `nil` (see
    /// ``EqualityNode/plannerEquality``).
    ///
    /// Not `@Sendable`, since it captures the operands' metatypes; it holds no other state, and ``EqualityPlans``
    /// shares it between threads behind its lock.
    ///
    /// It takes the expression as it is, not in an `Any`, whose box would be a copy of the node made and destroyed at
    /// every query.
    typealias EqualityReader = (any StandardPredicateExpression<Bool>) -> (keyPath: AnyKeyPath, constant: Any)?

    /// An expression type whose nodes may be an equality of an attribute and a constant.
    protocol EqualityNodeType {
        /// A reader of the nodes of this type, made once: the roles of the operands are worked out from their
        /// types, so that reading a node calls their members directly; `nil` when neither operand's type can be
        /// the attribute alone.
        static var plannerEqualityReader: EqualityReader? { get }
    }
}

extension PredicateExpressions.Equal: QueryPlanner.EqualityNodeType {
    static var plannerEqualityReader: QueryPlanner.EqualityReader? {
        let lhsAttribute = LHS.self as? any QueryPlanner.KeyPathOperand.Type
        let rhsAttribute = RHS.self as? any QueryPlanner.KeyPathOperand.Type
        if let lhsAttribute, rhsAttribute == nil { return reader(attributeOnLeft: lhsAttribute) }
        if let rhsAttribute, lhsAttribute == nil { return reader(attributeOnRight: rhsAttribute) }
        // Two attributes, or none: no equality of an attribute and a constant.
        return nil
    }

    /// A reader for nodes whose left operand, of type `A`, is the attribute; the right one, which is no attribute by
    /// its type, is the constant (``QueryPlanner/constant(_:)``).
    private static func reader<A: QueryPlanner.KeyPathOperand>(attributeOnLeft: A.Type) -> QueryPlanner.EqualityReader {
        let constant = QueryPlanner.constantReader(of: RHS.self)
        return { expression in
            read(expression) { node in
                guard let keyPath = knownTypeCast(node.lhs, to: A.self).plannerKeyPath, let value = constant(node.rhs)
                else { return nil }
                return (keyPath, value)
            }
        }
    }

    /// A reader for nodes whose right operand, of type `A`, is the attribute, and the left one the constant.
    private static func reader<A: QueryPlanner.KeyPathOperand>(attributeOnRight: A.Type) -> QueryPlanner.EqualityReader
    {
        let constant = QueryPlanner.constantReader(of: LHS.self)
        return { expression in
            read(expression) { node in
                guard let keyPath = knownTypeCast(node.rhs, to: A.self).plannerKeyPath, let value = constant(node.lhs)
                else { return nil }
                return (keyPath, value)
            }
        }
    }

    /// What `body` reads of `expression` as a node of this type, or `nil` when it is of another: compared by type
    /// and taken out of its box by ``knownTypeCast(_:to:)``, since `as? Self`, or any `Self?`, looked up the metadata
    /// of `Self?` at every query.
    private static func read(
        _ expression: any StandardPredicateExpression<Bool>, _ body: (Self) -> (keyPath: AnyKeyPath, constant: Any)?
    ) -> (keyPath: AnyKeyPath, constant: Any)? {
        func open<T: StandardPredicateExpression<Bool>>(_ value: T) -> (keyPath: AnyKeyPath, constant: Any)? {
            T.self == Self.self ? body(knownTypeCast(value, to: Self.self)) : nil
        }
        return open(expression)
    }
}

extension QueryPlanner {
    /// A reader of the value of operands of type `E`, which is no attribute: as ``constant(_:)`` works it out, with
    /// the cast that finds a literal or captured value made once for the type.
    static func constantReader<E: PredicateExpression>(of _: E.Type) -> (E) -> Any? {
        if let constant = E.self as? any ConstantOperand.Type { return constantReader(of: E.self, as: constant) }
        return { operand in try? evaluatedWithoutInput(operand) }
    }

    private static func constantReader<E: PredicateExpression, C: ConstantOperand>(
        of _: E.Type, as _: C.Type
    ) -> (E) -> Any? {
        { operand in knownTypeCast(operand, to: C.self).plannerConstant }
    }
}

/// How the planner reads an equality on one attribute, whatever the constant.
private struct EqualityTemplate {
    /// The index read, `nil` when the planner chose no single key of an index: such predicates are planned in
    /// full each time.
    let index: String?
    /// The index's encoder of the attribute's values.
    let encode: @Sendable (Any) -> [UInt8]?
    /// Whether a read of one key answers the equality exactly when the key is not cut (see
    /// ``QueryPlanner/isExact(_:predicate:terms:indexes:)``).
    let answersExactly: Bool
    /// The plan's ``PlannedQuery/uniqueIndexes``.
    let uniqueIndexes: [String]
    /// The plan's ``PlannedQuery/mayCount``, which depends on the indexes on the attribute alone.
    let mayCount: Bool
}

/// What ``EqualityPlans`` has learnt, behind its lock. It and ``EqualityTemplate`` are declared outside the generic
/// class, whose nested types would be generic too and cost a metadata lookup at every use.
private struct EqualityPlanTables {
    /// The reader of each expression type's equality, `nil` for a type that is not an equality of an attribute
    /// and a constant.
    var readers: [ObjectIdentifier: QueryPlanner.EqualityReader?] = [:]
    /// The templates by key path object, each key path held so that its identifier keeps naming it.
    var byObject: [ObjectIdentifier: (keyPath: AnyKeyPath, template: EqualityTemplate)] = [:]
    /// The templates by key path.
    var byKeyPath: [AnyKeyPath: EqualityTemplate] = [:]
}
