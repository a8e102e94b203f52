import Foundation
import KVStore

/// One condition of a query over stored records: a field compared with a value (`kvtool list --where FIELD=VALUE`,
/// `FIELD!=VALUE`, `FIELD<VALUE`, `FIELD<=VALUE`, `FIELD>VALUE`, `FIELD>=VALUE`), or a string field's prefix
/// (`FIELD^=PREFIX`).
///
/// Equality: a value of the kind the catalog gives the field compares as index keys do: the same kind and the same
/// key encoding, so `-0.0` equals `0.0`. A value whose kind was guessed (the catalog gives the field no kind, or the
/// field holds arrays) compares more loosely: equal numbers of any kind, and a UUID equals its text. An array field
/// meets an equality when it holds an equal element. `!=` is met by exactly the records `=` leaves out: those whose
/// field is absent, null or another value, and for an array field, those that hold no equal element.
///
/// Order (`<`, `<=`, `>`, `>=`) is ``RecordOrder``'s, the index's order: numbers numerically, strings by the UTF-8
/// bytes of their NFC form, UUIDs by their bytes, dates by time. With a kind from the catalog, only values of that
/// kind meet an order condition; with a guessed kind, numbers of every kind compare with each other. A field that is
/// absent or null meets no order condition (use `=null` or `!=null`), nor does a value with no order (a Boolean, say);
/// an array field meets one when one of its elements does. Kinds with no order are refused when the condition is
/// parsed, not here.
///
/// A prefix condition is met by a string whose NFC form's UTF-8 begins with the prefix's (exactly the index range of
/// the prefix), or by an array holding such a string.
///
/// ```swift
/// let condition = RecordCondition(field: "pages", operator: .greaterThan, value: .int(300), isGuessed: false)
/// condition.matches(record)
/// ```
package struct RecordCondition: Equatable, Sendable {
    /// How a condition compares the field with its value.
    package enum Operator: String, Sendable, CaseIterable {
        /// `=`: the field equals the value.
        case equal = "="
        /// `!=`: the field does not equal the value.
        case notEqual = "!="
        /// `<`
        case lessThan = "<"
        /// `<=`
        case lessThanOrEqual = "<="
        /// `>`
        case greaterThan = ">"
        /// `>=`
        case greaterThanOrEqual = ">="
        /// `^=`: the field is a string that begins with the value.
        case prefix = "^="

        /// The comparison an index range answers, for the four order operators.
        package var comparison: FieldComparison? {
            switch self {
            case .lessThan: .lessThan
            case .lessThanOrEqual: .lessThanOrEqual
            case .greaterThan: .greaterThan
            case .greaterThanOrEqual: .greaterThanOrEqual
            case .equal, .notEqual, .prefix: nil
            }
        }
    }

    /// The field, possibly dotted into nested objects.
    package let field: String
    /// How the field is compared with the value.
    package let `operator`: Operator
    /// The value to compare with; a ``Operator/prefix`` condition's prefix is a string.
    package let value: RecordValue
    /// Whether the value's kind was guessed, which makes comparisons looser (5 equals 5.0, a UUID its text).
    package let isGuessed: Bool

    /// Creates an equality.
    ///
    /// - Parameters:
    ///   - field: The field, possibly dotted into nested objects.
    ///   - value: The value to compare with.
    ///   - isGuessed: Whether the value's kind was guessed rather than read from the catalog.
    package init(field: String, value: RecordValue, isGuessed: Bool) {
        self.init(field: field, operator: .equal, value: value, isGuessed: isGuessed)
    }

    /// Creates a condition.
    ///
    /// - Parameters:
    ///   - field: The field, possibly dotted into nested objects.
    ///   - operator: How the field is compared with the value.
    ///   - value: The value to compare with: a string for a prefix.
    ///   - isGuessed: Whether the value's kind was guessed rather than read from the catalog.
    package init(field: String, operator: Operator, value: RecordValue, isGuessed: Bool) {
        self.field = field
        self.operator = `operator`
        self.value = value
        self.isGuessed = isGuessed
    }

    /// The condition as `kvtool` shows it, the value as JSON: `pages>300`, `title^="The "`.
    package var description: String {
        field + `operator`.rawValue + RecordJSON.json(for: value, kind: value.kind).serialized()
    }

    /// What an index can answer of the condition, for ``CatalogQueryPlanner``: an equality when the value compares
    /// exactly (a key of a plain or compound index then finds every match), an element of a multi-entry index for a
    /// UUID or a string, a range for an order condition whose value has the field's kind (beginning after the null
    /// key, since null meets no order condition), and a range for a prefix.
    ///
    /// A guessed value other than `null` is no key of a plain index, since it matches values of other kinds; nor does
    /// it bound a range. `!=` is answered by no index.
    package var constraints: [FieldConstraint] {
        switch `operator` {
        case .equal:
            var constraints: [FieldConstraint] = []
            if !isGuessed || value == .null { constraints.append(.equal(field: field, value: value)) }
            if value.kind == .uuid || value.kind == .string {
                constraints.append(.containsElement(field: field, value: value))
            }
            return constraints
        case .notEqual:
            return []
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard !isGuessed, let comparison = `operator`.comparison else { return [] }
            return [
                .compare(field: field, comparison, value: value), .compare(field: field, .greaterThan, value: .null),
            ]
        case .prefix:
            guard case .string(let prefix) = value else { return [] }
            return [.prefix(field: field, prefix)]
        }
    }

    /// Whether a record meets the condition.
    package func matches(_ record: RecordValue) -> Bool {
        let actual = RecordIndexKeys.value(of: field, in: record)
        switch `operator` {
        case .equal: return isEqual(actual)
        case .notEqual: return !isEqual(actual)
        case .prefix, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            if case .array(let elements) = actual { return elements.contains(where: meetsOrder) }
            return meetsOrder(actual)
        }
    }

    /// Whether a value equals the condition's, or, for an array, has an equal element.
    private func isEqual(_ actual: RecordValue) -> Bool {
        if equals(actual) { return true }
        if case .array(let elements) = actual, value.kind != .array { return elements.contains(where: equals) }
        return false
    }

    /// Whether a single value meets an order or prefix condition.
    private func meetsOrder(_ actual: RecordValue) -> Bool {
        if `operator` == .prefix {
            guard case .string(let text) = actual, case .string(let prefix) = value else { return false }
            return RecordOrder.nfcBytes(text).starts(with: RecordOrder.nfcBytes(prefix))
        }
        guard let order = RecordOrder.compare(actual, value, loose: isGuessed) else { return false }
        switch `operator` {
        case .lessThan: return order < 0
        case .lessThanOrEqual: return order <= 0
        case .greaterThan: return order > 0
        case .greaterThanOrEqual: return order >= 0
        case .equal, .notEqual, .prefix: return false
        }
    }

    /// Whether a value equals the condition's: same kind and same key encoding (so -0.0 equals 0.0, as in an
    /// index), or with a guessed kind, equal numbers and a UUID equal to its text.
    private func equals(_ actual: RecordValue) -> Bool {
        let sameKind = actual.kind == value.kind || (actual.kind.isBool && value.kind.isBool)
        if sameKind && IndexEntries.sortKey(actual) == IndexEntries.sortKey(value) { return true }
        guard isGuessed else { return false }
        switch (actual, value) {
        case (.uuid(let uuid), .string(let text)): return uuid.uuidString == text.uppercased()
        case (.string(let text), .uuid(let uuid)): return uuid.uuidString == text.uppercased()
        default:
            guard let left = Self.number(actual), let right = Self.number(value) else { return false }
            return left == right
        }
    }

    private static func number(_ value: RecordValue) -> Double? {
        switch value {
        case .int(let number): Double(exactly: number)
        case .uint(let number): Double(exactly: number)
        case .double(let number): number
        case .float(let number): Double(number)
        default: nil
        }
    }
}
