import Foundation
import KVStore
import Testing

@testable import KVToolCore

/// `export` and `import`: the format, round trips, and what import refuses.
@Suite struct ExportImportTests {
    /// The catalog of the sample store, as its export's header holds it.
    static let catalog =
        #""entities":[{"fields":{"kinds":[10,7,9],"names":["id","name","createdAt"]},"indexes":[{"fields":["name"],"#
        + #""isDerivable":true,"isMultiEntry":false,"isReady":true,"isUnique":true,"name":"name"}],"name":"Project","#
        + #""relationships":[]},{"fields":{"kinds":[10,7,1,9,10,9],"names":["id","title","isDone","createdAt","#
        + #""projectID","dueDate"]},"indexes":[{"fields":["projectID"],"isDerivable":true,"isMultiEntry":false,"#
        + #""isReady":true,"isUnique":false,"name":"projectID"}],"name":"Task","relationships":[]}]"#
    static let header =
        #"{"kvtool-export":2,"kind":"header","format":2,"created":"…","schema":{"history":[],"pendingDrops":[]},"#
        + catalog + "}"
    static let end =
        #"{"kind":"end","records":6,"chunks":0,"entities":{"Project":{"records":2,"chunks":0,"#
        + #""required":["id","name","createdAt"]},"Task":{"records":4,"chunks":0,"#
        + #""required":["id","title","isDone","createdAt"]}}}"#

    @Test func exportsAHeaderThenOneLinePerRecordThenAnEndLine() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let lines = try ImportTesting.export(store.path).split(separator: "\n").map(String.init)
        #expect(lines.count == 8)
        #expect(lines.first == Self.header)
        #expect(
            lines[1]
                == #"{"kind":"record","entity":"Project","id":"01900000-0000-7000-8000-000000000101","record":"#
                + #"{"id":"01900000-0000-7000-8000-000000000101","name":"Inbox","createdAt":"2026-05-09T06:13:20Z"}}"#)
        #expect(
            lines[4] == #"{"kind":"record","entity":"Task","id":"01900000-0000-7000-8000-000000000202","record":"#
                + CountListTests.task2 + "}")
        #expect(lines.last == Self.end)
        let tasksOnly = try ImportTesting.export(store.path, "Task", "--chunk-size", "1").split(separator: "\n")
        #expect(tasksOnly.count == 6)
        #expect(tasksOnly.first.map(String.init) == Self.header, "the header carries the whole catalog")
        #expect(Array(tasksOnly[1...4]) == lines[3...6].map { Substring($0) })
        #expect(
            tasksOnly.last.map(String.init)
                == #"{"kind":"end","records":4,"chunks":0,"entities":{"Task":{"records":4,"chunks":0,"#
                + #""required":["id","title","isDone","createdAt"]}}}"#)
    }

    @Test func exportsToAFile() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("export.jsonl")
        let result = kvtool("export", store.path, "--output", file)
        #expect(result == RunResult(status: 0, output: "Exported 6 records of 2 entities to \(file).\n", errors: ""))
        #expect(try String(contentsOfFile: file, encoding: .utf8) == kvtool("export", store.path).output)
    }

    @Test func roundTripsIntoAStoreTheProgramOpened() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        try Sample.makeStore(at: source.path)
        try Sample.makeStore(at: target.path, projects: [], tasks: [])
        let file = source.sibling("export.jsonl")
        _ = kvtool("export", source.path, "--output", file)
        #expect(
            kvtool("import", target.path, file)
                == RunResult(status: 0, output: "Imported 6 records from \(file).\n", errors: ""))
        #expect(try ImportTesting.export(target.path) == ImportTesting.export(source.path))
        ImportTesting.expectClean(target.path)
        let container = try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: target.path))
        defer { try? container.close() }
        let context = ModelContext(container)
        #expect(try context.models(for: Sample.tasks.map(\.id), as: Task.self) == Sample.tasks)
        let gardenID = Sample.garden.id
        let garden = try context.fetch(FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == gardenID }))
        #expect(garden.map(\.title) == ["Plant tulips", "Water the roses"])
    }

    /// The program never opened the target: the export's catalog makes its schema.
    @Test func createsTheStoreAndItsSchemaFromTheExport() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        try Sample.makeStore(at: source.path)
        try Sample.addRelationships(at: source.path)
        let file = source.sibling("export.jsonl")
        _ = kvtool("export", source.path, "--output", file)
        let result = kvtool("import", target.path + "/nested", file)
        #expect(
            result
                == RunResult(
                    status: 0,
                    output: "Created the store at '\(target.path)/nested'.\nCreated Project, Task from the export's "
                        + "catalog.\nImported 6 records from \(file).\n", errors: ""))
        #expect(try ImportTesting.export(target.path + "/nested") == ImportTesting.export(source.path))
        ImportTesting.expectClean(target.path + "/nested")
        #expect(kvtool("schema", target.path + "/nested").output == kvtool("schema", source.path).output)
    }

    /// Standard input is read twice too, through a copy in the scratch directory, which goes at the end.
    @Test func importsFromStandardInput() throws {
        let source = TemporaryStore()
        try ExternalSample.makeStore(at: source.path)
        let file = source.sibling("photo.jsonl")
        #expect(kvtool("export", source.path, "--output", file).status == 0)
        let scratch = source.sibling("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        let target = source.sibling("target")
        let process = Process()
        process.executableURL = try BinarySmokeTests.executable()
        process.arguments = ["import", target, "-", "--scratch-directory", scratch]
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed.hasSuffix("Imported 1 record and 2 external values (585.9 KiB) from standard input.\n"))
        #expect(try ImportTesting.export(target) == ImportTesting.export(source.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch) == [])
    }

    /// An export of kvtool 0.1 (format 1: field kinds in the header, no catalog, no end line) imports into a store
    /// that has its entities.
    @Test func importsAVersion1Export() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path, projects: [], tasks: [])
        let file = store.sibling("v1.jsonl")
        try ImportTesting.write(
            [
                #"{"kvtool-export":1,"format":1,"fields":{"Project":{"id":"uuid","name":"string","createdAt":"date"}}}"#,
                #"{"entity":"Project","id":"01900000-0000-7000-8000-000000000101","record":{"#
                    + #""id":"01900000-0000-7000-8000-000000000101","name":"Inbox","createdAt":"2026-05-09T06:13:20Z"}}"#,
            ], to: file)
        #expect(
            kvtool("import", store.path, file)
                == RunResult(status: 0, output: "Imported 1 record from \(file).\n", errors: ""))
        #expect(kvtool("list", store.path, "Project").output.contains(#""createdAt":"2026-05-09T06:13:20Z""#))
        ImportTesting.expectClean(store.path)
    }

    @Test func replacesStoredRecordsAndKeepsIndexesInStep() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("moves.jsonl")
        let moved =
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{"id":"01900000-0000-7000-8000-000000000201","#
            + #""title":"Write the report","isDone":true,"createdAt":"2026-05-09T06:13:20Z","#
            + #""projectID":"01900000-0000-7000-8000-000000000102"}}"#
        try ImportTesting.write([moved], to: file)
        #expect(
            kvtool("import", store.path, file, "--on-conflict", "replace")
                == RunResult(
                    status: 0, output: "Imported 1 record (1 replacing stored ones) from \(file).\n", errors: ""))
        #expect(kvtool("count", store.path, "Task", "--where", "projectID=\(Sample.garden.id)").output == "3\n")
        #expect(kvtool("count", store.path, "Task", "--where", "projectID=\(Sample.inbox.id)").output == "0\n")
        ImportTesting.expectClean(store.path)
    }

    /// Before: the unknown field was added to the catalog and stored, for a program that has no such field.
    @Test func refusesFieldsNeitherCatalogKnows() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("new.jsonl")
        let line =
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000209","record":{"id":"01900000-0000-7000-8000-000000000209","#
            + #""title":"New","isDone":true,"createdAt":"2026-05-09T06:13:20Z","priority":{"$uint":3},"#
            + #""tags":[{"name":"a","colour":"red"}]}}"#
        try ImportTesting.write([line], to: file)
        let result = kvtool("import", store.path, file)
        #expect(result.status == ImportCommand.invalidInputStatus)
        #expect(
            result.errors == """
                Error: line 1: Task 01900000-0000-7000-8000-000000000209: unknown field 'priority': neither the store's nor the export's catalog of Task names it
                Error: line 1: Task 01900000-0000-7000-8000-000000000209: unknown field 'tags': neither the store's nor the export's catalog of Task names it
                Error: line 1: Task 01900000-0000-7000-8000-000000000209: unknown field 'tags[0].name': neither the store's nor the export's catalog of Task names it
                Error: line 1: Task 01900000-0000-7000-8000-000000000209: unknown field 'tags[0].colour': neither the store's nor the export's catalog of Task names it
                Error: the input is invalid: 4 problems; nothing was written to the store

                """)
        #expect(kvtool("count", store.path, "Task").output == "4\n")
    }

    /// Before: the chunks before the bad line were committed, so a bad input left the store half imported.
    @Test func anInvalidLineChangesNothing() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path, projects: [Sample.inbox], tasks: [])
        let file = store.sibling("bad.jsonl")
        try Data(Self.lines(count: 5, badAt: [4]).utf8).write(to: URL(fileURLWithPath: file))
        let transaction = try ImportTesting.lastTransaction(store.path)
        let bytes = try ImportTesting.dataFile(store.path)
        let result = kvtool("import", store.path, file, "--chunk-size", "2")
        #expect(
            result
                == RunResult(
                    status: 65, output: "",
                    errors: """
                        Error: line 4: malformed JSON at column 2: expected a member name in quotes
                        Error: the input is invalid: 1 problem; nothing was written to the store

                        """))
        #expect(try ImportTesting.lastTransaction(store.path) == transaction)
        #expect(try ImportTesting.dataFile(store.path) == bytes)
        #expect(kvtool("count", store.path, "Project").output == "1\n")
        #expect(kvtool("import", store.path, file, "--dry-run").status == 65)
    }

    @Test func aDryRunWritesNothing() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path, projects: [Sample.inbox], tasks: [])
        let file = store.sibling("good.jsonl")
        try Data(Self.lines(count: 3, badAt: []).utf8).write(to: URL(fileURLWithPath: file))
        let transaction = try ImportTesting.lastTransaction(store.path)
        #expect(
            kvtool("import", store.path, file, "--dry-run")
                == RunResult(
                    status: 0, output: "The input is valid: it would import 3 records; nothing was written.\n",
                    errors: ""))
        #expect(try ImportTesting.lastTransaction(store.path) == transaction)
    }

    /// Lines of projects named P1..., with `{{` (malformed JSON) at the given line numbers.
    static func lines(count: Int, badAt bad: Set<Int>) -> String {
        (1...count).map { number in
            if bad.contains(number) { return "{{\n" }
            let id = fixedID(UInt8(number), entity: 5)
            return #"{"entity":"Project","id":"\#(id)","record":{"id":"\#(id)","name":"P\#(number)","#
                + #""createdAt":"2026-05-09T06:13:20Z"}}"# + "\n"
        }.joined()
    }

    @Test(arguments: [
        (
            #"{"entity":"Tsk","id":"01900000-0000-7000-8000-000000000201","record":{}}"#,
            "unknown entity 'Tsk' (the store has Project, Task)"
        ),
        (#"{"entity":"Task","id":"nope","record":{}}"#, "malformed UUID 'nope' in \"id\""),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000209","record":{"id":"01900000-0000-7000-8000-000000000209","isDone":"yes"}}"#,
            "Task 01900000-0000-7000-8000-000000000209: field 'isDone': expected a bool (the catalog's kind), got a string"
        ),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000209","record":{"id":"01900000-0000-7000-8000-000000000209","projectID":"garden"}}"#,
            "Task 01900000-0000-7000-8000-000000000209: field 'projectID': 'garden' is not a UUID"
        ),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{"id":"01900000-0000-7000-8000-000000000202"}}"#,
            "Task 01900000-0000-7000-8000-000000000201: the record's id field ({\"$uuid\":\"01900000-0000-7000-8000-000000000202\"}) differs from the line's id"
        ),
        (
            #"{"entity":"Project","id":"01900000-0000-7000-8000-000000000109","record":{"id":"01900000-0000-7000-8000-000000000109","name":"Inbox","createdAt":"2026-05-09T06:13:20Z"}}"#,
            "Project 01900000-0000-7000-8000-000000000109: name \"Inbox\" is already used by the stored Project 01900000-0000-7000-8000-000000000101 (unique index name)"
        ),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{"id":"01900000-0000-7000-8000-000000000201","title":"x","isDone":false,"createdAt":"2026-05-09T06:13:20Z"}}"#,
            "Task 01900000-0000-7000-8000-000000000201: the store already has a record with this ID (--on-conflict fail, the default; replace or skip decide otherwise)"
        ),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000209","record":{"id":"01900000-0000-7000-8000-000000000209","title":7}}"#,
            "Task 01900000-0000-7000-8000-000000000209: field 'title': expected a string (the catalog's kind), got a number"
        ),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000209","record":{"id":"01900000-0000-7000-8000-000000000209","title":{"$int":7}}}"#,
            "Task 01900000-0000-7000-8000-000000000209: field 'title' holds an int, but Task.title holds string values (the catalog's kind)"
        ),
        (#"[1,2]"#, "expected a JSON object, got an array"),
        (
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000201","record":{},"extra":1}"#,
            "unexpected member 'extra'; a line is {\"entity\":…,\"id\":…,\"record\":{…}}"
        ),
        (
            #"{"kind":"tombstone","entity":"Task","id":"01900000-0000-7000-8000-000000000201"}"#,
            "the line's kind 'tombstone' is not one this kvtool reads (header, record, chunk, delete, end); the export was written by a newer kvtool: import it with that one"
        ),
        (
            #"{"kvtool-export":4,"kind":"header","format":1}"#,
            "the export is of format version 4; this kvtool reads versions 1 to 3. Use a newer kvtool"
        ),
    ])
    func refusesBadLines(_ line: String, _ message: String) throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let before = kvtool("export", store.path).output
        let file = store.sibling("line.jsonl")
        try Data(("\n" + line + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let result = kvtool("import", store.path, file)
        #expect(result.status == 65)
        #expect(result.errors.split(separator: "\n").first.map(String.init) == "Error: line 2: " + message)
        #expect(kvtool("export", store.path).output == before)
    }
}
