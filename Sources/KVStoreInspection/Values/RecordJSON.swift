import Foundation
import KVStore

/// Records as JSON, and back, without losing anything.
///
/// JSON has no dates, UUIDs, bytes or decimals, and does not tell integers from doubles, so the catalog decides: a
/// top-level field whose value has the kind the catalog records for it is written in its *natural* form:
///
/// | kind | natural JSON |
/// |---|---|
/// | int, uint, double, float | a number (`3`, `18446744073709551615`, `0.1`, `1e+16`) |
/// | bool, string | `true`/`false`, a string |
/// | date | ISO 8601 in UTC, exact to the bit (`"2026-05-07T06:13:20.125Z"`) |
/// | uuid, url, decimal | a string |
/// | data | Base64 |
/// | array, object, stringMap, intMap | an array, or an object (intMap keys as decimal strings) |
///
/// A top-level field whose value has another kind than the catalog's is *tagged*, so that it cannot be read as the
/// catalog's kind: an object with one member named after its kind, such as `{"$string":"…"}`, `{"$int":3}` or
/// `{"$bool":true}`. Values nested in containers and fields the catalog has no kind for are written in the *default*
/// form when plain JSON reads back as the same value: `null`, Booleans, strings, integers (int), numbers with a `.`
/// or an exponent (double), arrays and objects. The rest is tagged: `{"$uuid":"…"}`, `{"$uint":7}`, `{"$date":"…"}`,
/// `{"$float":0.5}`, `{"$double":"nan"}`, `{"$data":"AAE="}`, `{"$stringMap":{…}}` or `{"$intMap":{"1":…}}`. An
/// object that would read as a tag is written as `{"$object":{…}}`. A date that no ISO text gives back exactly is
/// tagged with its seconds since 2001-01-01 as a number; a non-finite number is `"nan"`, `"inf"`, `"-inf"`, or
/// the hexadecimal bit pattern of a NaN with a payload.
package enum RecordJSON {
    /// The member names of tagged values.
    package static let tags: Set<String> = [
        "$bool", "$int", "$uint", "$float", "$double", "$string", "$data", "$date", "$uuid", "$url", "$decimal",
        "$array", "$object", "$stringMap", "$intMap",
    ]

    /// The JSON of a whole record: a top-level object's fields use the kinds the catalog gives.
    ///
    /// - Parameters:
    ///   - record: The decoded record.
    ///   - kinds: The kind the catalog records for each top-level field.
    package static func json(forRecord record: RecordValue, kinds: [String: ValueKind]) -> JSONValue {
        guard case .object(let entries) = record else { return json(for: record, kind: nil) }
        let members = entries.map { JSONMember($0.name, json(for: $0.value, kind: kinds[$0.name])) }
        return looksLikeTag(members) ? tagged("$object", .object(members)) : .object(members)
    }

    /// The JSON of one value: natural when it has `kind`, tagged when it has another kind (so that reading it with
    /// `kind` cannot mistake it), default when there is no kind.
    package static func json(for value: RecordValue, kind: ValueKind?) -> JSONValue {
        guard let kind else { return defaultJSON(value) }
        if value.kind == kind || (value.kind.isBool && kind.isBool), let natural = naturalJSON(value) {
            return natural
        }
        return taggedJSON(value)
    }

    /// The tagged form of any value but null: the default form of the kinds it tags anyway, and a tag around the
    /// others.
    package static func taggedJSON(_ value: RecordValue) -> JSONValue {
        switch value {
        case .bool(let value): return tagged("$bool", .bool(value))
        case .int(let value): return tagged("$int", .number(String(value)))
        case .string(let text): return tagged("$string", .string(text))
        case .double(let value):
            return tagged("$double", value.isFinite ? .number(value.description) : .string(nonFinite(value)))
        case .array(let elements): return tagged("$array", .array(elements.map(defaultJSON)))
        case .object(let entries):
            return tagged("$object", .object(entries.map { JSONMember($0.name, defaultJSON($0.value)) }))
        default: return defaultJSON(value)
        }
    }

    /// The natural form of a value, or `nil` when it has none that reads back exactly.
    private static func naturalJSON(_ value: RecordValue) -> JSONValue? {
        switch value {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .int(let value): return .number(String(value))
        case .uint(let value): return .number(String(value))
        case .float(let value): return value.isFinite ? .number(value.description) : nil
        case .double(let value): return value.isFinite ? .number(value.description) : nil
        case .string(let text): return .string(text)
        case .date(let date): return ISO8601.exactString(date).map(JSONValue.string)
        case .uuid(let uuid): return .string(RecordKey.text(uuid))
        case .data(let data): return .string(data.base64EncodedString())
        case .url(let text), .decimal(let text): return .string(text)
        case .array(let elements): return .array(elements.map(defaultJSON))
        case .object(let entries):
            let members = entries.map { JSONMember($0.name, defaultJSON($0.value)) }
            return looksLikeTag(members) ? nil : .object(members)
        case .stringMap(let entries):
            let members = entries.map { JSONMember($0.key, defaultJSON($0.value)) }
            return looksLikeTag(members) ? nil : .object(members)
        case .intMap(let entries): return .object(entries.map { JSONMember(String($0.key), defaultJSON($0.value)) })
        }
    }

    /// The default form of a value: plain JSON where it reads back as the same value, tagged otherwise.
    package static func defaultJSON(_ value: RecordValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .int(let value): return .number(String(value))
        case .string(let text): return .string(text)
        case .double(let value):
            // A finite Double's description always has a "." or an exponent, so it reads back as a double.
            return value.isFinite ? .number(value.description) : tagged("$double", .string(nonFinite(value)))
        case .array(let elements): return .array(elements.map(defaultJSON))
        case .object(let entries):
            let members = entries.map { JSONMember($0.name, defaultJSON($0.value)) }
            return looksLikeTag(members) ? tagged("$object", .object(members)) : .object(members)
        case .uint(let value): return tagged("$uint", .number(String(value)))
        case .float(let value):
            return tagged("$float", value.isFinite ? .number(value.description) : .string(nonFinite(value)))
        case .date(let date): return tagged("$date", dateJSON(date))
        case .uuid(let uuid): return tagged("$uuid", .string(RecordKey.text(uuid)))
        case .data(let data): return tagged("$data", .string(data.base64EncodedString()))
        case .url(let text): return tagged("$url", .string(text))
        case .decimal(let text): return tagged("$decimal", .string(text))
        case .stringMap(let entries):
            return tagged("$stringMap", .object(entries.map { JSONMember($0.key, defaultJSON($0.value)) }))
        case .intMap(let entries):
            return tagged("$intMap", .object(entries.map { JSONMember(String($0.key), defaultJSON($0.value)) }))
        }
    }

    /// A date's tag payload: exact ISO text, or the seconds since 2001-01-01.
    private static func dateJSON(_ date: Date) -> JSONValue {
        if let text = ISO8601.exactString(date) { return .string(text) }
        let interval = date.timeIntervalSinceReferenceDate
        return interval.isFinite ? .number(interval.description) : .string(nonFinite(interval))
    }

    /// `nan`, `inf`, `-inf`, or for a NaN other than the standard one its bit pattern in hexadecimal.
    package static func nonFinite(_ value: Double) -> String {
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if value.bitPattern == Double.nan.bitPattern { return "nan" }
        return "0x" + String(value.bitPattern, radix: 16)
    }

    /// `nan`, `inf`, `-inf`, or for a NaN other than the standard one its bit pattern in hexadecimal.
    package static func nonFinite(_ value: Float) -> String {
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if value.bitPattern == Float.nan.bitPattern { return "nan" }
        return "0x" + String(value.bitPattern, radix: 16)
    }

    /// Whether an object with these members would read as a tagged value.
    package static func looksLikeTag(_ members: [JSONMember]) -> Bool {
        members.count == 1 && tags.contains(members[0].name)
    }

    private static func tagged(_ tag: String, _ payload: JSONValue) -> JSONValue {
        .object([JSONMember(tag, payload)])
    }

    /// The kinds the field table records for top-level fields, by name.
    package static func kinds(of fields: FieldTable) -> [String: ValueKind] {
        var kinds: [String: ValueKind] = [:]
        for offset in fields.names.indices {
            let id = UInt32(offset + 1)
            if let name = fields.name(for: id, in: .topLevel), let kind = fields.kind(of: id) { kinds[name] = kind }
        }
        return kinds
    }

    /// The kind a type name of ``ValueKind/typeName`` stands for (`bool` gives `.true`).
    package static func kind(named name: String) -> ValueKind? {
        name == "bool" ? .true : ValueKind.allCases.first { $0.typeName == name && !$0.isBool }
    }
}
