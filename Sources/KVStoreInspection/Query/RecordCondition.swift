import Foundation
import KVStore

/// One condition of a query over stored records: a field equal to a value, or, for an array field, holding an
/// element equal to it (`kvtool list --where FIELD=VALUE`).
///
/// A value of the kind the catalog gives the field compares as index keys do: the same kind and the same key
/// encoding, so `-0.0` equals `0.0`. A value whose kind was guessed (the catalog gives the field no kind, or the field
/// holds arrays) compares more loosely: equal numbers of any kind, and a UUID equals its text.
///
/// ```swift
/// let condition = RecordCondition(field: "isDone", value: .bool(false), isGuessed: false)
/// condition.matches(record)
/// ```
package struct RecordCondition: Equatable, Sendable {
    /// The field, possibly dotted into nested objects.
    package let field: String
    /// The value to compare with.
    package let value: RecordValue
    /// Whether the value's kind was guessed, which makes comparisons looser (5 equals 5.0, a UUID its text).
    package let isGuessed: Bool

    /// Creates a condition.
    ///
    /// - Parameters:
    ///   - field: The field, possibly dotted into nested objects.
    ///   - value: The value to compare with.
    ///   - isGuessed: Whether the value's kind was guessed rather than read from the catalog.
    package init(field: String, value: RecordValue, isGuessed: Bool) {
        self.field = field
        self.value = value
        self.isGuessed = isGuessed
    }

    /// What an index can answer of the condition, for ``CatalogQueryPlanner``: an equality when the value compares
    /// exactly (a key of a plain or compound index then finds every match), and an element of a multi-entry index for
    /// a UUID or a string.
    ///
    /// A guessed value other than `null` is no key of a plain index, since it matches values of other kinds.
    package var constraints: [FieldConstraint] {
        var constraints: [FieldConstraint] = []
        if !isGuessed || value == .null { constraints.append(.equal(field: field, value: value)) }
        if value.kind == .uuid || value.kind == .string {
            constraints.append(.containsElement(field: field, value: value))
        }
        return constraints
    }

    /// Whether a record meets the condition: its field equals the value, or, for an array, has an equal element.
    package func matches(_ record: RecordValue) -> Bool {
        let actual = RecordIndexKeys.value(of: field, in: record)
        if equals(actual) { return true }
        if case .array(let elements) = actual, value.kind != .array { return elements.contains(where: equals) }
        return false
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
