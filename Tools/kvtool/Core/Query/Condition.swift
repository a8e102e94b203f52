import Foundation
import KVStore
import KVStoreInspection

/// One `--where` condition: what it means, and how a query plans it, is the inspection module's
/// (``RecordCondition``, ``RecordQuery``); kvtool parses it.
typealias Condition = RecordCondition

/// Parsing one `--where` condition, `FIELD=VALUE`, `FIELD!=VALUE`, `FIELD<VALUE`, `FIELD<=VALUE`, `FIELD>VALUE`,
/// `FIELD>=VALUE` or `FIELD^=PREFIX`, with the value parsed according to the field's kind in the catalog.
///
/// The field is the text before the first of `=`, `!`, `<`, `>` and `^`, and the operator the longest one that
/// follows. `null` matches an absent or null value; a value in double quotes is a JSON string (so `"null"` is the
/// string). A field of kind int, uint, double, float, bool, uuid or date (ISO 8601) takes a value of that kind. A field
/// without a kind in the catalog, and an array field (which matches when one element does), take the value's most
/// likely kind: `true`/`false`, an integer, a number, a UUID, or a string.
///
/// Refused with a usage error: an order operator (`<`, `<=`, `>`, `>=`) on a field whose kind has no order (bool,
/// data, url, decimal, containers) or with the value `null` or a guessed `true`/`false`; `^=` on a field whose
/// catalog kind is not string. A prefix is taken as text (or a JSON string), whatever it looks like.
///
/// ```swift
/// let condition = try Condition(parsing: "pages>=300", entity: book)
/// condition.matches(record)
/// ```
extension RecordCondition {
    /// The operators, longest first, so that `<=` is not read as `<` followed by `=`.
    private static let operatorsByLength = Operator.allCases.sorted { $0.rawValue.count > $1.rawValue.count }

    /// Splits `FIELD<op>VALUE` before the first operator character.
    ///
    /// - Throws: ``UsageError`` when there is no operator or no field name.
    static func split(_ text: String) throws(UsageError) -> (field: String, operator: Operator, value: String) {
        let malformed = UsageError(
            "The value '\(text)' is invalid for '--where <condition>': expected FIELD=VALUE, FIELD!=VALUE, "
                + "FIELD<VALUE, FIELD<=VALUE, FIELD>VALUE, FIELD>=VALUE or FIELD^=PREFIX")
        guard let start = text.firstIndex(where: { "=!<>^".contains($0) }), start != text.startIndex else {
            throw malformed
        }
        let rest = text[start...]
        guard let found = operatorsByLength.first(where: { rest.hasPrefix($0.rawValue) }) else { throw malformed }
        return (String(text[..<start]), found, String(rest.dropFirst(found.rawValue.count)))
    }

    /// Parses a condition against an entity's fields.
    ///
    /// - Throws: ``UsageError`` when the text is not a condition, the value does not parse as the field's kind, or
    ///   the operator does not apply to the field or the value (exit status 64); ``ToolError`` when the entity has no
    ///   such field.
    init(parsing text: String, entity: EntityCatalog) throws {
        let (field, op, text) = try Self.split(text)
        guard IndexEntries.fieldExists(field, in: entity.fields) else {
            throw ToolError("Unknown field '\(field)': \(entity.name) has no such field")
        }
        let kind = entity.fields.existingID(for: field, in: .topLevel).flatMap { entity.fields.kind(of: $0) }
        let quoted: String? =
            if text.hasPrefix("\""), case .string(let string)? = try? JSONParser.parse(Array(text.utf8)) {
                string
            } else {
                nil
            }
        if op == .prefix {
            if let kind, kind != .string, kind != .array {
                throw UsageError(
                    "'--where \(field)^=…' takes the prefix of a string, and \(field) is of kind \(kind.typeName); "
                        + "compare it with =, !=, <, <=, > or >=")
            }
            self.init(field: field, operator: op, value: .string(quoted ?? text), isGuessed: kind != .string)
            return
        }
        let value: RecordValue
        let isGuessed: Bool
        if let quoted {
            (value, isGuessed) = (.string(quoted), false)
        } else if text == "null" {
            (value, isGuessed) = (.null, false)
        } else if let kind, kind != .array {
            (value, isGuessed) = (try Self.parse(text, kind: kind, field: field, operator: op), false)
        } else {
            (value, isGuessed) = (Self.guess(text), true)
        }
        if op.comparison != nil {
            try Self.checkOrder(field: field, operator: op, kind: kind, value: value)
        }
        self.init(field: field, operator: op, value: value, isGuessed: isGuessed)
    }

    /// Refuses an order condition on a field or a value without order.
    private static func checkOrder(
        field: String, operator op: Operator, kind: ValueKind?, value: RecordValue
    ) throws(UsageError) {
        let condition = "'--where \(field)\(op.rawValue)…'"
        if let kind, kind != .array, !RecordOrder.isOrdered(kind) {
            let instead = kind.isBool ? "use \(field)=true or \(field)=false" : "use = or != instead"
            throw UsageError("\(condition) needs an order, and \(kind.typeName) fields have none; \(instead)")
        }
        if let kind, kind != .array, value != .null, value.kind != kind {
            // Only a quoted string can be of another kind than the field: it would match no value of the field.
            throw UsageError(
                "\(condition): \(field) is of kind \(kind.typeName), and the quoted value is a string; write the "
                    + "value without quotes")
        }
        if value == .null {
            throw UsageError("\(condition): null has no order; use \(field)=null or \(field)!=null")
        }
        if !RecordOrder.isOrdered(value.kind) {
            throw UsageError(
                "\(condition): \(value.kind.typeName) values have no order; compare with a number, a string or a "
                    + "UUID, or use = or !=")
        }
    }

    /// Parses `text` as a value of `kind`.
    private static func parse(
        _ text: String, kind: ValueKind, field: String, operator op: Operator
    ) throws(UsageError) -> RecordValue {
        let condition = "'--where \(field)\(op.rawValue)…'"
        func invalid(_ expected: String) -> UsageError {
            UsageError("The value '\(text)' is invalid for \(condition): expected \(expected)")
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
                throw UsageError("Malformed UUID '\(text)' for \(condition)")
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
