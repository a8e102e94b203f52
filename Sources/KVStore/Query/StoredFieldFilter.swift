import Foundation

// A predicate compiled into direct tests on a record's stored fields, so that a scan decodes only the models that
// match: Foundation's `Predicate.evaluate` needs a decoded model, and asks the runtime for type metadata at every
// node, where a compiled test reads one field and compares it with the constant through the type's own operator.
//
// The predicates compiled are made of `==`, `!=`, `<`, `<=`, `>`, `>=` between a top-level stored attribute and a
// constant, a Boolean attribute alone, `&&`, `||` and `!`: the simple shapes a scan is left with. An attribute is
// read by the name the store gives its field (``EntityStore/storedFieldName(of:)``), as the type of its key path, so
// the comparison is the very one `evaluate` makes on the model's property.

/// A test of a record's stored fields, equivalent to a predicate on its model: `true` or `false`, or `nil` when the
/// record cannot tell (a field is missing, holds a value in another encoding, or does not read), and the model must
/// be decoded to know.
typealias StoredFieldTest = (StoredRecordFields) -> Bool?

/// A predicate compiled into a ``StoredFieldTest``, with what checks that its fields are the model's properties.
struct StoredFieldFilter<M: StoredModel> {
    /// The test.
    let test: StoredFieldTest
    /// One check per attribute read: whether the field holds the value of the model's property.
    let checks: [(borrowing FieldReader, M) throws -> Bool]

    /// Compiles `predicate`, or returns `nil` when it holds anything but the shapes compiled (see the file's
    /// comment) or an attribute that is not a stored field of a type read in place (``InPlaceReadable``).
    /// - Parameters:
    ///   - predicate: The predicate.
    ///   - fieldName: The name of the field that stores the attribute at a key path, or `nil` when it is not a
    ///     top-level stored field.
    ///   - fields: The field table of the records tested, which gives the fields' ids.
    static func compile(
        _ predicate: Predicate<M>, fieldName: @escaping (AnyKeyPath) -> String?, fields: FieldTable
    ) -> StoredFieldFilter? {
        let compiler = StoredFieldCompiler<M>(fieldName: fieldName, fields: fields)
        guard let node = predicate.expression as? any StoredFieldNode, let test = node.storedFieldTest(compiler)
        else { return nil }
        return StoredFieldFilter(test: test, checks: compiler.checks)
    }

    /// Whether every attribute the test reads holds, in the record, the value `model` has: the check a scan makes on
    /// the first record it tests, against its decoded model, so that a model whose coding stores a property under
    /// another name or in another form (custom `CodingKeys`, `init(from:)` or `init(fields:)`) is decoded instead.
    func readsSameValues(from fields: borrowing FieldReader, as model: M) throws -> Bool {
        for check in checks where !(try check(fields, model)) { return false }
        return true
    }
}

/// Builds a ``StoredFieldFilter``'s tests and checks while walking a predicate.
final class StoredFieldCompiler<M: StoredModel> {
    /// The name of the field of an attribute, `nil` when it is not a top-level stored field.
    let fieldName: (AnyKeyPath) -> String?
    /// The field table that gives the fields' ids.
    let fields: FieldTable
    /// The checks of the attributes read so far.
    var checks: [(borrowing FieldReader, M) throws -> Bool] = []

    init(fieldName: @escaping (AnyKeyPath) -> String?, fields: FieldTable) {
        self.fieldName = fieldName
        self.fields = fields
    }

    /// The id of the field of the attribute at `keyPath` when it is a stored attribute of type `V` that the records
    /// hold, after adding its check; `nil` otherwise.
    private func field<V: Equatable>(_ keyPath: AnyKeyPath, _: V.Type) -> UInt64? {
        guard let property = keyPath as? KeyPath<M, V>, let name = fieldName(keyPath),
            let id = fields.existingID(for: name, in: .topLevel), let read = TypedReaders<V>.fieldReader()
        else { return nil }
        checks.append { fields, model in try read(fields, name) == model[keyPath: property] }
        return UInt64(id)
    }

    /// A test of `attribute == constant`, or of `!=` when `negated`; `nil` when `V` is not one of the types read in
    /// place.
    func equality<V: Equatable>(_ keyPath: AnyKeyPath, _ constant: V, negated: Bool) -> StoredFieldTest? {
        typealias Tests = SpecializedFieldTests
        guard let id = field(keyPath, V.self) else { return nil }
        // Each type gets code of its own: generic code asks the runtime for metadata at every record.
        func cast<T>(_: T.Type) -> T { knownTypeCast(constant, to: T.self) }
        if V.self == UUID.self { return Tests.equality(id, cast(UUID.self), negated) }
        if V.self == UUID?.self { return Tests.equality(id, cast(UUID?.self), negated) }
        if V.self == String.self { return Tests.equality(id, cast(String.self), negated) }
        if V.self == String?.self { return Tests.equality(id, cast(String?.self), negated) }
        if V.self == Int.self { return Tests.equality(id, cast(Int.self), negated) }
        if V.self == Int?.self { return Tests.equality(id, cast(Int?.self), negated) }
        if V.self == Bool.self { return Tests.equality(id, cast(Bool.self), negated) }
        if V.self == Bool?.self { return Tests.equality(id, cast(Bool?.self), negated) }
        if V.self == Double.self { return Tests.equality(id, cast(Double.self), negated) }
        if V.self == Double?.self { return Tests.equality(id, cast(Double?.self), negated) }
        if V.self == Date.self { return Tests.equality(id, cast(Date.self), negated) }
        if V.self == Date?.self { return Tests.equality(id, cast(Date?.self), negated) }
        checks.removeLast()
        return nil
    }

    /// A test of `attribute op constant`; `nil` when `V` is not one of the types read in place.
    func comparison<V: Comparable>(
        _ keyPath: AnyKeyPath, _ op: PredicateExpressions.ComparisonOperator, _ constant: V
    ) -> StoredFieldTest? {
        typealias Tests = SpecializedFieldTests
        guard let id = field(keyPath, V.self) else { return nil }
        func cast<T>(_: T.Type) -> T { knownTypeCast(constant, to: T.self) }
        if V.self == Int.self { return Tests.comparison(id, op, cast(Int.self)) }
        if V.self == Double.self { return Tests.comparison(id, op, cast(Double.self)) }
        if V.self == Date.self { return Tests.comparison(id, op, cast(Date.self)) }
        if V.self == String.self { return Tests.comparison(id, op, cast(String.self)) }
        if V.self == UUID.self { return Tests.comparison(id, op, cast(UUID.self)) }
        checks.removeLast()
        return nil
    }
}

/// The tests of ``StoredFieldCompiler`` for one concrete type each: called with a concrete `T`, which the compiler
/// specializes them for, so that a record's test makes no generic calls.
enum SpecializedFieldTests {
    /// A test of `field == constant`, or of `!=` when `negated`.
    static func equality<T: InPlaceReadable & Equatable>(
        _ id: UInt64, _ constant: T, _ negated: Bool
    ) -> StoredFieldTest {
        if negated { return { fields in fields.value(ofField: id, as: T.self).map { $0 != constant } } }
        return { fields in fields.value(ofField: id, as: T.self).map { $0 == constant } }
    }

    /// A test of `field == constant` for a `UUID` property, or of `!=` when `negated`, on the stored bytes.
    static func equality(_ id: UInt64, _ constant: UUID, _ negated: Bool) -> StoredFieldTest {
        let words = storedWords(of: constant)
        if negated { return { fields in fields.uuid(ofField: id, equals: words, isOptional: false).map { !$0 } } }
        return { fields in fields.uuid(ofField: id, equals: words, isOptional: false) }
    }

    /// A test of `field == constant` for a `UUID?` property, or of `!=` when `negated`, on the stored bytes.
    static func equality(_ id: UInt64, _ constant: UUID?, _ negated: Bool) -> StoredFieldTest {
        let words = constant.map(storedWords(of:))
        if negated { return { fields in fields.uuid(ofField: id, equals: words, isOptional: true).map { !$0 } } }
        return { fields in fields.uuid(ofField: id, equals: words, isOptional: true) }
    }

    /// The 16 bytes of `uuid` as two integers in the machine's byte order, as a record's bytes load.
    private static func storedWords(of uuid: UUID) -> (UInt64, UInt64) {
        withBorrowedBytes(of: uuid.uuid) { bytes in
            (
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            )
        }
    }

    /// A test of `field op constant`.
    static func comparison<T: InPlaceReadable & Comparable>(
        _ id: UInt64, _ op: PredicateExpressions.ComparisonOperator, _ constant: T
    ) -> StoredFieldTest {
        switch op {
        case .lessThan: return { fields in fields.value(ofField: id, as: T.self).map { $0 < constant } }
        case .lessThanOrEqual: return { fields in fields.value(ofField: id, as: T.self).map { $0 <= constant } }
        case .greaterThan: return { fields in fields.value(ofField: id, as: T.self).map { $0 > constant } }
        case .greaterThanOrEqual: return { fields in fields.value(ofField: id, as: T.self).map { $0 >= constant } }
        }
    }
}

/// A node of a predicate's expression that compiles into a ``StoredFieldTest``.
protocol StoredFieldNode {
    /// The node's test, or `nil` when it does not compile.
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest?
    /// The test of the node's negation, or `nil` when it does not compile.
    func negatedStoredFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest?
}

extension StoredFieldNode {
    /// The node's test, its verdict negated.
    func negatedStoredFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let test = storedFieldTest(compiler) else { return nil }
        return { fields in test(fields).map { !$0 } }
    }

    /// The test of `operand`, a Boolean sub-expression, or `nil` when it does not compile.
    func operandTest<M>(_ operand: Any, _ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        (operand as? any StoredFieldNode)?.storedFieldTest(compiler)
    }
}

extension PredicateExpressions.Equal: StoredFieldNode {
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs), let constant = match.constant as? LHS.Output
        else { return nil }
        return compiler.equality(match.keyPath, constant, negated: false)
    }

    /// `!(a == b)` is `a != b`, tested without a second call.
    func negatedStoredFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs), let constant = match.constant as? LHS.Output
        else { return nil }
        return compiler.equality(match.keyPath, constant, negated: true)
    }
}

extension PredicateExpressions.NotEqual: StoredFieldNode {
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs), let constant = match.constant as? LHS.Output
        else { return nil }
        return compiler.equality(match.keyPath, constant, negated: true)
    }

    /// `!(a != b)` is `a == b` (`!=` is `==` negated for every `Equatable`), tested without a second call.
    func negatedStoredFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs), let constant = match.constant as? LHS.Output
        else { return nil }
        return compiler.equality(match.keyPath, constant, negated: false)
    }
}

extension PredicateExpressions.Comparison: StoredFieldNode {
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let match = QueryPlanner.attributeAndConstant(lhs, rhs), let constant = match.constant as? LHS.Output
        else { return nil }
        // `constant < attribute` is `attribute > constant`: `>` is `<` with its operands swapped.
        return compiler.comparison(match.keyPath, match.isFlipped ? op.plannerFlipped : op, constant)
    }
}

extension PredicateExpressions.KeyPath: StoredFieldNode where Root: QueryPlanner.KeyPathOperand, Output == Bool {
    /// A Boolean attribute used as a condition.
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let keyPath = plannerKeyPath else { return nil }
        return compiler.equality(keyPath, true, negated: false)
    }
}

extension PredicateExpressions.Negation: StoredFieldNode {
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        (wrapped as? any StoredFieldNode)?.negatedStoredFieldTest(compiler)
    }
}

extension PredicateExpressions.Conjunction: StoredFieldNode {
    /// Both sides; one that is `false` decides, even when the other cannot tell.
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let left = operandTest(lhs, compiler), let right = operandTest(rhs, compiler) else {
            return nil
        }
        return { fields in
            let first = left(fields)
            if first == false { return false }
            let second = right(fields)
            if second == false { return false }
            return first == nil || second == nil ? nil : true
        }
    }
}

extension PredicateExpressions.Disjunction: StoredFieldNode {
    /// Either side; one that is `true` decides, even when the other cannot tell.
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        guard let left = operandTest(lhs, compiler), let right = operandTest(rhs, compiler) else {
            return nil
        }
        return { fields in
            let first = left(fields)
            if first == true { return true }
            let second = right(fields)
            if second == true { return true }
            return first == nil || second == nil ? nil : false
        }
    }
}

extension PredicateExpressions.Value: StoredFieldNode where Output == Bool {
    /// `true` or `false` as a condition.
    func storedFieldTest<M>(_ compiler: StoredFieldCompiler<M>) -> StoredFieldTest? {
        let value = self.value
        return { _ in value }
    }
}
