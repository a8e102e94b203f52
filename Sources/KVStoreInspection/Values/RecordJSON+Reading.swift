import Foundation
import KVStore

/// A JSON value that does not read as a record value: wrong kind for the catalog, bad UUID, bad date...
package struct RecordJSONError: Error, Equatable, CustomStringConvertible {
    /// Where in the record: `priority`, `ingredients[0].grams`.
    package let path: String
    /// What is wrong.
    package let reason: String

    /// Creates an error; the parameters are the properties of the same names.
    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `field 'priority': expected an int (the catalog's kind), got a string`.
    package var description: String {
        path.isEmpty ? reason : "field '\(path)': \(reason)"
    }
}

/// Reading records back from the JSON ``RecordJSON`` writes.
extension RecordJSON {
    /// Reads a whole record; the members of a top-level object take the kinds in `kinds`.
    ///
    /// - Throws: ``RecordJSONError`` naming the field, when a value contradicts the field's kind in `kinds`, a tag
    ///   has a bad payload, or a number is out of range.
    package static func record(from json: JSONValue, kinds: [String: ValueKind]) throws(RecordJSONError) -> RecordValue
    {
        guard case .object(let members) = json, !looksLikeTag(members) else {
            return try value(from: json, kind: nil, path: "")
        }
        var entries: [(name: String, value: RecordValue)] = []
        entries.reserveCapacity(members.count)
        for member in members {
            entries.append((member.name, try value(from: member.value, kind: kinds[member.name], path: member.name)))
        }
        return .object(entries)
    }

    /// Reads one value: a tagged value as its tag says, otherwise in the natural form of `kind`, or in the default
    /// form when there is no kind.
    package static func value(
        from json: JSONValue, kind: ValueKind?, path: String
    ) throws(RecordJSONError) -> RecordValue {
        if case .object(let members) = json, looksLikeTag(members) {
            return try taggedValue(members[0].name, members[0].value, path: path)
        }
        if json == .null { return .null }
        guard let kind else { return try defaultValue(json, path: path) }
        func contradiction() -> RecordJSONError {
            RecordJSONError(
                path: path,
                reason: "expected \(article(kind.typeName)) (the catalog's kind), got \(json.kindDescription)")
        }
        switch (kind, json) {
        case (.false, .bool(let value)), (.true, .bool(let value)): return .bool(value)
        case (.int, .number(let literal)):
            guard let value = Int64(literal) else {
                throw RecordJSONError(path: path, reason: "\(literal) is not an int")
            }
            return .int(value)
        case (.uint, .number(let literal)):
            guard let value = UInt64(literal) else {
                throw RecordJSONError(path: path, reason: "\(literal) is not a uint")
            }
            return .uint(value)
        case (.double, .number(let literal)): return .double(try double(literal, path: path))
        case (.float, .number(let literal)): return .float(try float(literal, path: path))
        case (.string, .string(let text)): return .string(text)
        case (.date, .string), (.uuid, .string), (.data, .string), (.url, .string), (.decimal, .string):
            return try taggedValue("$" + kind.typeName, json, path: path)
        case (.array, .array), (.object, .object): return try defaultValue(json, path: path)
        case (.stringMap, .object), (.intMap, .object): return try taggedValue("$" + kind.typeName, json, path: path)
        default: throw contradiction()
        }
    }

    /// Reads plain JSON: integers as int (uint beyond Int64), other numbers as double, objects as objects.
    package static func defaultValue(_ json: JSONValue, path: String) throws(RecordJSONError) -> RecordValue {
        switch json {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .string(let text): return .string(text)
        case .number(let literal):
            if literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                return .double(try double(literal, path: path))
            }
            if let value = Int64(literal) { return .int(value) }
            if let value = UInt64(literal) { return .uint(value) }
            throw RecordJSONError(path: path, reason: "the integer \(literal) is out of range")
        case .array(let elements):
            var values: [RecordValue] = []
            values.reserveCapacity(elements.count)
            for (offset, element) in elements.enumerated() {
                values.append(try value(from: element, kind: nil, path: "\(path)[\(offset)]"))
            }
            return .array(values)
        case .object(let members):
            var entries: [(name: String, value: RecordValue)] = []
            entries.reserveCapacity(members.count)
            for member in members {
                let memberPath = path.isEmpty ? member.name : "\(path).\(member.name)"
                entries.append((member.name, try value(from: member.value, kind: nil, path: memberPath)))
            }
            return .object(entries)
        }
    }

    /// Reads the payload of a tagged value.
    private static func taggedValue(
        _ tag: String, _ payload: JSONValue, path: String
    ) throws(RecordJSONError) -> RecordValue {
        func bad(_ expected: String) -> RecordJSONError {
            RecordJSONError(path: path, reason: "\(tag) needs \(expected), got \(payload.kindDescription)")
        }
        switch (tag, payload) {
        case ("$bool", .bool(let value)): return .bool(value)
        case ("$int", .number(let literal)):
            guard let value = Int64(literal) else { throw bad("an integer in Int64's range") }
            return .int(value)
        case ("$uint", .number(let literal)):
            guard let value = UInt64(literal) else { throw bad("an integer in UInt64's range") }
            return .uint(value)
        case ("$double", .number(let literal)), ("$double", .string(let literal)):
            return .double(try double(literal, path: path))
        case ("$float", .number(let literal)), ("$float", .string(let literal)):
            return .float(try float(literal, path: path))
        case ("$string", .string(let text)): return .string(text)
        case ("$date", .string(let text)):
            guard let date = ISO8601.date(from: text) else {
                if let interval = try? double(text, path: path), !interval.isFinite {
                    return .date(Date(timeIntervalSinceReferenceDate: interval))
                }
                throw RecordJSONError(path: path, reason: "'\(text)' is not an ISO 8601 date")
            }
            return .date(date)
        case ("$date", .number(let literal)):
            return .date(Date(timeIntervalSinceReferenceDate: try double(literal, path: path)))
        case ("$uuid", .string(let text)):
            guard let uuid = RecordKey.uuid(parsing: text) else {
                throw RecordJSONError(path: path, reason: "'\(text)' is not a UUID")
            }
            return .uuid(uuid)
        case ("$data", .string(let text)):
            guard let data = Data(base64Encoded: text) else {
                throw RecordJSONError(path: path, reason: "'\(text)' is not Base64")
            }
            return .data(data)
        case ("$url", .string(let text)):
            guard URL(string: text) != nil else { throw RecordJSONError(path: path, reason: "'\(text)' is not a URL") }
            return .url(text)
        case ("$decimal", .string(let text)):
            guard text == "NaN" || Decimal(string: text) != nil else {
                throw RecordJSONError(path: path, reason: "'\(text)' is not a decimal number")
            }
            return .decimal(text)
        case ("$array", .array), ("$object", .object): return try defaultValue(payload, path: path)
        case ("$stringMap", .object(let members)):
            var entries: [(key: String, value: RecordValue)] = []
            for member in members {
                entries.append((member.name, try value(from: member.value, kind: nil, path: "\(path).\(member.name)")))
            }
            return .stringMap(entries)
        case ("$intMap", .object(let members)):
            var entries: [(key: Int64, value: RecordValue)] = []
            for member in members {
                guard let key = Int64(member.name) else {
                    throw RecordJSONError(path: path, reason: "the intMap key '\(member.name)' is not an integer")
                }
                entries.append((key, try value(from: member.value, kind: nil, path: "\(path).\(member.name)")))
            }
            return .intMap(entries)
        case ("$double", _), ("$float", _): throw bad("a number")
        case ("$date", _): throw bad("an ISO 8601 string or a number")
        case ("$array", _): throw bad("an array")
        case ("$object", _), ("$stringMap", _), ("$intMap", _): throw bad("an object")
        case ("$int", _), ("$uint", _): throw bad("an integer")
        case ("$bool", _): throw bad("true or false")
        default: throw bad("a string")
        }
    }

    /// Reads a number literal as a `Double`, or `nan`, `inf`, `-inf` and `0x` bit patterns.
    private static func double(_ literal: String, path: String) throws(RecordJSONError) -> Double {
        switch literal {
        case "nan": return .nan
        case "inf": return .infinity
        case "-inf": return -.infinity
        default: break
        }
        if literal.hasPrefix("0x"), let bits = UInt64(literal.dropFirst(2), radix: 16) {
            return Double(bitPattern: bits)
        }
        guard let value = Double(literal) else {
            throw RecordJSONError(path: path, reason: "'\(literal)' is not a number")
        }
        return value
    }

    /// Reads a number literal as a `Float`, or `nan`, `inf`, `-inf` and `0x` bit patterns.
    private static func float(_ literal: String, path: String) throws(RecordJSONError) -> Float {
        switch literal {
        case "nan": return .nan
        case "inf": return .infinity
        case "-inf": return -.infinity
        default: break
        }
        if literal.hasPrefix("0x"), let bits = UInt32(literal.dropFirst(2), radix: 16) {
            return Float(bitPattern: bits)
        }
        guard let value = Float(literal) else {
            throw RecordJSONError(path: path, reason: "'\(literal)' is not a number")
        }
        return value
    }

    /// `an int`, `a string`.
    private static func article(_ word: String) -> String {
        (word.first.map { "aeiou".contains($0) } == true ? "an " : "a ") + word
    }
}
