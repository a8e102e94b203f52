import Foundation
import KVStore
import Testing

/// `export` and `import`: the format, round trips, and what import refuses.
@Suite struct ExportImportTests {
    static let header =
        #"{"kvtool-export":1,"format":2,"fields":{"Project":{"id":"uuid","name":"string","createdAt":"date"},"#
        + #""Task":{"id":"uuid","title":"string","isDone":"bool","createdAt":"date","projectID":"uuid","#
        + #""dueDate":"date"}}}"#

    @Test func exportsAHeaderThenOneLinePerRecord() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let result = kvtool("export", store.path)
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 7)
        #expect(lines.first == Self.header)
        #expect(
            lines[1]
                == #"{"entity":"Project","id":"01900000-0000-7000-8000-000000000101","record":"#
                + #"{"id":"01900000-0000-7000-8000-000000000101","name":"Inbox","createdAt":"2026-05-09T06:13:20Z"}}"#)
        #expect(
            lines[4] == #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000202","record":"#
                + CountListTests.task2 + "}")
        let tasksOnly = kvtool("export", store.path, "Task", "--chunk-size", "1").output.split(separator: "\n")
        #expect(tasksOnly.count == 5)
        #expect(Array(tasksOnly.dropFirst()) == lines.suffix(4).map { Substring($0) })
    }

    @Test func exportsToAFile() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("export.jsonl")
        let result = kvtool("export", store.path, "--output", file)
        #expect(result == RunResult(status: 0, output: "Exported 6 records of 2 entities to \(file).\n", errors: ""))
        #expect(try String(contentsOfFile: file, encoding: .utf8) == kvtool("export", store.path).output)
    }

    @Test func roundTripsIntoAnEmptyStore() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        try Sample.makeStore(at: source.path)
        try Sample.makeStore(at: target.path, projects: [], tasks: [])
        let file = source.sibling("export.jsonl")
        _ = kvtool("export", source.path, "--output", file)
        #expect(
            kvtool("import", target.path, file)
                == RunResult(status: 0, output: "Imported 6 records from \(file).\n", errors: ""))
        #expect(kvtool("export", target.path).output == kvtool("export", source.path).output)
        #expect(kvtool("check", target.path).status == 0)
        let container = try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: target.path))
        defer { try? container.close() }
        let context = ModelContext(container)
        #expect(try context.models(for: Sample.tasks.map(\.id), as: Task.self) == Sample.tasks)
        let gardenID = Sample.garden.id
        let garden = try context.fetch(FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == gardenID }))
        #expect(garden.map(\.title) == ["Plant tulips", "Water the roses"])
    }

    @Test func upsertsAndKeepsIndexesInStep() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("moves.jsonl")
        let moved =
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{"id":"01900000-0000-7000-8000-000000000201","#
            + #""title":"Write the report","isDone":true,"createdAt":"2026-05-09T06:13:20Z","#
            + #""projectID":"01900000-0000-7000-8000-000000000102","priority":{"$uint":3}}}"#
        try Data((moved + "\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(kvtool("import", store.path, file).status == 0)
        #expect(kvtool("count", store.path, "Task", "--where", "projectID=\(Sample.garden.id)").output == "3\n")
        #expect(kvtool("count", store.path, "Task", "--where", "projectID=\(Sample.inbox.id)").output == "0\n")
        #expect(kvtool("check", store.path).status == 0)
        #expect(kvtool("schema", store.path).output.contains("    priority   uint\n"))
        #expect(
            kvtool("list", store.path, "Task", "--limit", "1", "--fields", "priority").output == #"{"priority":3}"#
                + "\n")
    }

    @Test func stopsAtTheFirstBadLineAndWritesNothingOfItsChunk() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path, projects: [], tasks: [])
        let file = store.sibling("bad.jsonl")
        try Data(Self.lines(count: 5, badAt: [4]).utf8).write(to: URL(fileURLWithPath: file))
        let result = kvtool("import", store.path, file, "--chunk-size", "2")
        #expect(
            result
                == RunResult(
                    status: 1, output: "",
                    errors: """
                        Error: line 4: malformed JSON at column 2: expected a member name in quotes
                        Error: the import stopped at line 4: 2 records were committed before it; nothing of its chunk was written

                        """))
        #expect(kvtool("count", store.path, "Project").output == "2\n")
    }

    @Test func keepsGoingPastBadLines() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path, projects: [], tasks: [])
        let file = store.sibling("bad.jsonl")
        try Data(Self.lines(count: 5, badAt: [2, 4]).utf8).write(to: URL(fileURLWithPath: file))
        let result = kvtool("import", store.path, file, "--keep-going", "--chunk-size", "2")
        #expect(result.status == 1)
        #expect(result.output == "Imported 3 records from \(file); skipped 2 bad lines.\n")
        #expect(
            result.errors.split(separator: "\n").map { $0.prefix(22) } == [
                "Error: line 2: malform", "Error: line 4: malform",
            ])
        #expect(kvtool("count", store.path, "Project").output == "3\n")
    }

    /// Lines of projects named P1..., with `{{` (malformed JSON) at the given line numbers.
    static func lines(count: Int, badAt bad: Set<Int>) -> String {
        (1...count).map { number in
            if bad.contains(number) { return "{{\n" }
            let id = fixedID(UInt8(number), entity: 5)
            return #"{"entity":"Project","id":"\#(id)","record":{"id":"\#(id)","name":"P\#(number)"}}"# + "\n"
        }.joined()
    }

    @Test(arguments: [
        (
            #"{"entity":"Tsk","id":"01900000-0000-7000-8000-000000000201","record":{}}"#,
            "unknown entity 'Tsk' (the store has Project, Task)"
        ),
        (#"{"entity":"Task","id":"nope","record":{}}"#, "malformed UUID 'nope' in \"id\""),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{"id":"01900000-0000-7000-8000-000000000201","isDone":"yes"}}"#,
            "Task 01900000-0000-7000-8000-000000000201: field 'isDone': expected a bool (the catalog's kind), got a string"
        ),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{"id":"01900000-0000-7000-8000-000000000201","projectID":"garden"}}"#,
            "Task 01900000-0000-7000-8000-000000000201: field 'projectID': 'garden' is not a UUID"
        ),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{"id":"01900000-0000-7000-8000-000000000202"}}"#,
            "Task 01900000-0000-7000-8000-000000000201: the record's id field ({\"$uuid\":\"01900000-0000-7000-8000-000000000202\"}) differs from the line's id"
        ),
        (
            #"{"entity":"Project","id":"01900000-0000-7000-8000-000000000109","record":{"id":"01900000-0000-7000-8000-000000000109","name":"Inbox"}}"#,
            "Project 01900000-0000-7000-8000-000000000109: name \"Inbox\" is already used by Project 01900000-0000-7000-8000-000000000101 (unique index name)"
        ),
        (#"[1,2]"#, "expected a JSON object, got an array"),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{},"extra":1}"#,
            "unexpected member 'extra'; a line is {\"entity\":…,\"id\":…,\"record\":{…}}"
        ),
    ])
    func refusesBadLines(_ line: String, _ message: String) throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let before = kvtool("export", store.path).output
        let file = store.sibling("line.jsonl")
        try Data(("\n" + line + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let result = kvtool("import", store.path, file)
        #expect(result.status == 1)
        #expect(result.errors.split(separator: "\n").first.map(String.init) == "Error: line 2: " + message)
        #expect(kvtool("export", store.path).output == before)
    }
}
