import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// `count` and `list` on the sample store.
@Suite struct CountListTests {
    static let task1 =
        #"{"id":"01900000-0000-7000-8000-000000000201","title":"Write the report","isDone":false,"#
        + #""createdAt":"2026-05-09T06:13:20Z","projectID":"01900000-0000-7000-8000-000000000101"}"#
    static let task2 =
        #"{"id":"01900000-0000-7000-8000-000000000202","title":"Plant tulips","isDone":true,"#
        + #""dueDate":"2026-05-10T06:13:20.250Z","createdAt":"2026-05-09T06:13:20Z","#
        + #""projectID":"01900000-0000-7000-8000-000000000102"}"#
    static let task3 =
        #"{"id":"01900000-0000-7000-8000-000000000203","title":"Water the roses","isDone":false,"#
        + #""createdAt":"2026-05-09T06:13:20Z","projectID":"01900000-0000-7000-8000-000000000102"}"#
    static let task4 =
        #"{"id":"01900000-0000-7000-8000-000000000204","title":"Call Ada","isDone":false,"#
        + #""createdAt":"2026-05-09T06:13:20Z"}"#

    @Test func countsEveryRecord() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(kvtool("count", store.path, "Task") == RunResult(status: 0, output: "4\n", errors: ""))
        #expect(
            kvtool("count", store.path, "Project", "--json").output
                == #"{"entity":"Project","count":2,"plan":"all records"}"# + "\n")
    }

    @Test(arguments: [
        (["--where", "projectID=01900000-0000-7000-8000-000000000102"], 2, "index projectID: 1 key (exact)"),
        (["--where", "projectID=null"], 1, "index projectID: 1 key (exact)"),
        (["--where", "isDone=false"], 3, "scan"),
        (
            ["--where", "isDone=false", "--where", "projectID=01900000-0000-7000-8000-000000000102"], 1,
            "index projectID: 1 key"
        ),
        (["--where", "dueDate=2026-05-10T06:13:20.25Z"], 1, "scan"),
        (["--where", "dueDate=2026-05-10"], 0, "scan"),
        (["--where", "title=\"Call Ada\""], 1, "scan"),
        (["--where", "id=01900000-0000-7000-8000-000000000203"], 1, "record by id"),
    ])
    func countsWithConditions(_ conditions: [String], _ count: Int, _ plan: String) throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let result = kvtool(arguments: ["count", store.path, "Task", "--json"] + conditions)
        #expect(result.status == 0)
        #expect(result.output == #"{"entity":"Task","count":\#(count),"plan":"\#(plan)"}"# + "\n")
    }

    @Test func uniqueIndexLookupCountsOne() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(
            kvtool("count", store.path, "Project", "--where", "name=Garden", "--json").output
                == #"{"entity":"Project","count":1,"plan":"unique index name: 1 key (exact)"}"# + "\n")
        #expect(kvtool("count", store.path, "Project", "--where", "name=Attic").output == "0\n")
    }

    @Test func listsJSONLinesInIDOrderWhenNotATerminal() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let expected = [Self.task1, Self.task2, Self.task3, Self.task4].map { $0 + "\n" }.joined()
        #expect(kvtool("list", store.path, "Task") == RunResult(status: 0, output: expected, errors: ""))
        #expect(kvtool("list", store.path, "Task", "--json", terminal: true).output == expected)
    }

    @Test func listsATableOnATerminal() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let expected = """
            id                                    title             isDone  createdAt             projectID                             dueDate
            ------------------------------------  ----------------  ------  --------------------  ------------------------------------  -----------------------
            01900000-0000-7000-8000-000000000201  Write the report  false   2026-05-09T06:13:20Z  01900000-0000-7000-8000-000000000101
            01900000-0000-7000-8000-000000000202  Plant tulips      true    2026-05-09T06:13:20Z  01900000-0000-7000-8000-000000000102  2026-05-10T06:13:20.25Z
            01900000-0000-7000-8000-000000000203  Water the roses   false   2026-05-09T06:13:20Z  01900000-0000-7000-8000-000000000102
            01900000-0000-7000-8000-000000000204  Call Ada          false   2026-05-09T06:13:20Z
            (4 records)

            """
        #expect(kvtool("list", store.path, "Task", terminal: true).output == expected)
        #expect(kvtool("list", store.path, "Task", "--table").output == expected)
    }

    @Test func sortsLimitsOffsetsAndProjects() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(
            kvtool("list", store.path, "Task", "--sort", "title", "--fields", "title").output
                == #"{"title":"Call Ada"}"# + "\n" + #"{"title":"Plant tulips"}"# + "\n"
                + #"{"title":"Water the roses"}"# + "\n" + #"{"title":"Write the report"}"# + "\n")
        #expect(
            kvtool("list", store.path, "Task", "--sort=title:desc", "--limit", "2", "--offset", "1", "--fields=title")
                .output == #"{"title":"Water the roses"}"# + "\n" + #"{"title":"Plant tulips"}"# + "\n")
        #expect(
            kvtool("list", store.path, "Task", "--sort", "dueDate:desc", "--limit", "1", "--fields", "id,dueDate")
                .output
                == #"{"id":"01900000-0000-7000-8000-000000000202","dueDate":"2026-05-10T06:13:20.250Z"}"# + "\n")
        #expect(
            kvtool("list", store.path, "Task", "--offset", "3").output == Self.task4 + "\n")
        #expect(
            kvtool("list", store.path, "Task", "--limit", "1", "--where", "isDone=false", "--offset", "1").output
                == Self.task3 + "\n")
        #expect(kvtool("list", store.path, "Task", "--limit", "0").output == "")
    }

    @Test func listsThroughTheIndexInIDOrder() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(
            kvtool("list", store.path, "Task", "--where", "projectID=01900000-0000-7000-8000-000000000102").output
                == Self.task2 + "\n" + Self.task3 + "\n")
    }

    @Test func indexedListsResumeAcrossChunks() throws {
        let store = TemporaryStore()
        let project = Sample.garden
        let tasks = (0..<25).map { Task(id: fixedID(UInt8($0), entity: 9), title: "Task \($0)", projectID: project.id) }
        try Sample.makeStore(at: store.path, projects: [project], tasks: tasks)
        let inspected = try InspectedStore.open(store.path)
        defer { inspected.close() }
        let entity = try inspected.entity(named: "Task")
        let condition = try Condition(parsing: "projectID=\(project.id)", entity: entity)
        let query = try RecordQuery(store: inspected, entity: entity, conditions: [condition], chunkSize: 4)
        var ids: [UUID] = []
        let damage = try query.forEach { id, _ in
            ids.append(id)
            return true
        }
        #expect(ids == tasks.map(\.id))
        #expect(damage.isEmpty)
        let counted = try query.count()
        #expect(counted.count == 25 && counted.damage.isEmpty)
    }

    @Test func conflictingFormatsAreAUsageError() {
        #expect(kvtool("list", "/tmp", "Task", "--json", "--table").status == 64)
        #expect(kvtool("list", "/tmp", "Task", "--sort", "title:up").status == 64)
    }
}
