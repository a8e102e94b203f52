import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// ISO 8601 dates and `--where` values. (The argument parser's tests are CommandLineKitTests.)
@Suite struct ParsingTests {
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
