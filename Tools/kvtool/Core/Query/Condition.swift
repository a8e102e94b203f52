import Foundation
import KVStore

/// One `--where FIELD=VALUE` condition, with the value parsed according to the field's kind in the catalog.
///
/// `null` matches an absent or null value; a value in double quotes is a JSON string (so `"null"` is the string).
/// A field of kind int, uint, double, float, bool, uuid or date (ISO 8601) takes a value of that kind. A field
/// without a kind in the catalog, and an array field (which matches when one element equals the value), take the
/// value's most likely kind: `true`/`false`, an integer, a number, a UUID, or a string.
///
/// ```swift
/// let condition = try Condition(parsing: "isDone=false", fields: task.fields)
/// condition.matches(record)
/// ```
struct Condition {
    /// The field, possibly dotted into nested objects.
    let field: String
    /// The value to compare with.
    let value: RecordValue
    /// Whether the value's kind was guessed, which makes comparisons looser (5 equals 5.0, a UUID its text).
    let isGuessed: Bool

    /// Splits `FIELD=VALUE` at its first `=`.
    ///
    /// - Throws: ``UsageError`` when there is no `=` or no field name.
    static func split(_ text: String) throws(UsageError) -> (field: String, value: String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw UsageError("The value '\(text)' is invalid for '--where <field=value>': expected FIELD=VALUE")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    /// Parses a condition against an entity's fields.
    ///
    /// - Throws: ``UsageError`` when the text is not `FIELD=VALUE` or the value does not parse as the field's kind
    ///   (exit status 64); ``ToolError`` when the entity has no such field.
    init(parsing text: String, entity: EntityCatalog) throws {
        let (field, text) = try Self.split(text)
        guard IndexEntries.fieldExists(field, in: entity.fields) else {
            throw ToolError("Unknown field '\(field)': \(entity.name) has no such field")
        }
        let kind = entity.fields.existingID(for: field).flatMap { entity.fields.kind(of: $0) }
        self.field = field
        if text.hasPrefix("\""), case .string(let string)? = try? JSONParser.parse(Array(text.utf8)) {
            (value, isGuessed) = (.string(string), false)
        } else if text == "null" {
            (value, isGuessed) = (.null, false)
        } else if let kind, kind != .array {
            (value, isGuessed) = (try Self.parse(text, kind: kind, field: field), false)
        } else {
            (value, isGuessed) = (Self.guess(text), true)
        }
    }

    /// Parses `text` as a value of `kind`.
    private static func parse(_ text: String, kind: ValueKind, field: String) throws(UsageError) -> RecordValue {
        func invalid(_ expected: String) -> UsageError {
            UsageError("The value '\(text)' is invalid for '--where \(field)=…': expected \(expected)")
        }
        func require<T>(_ value: T?, _ expected: String) throws(UsageError) -> T {
            guard let value else { throw invalid(expected) }
            return value
        }
        switch kind {
        case .int: return .int(try require(Int64(text), "an integer"))
        case .uint: return .uint(try require(UInt64(text), "a non-negative integer"))
        case .double: return .double(try require(Double(text), "a number"))
        case .float: return .float(try require(Float(text), "a number"))
        case .false, .true:
            guard text == "true" || text == "false" else { throw invalid("true or false") }
            return .bool(text == "true")
        case .string, .null: return .string(text)
        case .uuid:
            guard let uuid = RecordKey.uuid(parsing: text) else {
                throw UsageError("Malformed UUID '\(text)' for '--where \(field)=…'")
            }
            return .uuid(uuid)
        case .date:
            guard let date = ISO8601.date(from: text) else {
                throw invalid("an ISO 8601 date such as 2026-05-01 or 2026-05-01T10:00:00Z")
            }
            return .date(date)
        case .url: return .url(text)
        case .decimal: return .decimal(text)
        case .data: return .data(try require(Data(base64Encoded: text), "Base64"))
        case .array, .object, .stringMap, .intMap:
            throw UsageError("'--where' cannot compare the \(kind.typeName) field '\(field)' with a value")
        }
    }

    /// The most likely value of a text whose kind the catalog does not tell.
    private static func guess(_ text: String) -> RecordValue {
        if text == "true" || text == "false" { return .bool(text == "true") }
        if let value = Int64(text) { return .int(value) }
        if let value = UInt64(text) { return .uint(value) }
        if let value = Double(text), text.contains(where: { $0.isNumber }) { return .double(value) }
        if let uuid = RecordKey.uuid(parsing: text) { return .uuid(uuid) }
        return .string(text)
    }

    /// Whether a record meets the condition: its field equals the value, or, for an array, has an equal element.
    func matches(_ record: RecordValue) -> Bool {
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
