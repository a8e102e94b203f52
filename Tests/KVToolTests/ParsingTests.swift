import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// The argument parser, ISO 8601 dates and `--where` values.
@Suite struct ParsingTests {
    static let spec = CommandSpec(
        name: "demo", abstract: "A demo.", discussion: nil,
        arguments: [.one("path", help: "A path."), ArgumentSpec(name: "rest", help: "More.", arity: .zeroOrMore)],
        options: [.flag("json", help: "JSON."), .value("limit", "n", help: "A limit."), CommonOptions.condition])

    private func parse(_ words: [String]) throws -> ParsedArguments {
        guard case .arguments(let parsed) = try ArgumentParser.parse(words, spec: Self.spec) else {
            throw UsageError("no arguments")
        }
        return parsed
    }

    @Test func readsOptionsInEitherSpellingAndPositionalsAround() throws {
        let parsed = try parse([
            "--limit=3", "p", "--where", "a=1", "x", "--json", "--where", "b=-2", "--", "--json", "-",
        ])
        #expect(parsed.argument("path") == "p")
        #expect(parsed.arguments("rest") == ["x", "--json", "-"])
        #expect(try parsed.count("limit") == 3)
        #expect(parsed.values("where") == ["a=1", "b=-2"])
        #expect(parsed.flag("json"))
        #expect(try parse(["p", "--limit", "-1"]).value("limit") == "-1")
    }

    @Test func usageMistakes() throws {
        #expect(throws: UsageError("Unknown option '--limt'")) { try parse(["p", "--limt", "3"]) }
        #expect(throws: UsageError("Missing value for '--limit <n>'")) { try parse(["p", "--limit", "--json"]) }
        #expect(throws: UsageError("Missing expected argument '<path>'")) { try parse(["--json"]) }
        #expect(throws: UsageError("The value '-1' is invalid for '--limit <n>': expected a non-negative integer")) {
            try parse(["p", "--limit", "-1"]).count("limit")
        }
        guard case .help = try ArgumentParser.parse(["--bogus", "-h"], spec: Self.spec) else {
            Issue.record("help wins over other mistakes")
            return
        }
    }

    @Test(arguments: [
        ("2026-05-01", 799_286_400.0),
        ("2026-05-01T10:00:00Z", 799_322_400.0),
        ("2026-05-01T12:00:00+02:00", 799_322_400.0),
        ("2026-05-01T10:00:00.25Z", 799_322_400.25),
        ("2026-05-01 10:00", 799_322_400.0),
        ("2000-12-31T23:59:59.5Z", -0.5),
        ("1970-01-01T00:00:00Z", -978_307_200.0),
    ])
    func parsesISO8601Dates(_ text: String, _ interval: Double) {
        #expect(ISO8601.date(from: text)?.timeIntervalSinceReferenceDate == interval)
    }

    @Test(arguments: [
        "2026-02-30", "2026-13-01", "2026-05-01T25:00Z", "2026-05-01T10:00:00.1234567890Z", "yesterday", "",
    ])
    func rejectsMalformedDates(_ text: String) {
        #expect(ISO8601.date(from: text) == nil)
    }

    @Test(arguments: [0.0, -0.5, 800_000_000.25, 800_000_000.123_456_789, -63_000_000_000.001, 12_345.000_001])
    func datesWriteExactTextWhenTheyCan(_ interval: Double) throws {
        let date = Date(timeIntervalSinceReferenceDate: interval)
        let text = try #require(ISO8601.exactString(date))
        #expect(ISO8601.date(from: text)?.timeIntervalSinceReferenceDate.bitPattern == interval.bitPattern)
        #expect(ISO8601.exactString(Date(timeIntervalSinceReferenceDate: 1e-12)) == nil)
        #expect(ISO8601.exactString(Date(timeIntervalSinceReferenceDate: 800_000_000)) == "2026-05-09T06:13:20Z")
    }

    @Test func whereValuesFollowTheFieldsKind() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let inspected = try InspectedStore.open(store.path)
        defer { inspected.close() }
        let task = try inspected.entity(named: "Task")
        #expect(try Condition(parsing: "isDone=true", entity: task).value == .bool(true))
        #expect(try Condition(parsing: "title=42", entity: task).value == .string("42"))
        #expect(try Condition(parsing: "title=\"null\"", entity: task).value == .string("null"))
        #expect(try Condition(parsing: "dueDate=null", entity: task).value == .null)
        #expect(try Condition(parsing: "projectID=\(fixedID(1))", entity: task).value == .uuid(fixedID(1)))
        #expect(throws: UsageError.self) { try Condition(parsing: "createdAt=soon", entity: task) }
        #expect(throws: ToolError.self) { try Condition(parsing: "size=3", entity: task) }
    }
}
