import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// The JSON parser and writer, and the record mapping's tags.
@Suite struct JSONTests {
    @Test func parsesAndWritesBackTheSameText() throws {
        let text = #"{"a":[1,-2.5e+3,true,false,null],"b":{"c":"x\"y\\z\n\u0001é😀"},"e":{},"f":[]}"#
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(value.serialized() == text)
        #expect(value[member: "a"] == .array([.number("1"), .number("-2.5e+3"), .bool(true), .bool(false), .null]))
        #expect(try JSONParser.parse(Array(#""\ud83d\ude00\/""#.utf8)) == .string("😀/"))
    }

    @Test func writesPrettyJSON() throws {
        let value = try JSONParser.parse(Array(#"{"a":[1,2],"b":{},"c":{"d":null}}"#.utf8))
        #expect(
            value.serialized(pretty: true) == """
                {
                  "a": [
                    1,
                    2
                  ],
                  "b": {},
                  "c": {
                    "d": null
                  }
                }
                """)
    }

    @Test(arguments: [
        ("{", "malformed JSON at column 2: expected a member name in quotes"),
        (#"{"a" 1}"#, "malformed JSON at column 6: expected ':' after a member name"),
        ("[1,]", "malformed JSON at column 4: unexpected character ']'"),
        ("01", "malformed JSON at column 2: unexpected text after the value"),
        ("1.", "malformed JSON at column 3: expected a digit after '.'"),
        ("\"a\tb\"", "malformed JSON at column 3: a control character in a string must be escaped"),
        (#""\ud800""#, "malformed JSON at column 8: a high surrogate without its low surrogate"),
        ("tru", "malformed JSON at column 1: unexpected character 't'"),
        ("", "malformed JSON at column 1: expected a value, found the end of the text"),
    ])
    func reportsWhereJSONIsMalformed(_ text: String, _ message: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(Array(text.utf8)) }
        do {
            _ = try JSONParser.parse(Array(text.utf8))
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func rejectsDeepNestingAndInvalidUTF8() {
        let deep = Array(repeating: UInt8(ascii: "["), count: 600) + Array(repeating: UInt8(ascii: "]"), count: 600)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test(arguments: [
        RecordValue.uint(7), .float(.nan), .float(-.infinity), .double(.nan),
        .double(Double(bitPattern: 0x7FF0_0000_0000_0001)),
        .date(Date(timeIntervalSinceReferenceDate: .infinity)), .decimal("NaN"), .url("https://a.b/c"),
        .stringMap([("$uint", .int(1))]), .intMap([(-5, .null)]), .object([(name: "$date", value: .bool(true))]),
        .array([.uuid(fixedID(3)), .data(Data([1, 2])), .string("$uint")]), .int(.min), .double(-0.0),
    ])
    func everyValueReadsBackTheSameFromItsDefaultForm(_ value: RecordValue) throws {
        let json = RecordJSON.defaultJSON(value)
        let text = json.serialized()
        let back = try RecordJSON.value(from: JSONParser.parse(Array(text.utf8)), kind: nil, path: "x")
        #expect(back == value, "\(text)")
    }

    @Test func naturalFormsFollowTheCatalogsKind() throws {
        let record = RecordValue.object([
            (name: "n", value: .uint(3)), (name: "d", value: .date(Date(timeIntervalSinceReferenceDate: 0))),
            (name: "u", value: .string("not a uuid")),
        ])
        let kinds: [String: ValueKind] = ["n": .uint, "d": .date, "u": .uuid]
        let json = RecordJSON.json(forRecord: record, kinds: kinds)
        #expect(json.serialized() == #"{"n":3,"d":"2001-01-01T00:00:00Z","u":{"$string":"not a uuid"}}"#)
        #expect(try RecordJSON.record(from: json, kinds: kinds) == record)
        let plain = try JSONParser.parse(Array(#"{"n":3,"u":"not a uuid"}"#.utf8))
        #expect(throws: RecordJSONError(path: "u", reason: "'not a uuid' is not a UUID")) {
            try RecordJSON.record(from: plain, kinds: kinds)
        }
        #expect(throws: RecordJSONError(path: "n", reason: "expected a date (the catalog's kind), got a number")) {
            try RecordJSON.record(from: plain, kinds: ["n": .date])
        }
        #expect(
            RecordJSON.json(for: .bool(true), kind: .int).serialized() == #"{"$bool":true}"#,
            "a value of another kind than the catalog's is tagged")
    }
}
