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
    let checks: [FieldCheck<M>]

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
    /// the records it decodes, against their decoded models, so that a model whose coding stores a property under
    /// another name or in another form (custom `CodingKeys`, `init(from:)` or `init(fields:)`) is decoded instead.
    /// The fields are read in place, as the test reads them: one that does not read so does not hold the value.
    func readsSameValues(in fields: StoredRecordFields, as model: M) -> Bool {
        for check in checks where !check(fields, model) { return false }
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
    var checks: [FieldCheck<M>] = []

    init(fieldName: @escaping (AnyKeyPath) -> String?, fields: FieldTable) {
        self.fieldName = fieldName
        self.fields = fields
    }

    /// The id of the field of the attribute at `keyPath` and the attribute's key path, when it is a stored attribute
    /// of type `V` that the records hold; `nil` otherwise.
    private func field<V>(_ keyPath: AnyKeyPath, _: V.Type) -> (id: UInt64, property: KeyPath<M, V>)? {
        guard let property = keyPath as? KeyPath<M, V>, let name = fieldName(keyPath),
            let id = fields.existingID(for: name, in: .topLevel)
        else { return nil }
        return (UInt64(id), property)
    }

    /// A test of `attribute == constant`, or of `!=` when `negated`; `nil` when `V` is not one of the types read in
    /// place.
    func equality<V: Equatable>(_ keyPath: AnyKeyPath, _ constant: V, negated: Bool) -> StoredFieldTest? {
        typealias Tests = SpecializedFieldTests
        guard let (id, property) = field(keyPath, V.self) else { return nil }
        // Each type gets code of its own: generic code asks the runtime for metadata at every record.
        func cast<T>(_: T.Type) -> T { knownTypeCast(constant, to: T.self) }
        func path<T>(_: T.Type) -> KeyPath<M, T> { knownTypeCast(property, to: KeyPath<M, T>.self) }
        func checked(_ test: @escaping StoredFieldTest, _ check: @escaping FieldCheck<M>) -> StoredFieldTest {
            checks.append(check)
            return test
        }
        if V.self == UUID.self {
            return checked(Tests.equality(id, cast(UUID.self), negated), Tests.check(id, path(UUID.self)))
        }
        if V.self == UUID?.self {
            return checked(Tests.equality(id, cast(UUID?.self), negated), Tests.check(id, path(UUID?.self)))
        }
        if V.self == String.self {
            return checked(Tests.equality(id, cast(String.self), negated), Tests.check(id, path(String.self)))
        }
        if V.self == String?.self {
            return checked(Tests.equality(id, cast(String?.self), negated), Tests.check(id, path(String?.self)))
        }
        if V.self == Int.self {
            return checked(Tests.equality(id, cast(Int.self), negated), Tests.check(id, path(Int.self)))
        }
        if V.self == Int?.self {
            return checked(Tests.equality(id, cast(Int?.self), negated), Tests.check(id, path(Int?.self)))
        }
        if V.self == Bool.self {
            return checked(Tests.equality(id, cast(Bool.self), negated), Tests.check(id, path(Bool.self)))
        }
        if V.self == Bool?.self {
            return checked(Tests.equality(id, cast(Bool?.self), negated), Tests.check(id, path(Bool?.self)))
        }
        if V.self == Double.self {
            return checked(Tests.equality(id, cast(Double.self), negated), Tests.check(id, path(Double.self)))
        }
        if V.self == Double?.self {
            return checked(Tests.equality(id, cast(Double?.self), negated), Tests.check(id, path(Double?.self)))
        }
        if V.self == Date.self {
            return checked(Tests.equality(id, cast(Date.self), negated), Tests.check(id, path(Date.self)))
        }
        if V.self == Date?.self {
            return checked(Tests.equality(id, cast(Date?.self), negated), Tests.check(id, path(Date?.self)))
        }
        return nil
    }

    /// A test of `attribute op constant`; `nil` when `V` is not one of the types read in place.
    func comparison<V: Comparable>(
        _ keyPath: AnyKeyPath, _ op: PredicateExpressions.ComparisonOperator, _ constant: V
    ) -> StoredFieldTest? {
        typealias Tests = SpecializedFieldTests
        guard let (id, property) = field(keyPath, V.self) else { return nil }
        func cast<T>(_: T.Type) -> T { knownTypeCast(constant, to: T.self) }
        func path<T>(_: T.Type) -> KeyPath<M, T> { knownTypeCast(property, to: KeyPath<M, T>.self) }
        func checked(_ test: @escaping StoredFieldTest, _ check: @escaping FieldCheck<M>) -> StoredFieldTest {
            checks.append(check)
            return test
        }
        if V.self == Int.self {
            return checked(Tests.comparison(id, op, cast(Int.self)), Tests.check(id, path(Int.self)))
        }
        if V.self == Double.self {
            return checked(Tests.comparison(id, op, cast(Double.self)), Tests.check(id, path(Double.self)))
        }
        if V.self == Date.self {
            return checked(Tests.comparison(id, op, cast(Date.self)), Tests.check(id, path(Date.self)))
        }
        if V.self == String.self {
            return checked(Tests.comparison(id, op, cast(String.self)), Tests.check(id, path(String.self)))
        }
        if V.self == UUID.self {
            return checked(Tests.comparison(id, op, cast(UUID.self)), Tests.check(id, path(UUID.self)))
        }
        return nil
    }
}

/// A check that a record's field holds the value of its model's property (``StoredFieldFilter/checks``).
typealias FieldCheck<M> = (StoredRecordFields, M) -> Bool

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

    // The checks of a field, one per type: a function generic over the model alone, so that the field is read and
    // compared as the concrete type (one generic over the type too would not be specialized for it, the model's type
    // being unknown here, and asked the runtime for the optional's metadata and its `==` at every record). The model's
    // property is read at its offset when it has one (``ModelAddress/valueReader(of:)``): applying the key path went
    // through the runtime's key path interpreter, half of a check.

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, UUID>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: UUID.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, UUID?>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: UUID?.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, String>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: String.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, String?>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: String?.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Int>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Int.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Int?>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Int?.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Bool>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Bool.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Bool?>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Bool?.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Double>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Double.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Double?>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Double?.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Date>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Date.self) == read(model) }
    }

    /// Whether the field `id` holds, read in place, the value of the model's property at `property`.
    static func check<M>(_ id: UInt64, _ property: KeyPath<M, Date?>) -> FieldCheck<M> {
        let read = ModelAddress.valueReader(of: property)
        return { fields, model in fields.value(ofField: id, as: Date?.self) == read(model) }
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

/// Decides which candidates of a plan that does not answer its predicate exactly match it: through the predicate
/// compiled into a ``StoredFieldFilter`` when it compiles, tested on each candidate's record, and through
/// `Predicate.evaluate` on the decoded model otherwise.
///
/// An index read's candidates are decoded whatever their verdict (most of them match), so, unlike a scan, the matcher
/// never passes over a record unread, and each verdict is checked against the decoded model
/// (``StoredFieldFilter/readsSameValues(in:as:)``), which costs a fraction of an evaluation: a record whose fields
/// disagree with its model turns the test off for the rest of the fetch, and that candidate and the later ones are
/// evaluated. The predicate is compiled when the first candidate comes, so a read that finds nothing compiles nothing.
final class CandidateMatcher<M: StoredModel> {
    private let predicate: Predicate<M>
    private let compile: () -> StoredFieldFilter<M>?
    private var filter: StoredFieldFilter<M>?
    private var isCompiled = false

    /// A matcher of `predicate`; `compile` compiles it for the records tested, or returns `nil` when it must be
    /// evaluated.
    init(_ predicate: Predicate<M>, compile: @escaping () -> StoredFieldFilter<M>?) {
        self.predicate = predicate
        self.compile = compile
    }

    /// A matcher of `predicate` through `filter`, the predicate compiled already.
    convenience init(_ predicate: Predicate<M>, filter: StoredFieldFilter<M>) {
        self.init(predicate) { filter }
    }

    /// Whether `model`, decoded from `record` (whose checksum the decoding checked), matches the predicate.
    ///
    /// - Throws: What the predicate's evaluation throws.
    func matches(_ model: M, record: BorrowedBytes) throws -> Bool {
        if !isCompiled {
            filter = compile()
            isCompiled = true
        }
        if let filter, let fields = StoredRecordFields(decodedRecord: record), let verdict = filter.test(fields) {
            if filter.readsSameValues(in: fields, as: model) { return verdict }
            self.filter = nil
        }
        return try predicate.evaluate(model)
    }
}
