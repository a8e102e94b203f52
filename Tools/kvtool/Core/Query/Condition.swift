import Foundation
import KVStore
import KVStoreInspection

/// One `--where FIELD=VALUE` condition: what it means, and how a query plans it, is the inspection module's
/// (``RecordCondition``, ``RecordQuery``); kvtool parses it.
typealias Condition = RecordCondition

/// Parsing one `--where FIELD=VALUE` condition, with the value parsed according to the field's kind in the catalog.
///
/// `null` matches an absent or null value; a value in double quotes is a JSON string (so `"null"` is the string).
/// A field of kind int, uint, double, float, bool, uuid or date (ISO 8601) takes a value of that kind. A field
/// without a kind in the catalog, and an array field (which matches when one element equals the value), take the
/// value's most likely kind: `true`/`false`, an integer, a number, a UUID, or a string.
///
/// ```swift
/// let condition = try Condition(parsing: "isDone=false", entity: task)
/// condition.matches(record)
/// ```
extension RecordCondition {
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
        let kind = entity.fields.existingID(for: field, in: .topLevel).flatMap { entity.fields.kind(of: $0) }
        if text.hasPrefix("\""), case .string(let string)? = try? JSONParser.parse(Array(text.utf8)) {
            self.init(field: field, value: .string(string), isGuessed: false)
        } else if text == "null" {
            self.init(field: field, value: .null, isGuessed: false)
        } else if let kind, kind != .array {
            self.init(field: field, value: try Self.parse(text, kind: kind, field: field), isGuessed: false)
        } else {
            self.init(field: field, value: Self.guess(text), isGuessed: true)
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
}
