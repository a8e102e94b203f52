import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// `info`, `schema`, `copy` and `readers` on the sample store.
@Suite struct InfoSchemaTests {
    @Test func infoShowsFormatSizesAndTables() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let result = kvtool("info", store.path)
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines.prefix(3) == ["Path              \(store.path)", "Format version    2", "Schema version    none"])
        #expect(lines.contains("Map size          64.0 MiB (67,108,864 bytes)"))
        #expect(lines.contains("Page size         4,096 bytes"))
        #expect(lines.contains("Readers in use    0 of 126"))
        #expect(lines.contains { $0.hasPrefix("Used size         ") && $0.hasSuffix(" pages") })
        #expect(
            Array(lines.suffix(8)) == [
                "Table                 Entries  Depth  Pages",
                "--------------------  -------  -----  -----",
                "catalog                     4      1      1",
                "index/Project/name          2      1      1",
                "index/Task/projectID        4      1      1",
                "records/Project             2      1      1",
                "records/Task                4      1      1",
                "",
            ])
    }

    @Test func infoAsJSON() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let result = kvtool("info", store.path, "--json")
        #expect(result.status == 0)
        let json = try JSONParser.parse(Array(result.output.utf8))
        #expect(json[member: "formatVersion"] == .number("2"))
        #expect(json[member: "schemaVersion"] == JSONValue.null)
        #expect(json[member: "migrations"] == .array([]))
        #expect(json[member: "pageSize"] == .number("4096"))
        #expect(json[member: "mapSize"] == .number("67108864"))
        guard case .array(let tables)? = json[member: "tables"] else {
            Issue.record("no tables")
            return
        }
        #expect(
            tables.compactMap { $0[member: "name"] }
                == ["catalog", "index/Project/name", "index/Task/projectID", "records/Project", "records/Task"].map(
                    JSONValue.string))
        #expect(tables.last?[member: "entries"] == .number("4"))
    }

    @Test func schemaShowsFieldsIndexesAndRelationships() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        let expected = """
            Project: 2 records
              Fields:
                id         uuid
                name       string
                createdAt  date
              Indexes:
                name  (name)  unique, ready
              Unique constraints:
                name
              Relationships:
                tasks  to-many Task, derived, delete rule cascade

            Task: 4 records
              Fields:
                id         uuid
                title      string
                isDone     bool
                createdAt  date
                projectID  uuid
                dueDate    date
              Indexes:
                projectID  (projectID)  ready
              Unique constraints: none
              Relationships:
                project  to-one Project, field projectID, inverse tasks, delete rule nullify

            """
        #expect(kvtool("schema", store.path) == RunResult(status: 0, output: expected, errors: ""))
    }

    @Test func schemaAsJSON() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        let json = try JSONParser.parse(Array(kvtool("schema", store.path, "--json").output.utf8))
        guard case .array(let entities)? = json[member: "entities"], let task = entities.last else {
            Issue.record("no entities")
            return
        }
        #expect(task[member: "name"] == .string("Task"))
        #expect(task[member: "records"] == .number("4"))
        #expect(
            task[member: "indexes"]
                == .array([
                    .object([
                        JSONMember("name", .string("projectID")), JSONMember("fields", .array([.string("projectID")])),
                        JSONMember("unique", .bool(false)), JSONMember("multiEntry", .bool(false)),
                        JSONMember("ready", .bool(true)),
                    ])
                ]))
        #expect(entities.first?[member: "uniqueConstraints"] == .array([.array([.string("name")])]))
        guard case .array(let relationships)? = task[member: "relationships"] else {
            Issue.record("no relationships")
            return
        }
        #expect(relationships.first?[member: "deleteRule"] == .string("nullify"))
        #expect(relationships.first?[member: "field"] == .string("projectID"))
    }

    @Test func copiesALiveStore() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let container = try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: store.path))
        defer { try? container.close() }
        let context = ModelContext(container)
        context.insert(Project(name: "Live"))
        try context.save()
        let copy = store.sibling("copy")
        let result = kvtool("copy", store.path, copy, "--compact")
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("Copied \(store.path) to \(copy), compacted: "))
        #expect(kvtool("count", copy, "Project").output == "3\n")
        #expect(kvtool("check", copy).status == 0)
        context.insert(Project(name: "Later"))
        try context.save()
        #expect(kvtool("count", store.path, "Project").output == "4\n", "the container stayed open and usable")
        #expect(
            kvtool("copy", store.path, copy).errors
                == "Error: Cannot write '\(copy)/data.mdb': it already exists; use --force to replace it\n")
    }

    @Test func listsAndClearsReaders() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(
            kvtool("readers", store.path) == RunResult(status: 0, output: "0 reader slots in use of 126.\n", errors: "")
        )
        #expect(
            kvtool("readers", store.path, "--clear-stale").output
                == "Cleared 0 stale reader slots.\n0 reader slots in use of 126.\n")
        let json = try JSONParser.parse(Array(kvtool("readers", store.path, "--json").output.utf8))
        #expect(json[member: "readers"] == .array([]))
        #expect(json[member: "maxReaders"] == .number("126"))
    }

    @Test func progressGoesToATerminalOnly() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let output = StringSink()
        let errors = StringSink()
        let terminal = Console(output: output, errors: errors, outputIsTerminal: false, errorsIsTerminal: true)
        #expect(KVTool.run(arguments: ["check", store.path], console: terminal) == 0)
        #expect(errors.text.contains("\r\u{1B}[Kcheck: "))
        #expect(errors.text.hasSuffix("\r\u{1B}[K"))
        #expect(kvtool("check", store.path).errors == "")
    }
}
