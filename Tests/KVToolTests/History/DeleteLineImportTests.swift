import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// Delete lines in `import`'s input: what they delete, and the inputs it refuses for them.
@Suite struct DeleteLineImportTests {
    static func deleteLine(_ entity: String, _ id: UUID) -> String {
        #"{"kind":"delete","entity":"\#(entity)","id":"\#(id.uuidString)"}"#
    }

    static func recordLine(_ task: Task) -> String {
        let project = task.projectID.map { #","projectID":"\#($0.uuidString)""# } ?? ""
        return
            #"{"kind":"record","entity":"Task","id":"\#(task.id.uuidString)","record":{"id":"\#(task.id.uuidString)","#
            + #""title":"\#(task.title)","isDone":false,"createdAt":"2026-05-09T06:13:20Z"\#(project)}}"#
    }

    @Test func aDeleteOfAModelThatIsNotThereChangesNothing() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let before = try ImportTesting.export(store.path)
        let file = store.sibling("delete.jsonl")
        try ImportTesting.write([Self.deleteLine("Task", fixedID(9, entity: 2))], to: file)
        #expect(
            kvtool("import", store.path, file, "--dry-run")
                == RunResult(
                    status: 0,
                    output: "The input is valid: it would import 0 records and delete 0 records (1 more not stored); "
                        + "nothing was written.\n", errors: ""))
        #expect(
            kvtool("import", store.path, file)
                == RunResult(
                    status: 0, output: "Imported 0 records from \(file); deleted 0 records (1 more not stored).\n",
                    errors: ""))
        #expect(try ImportTesting.export(store.path) == before)
        #expect(try ImportTesting.progress(store.path) == nil)
    }

    @Test func aDeleteLineDeletesTheRecordAndItsIndexEntries() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        let file = store.sibling("delete.jsonl")
        try ImportTesting.write(
            [
                Self.deleteLine("Task", Sample.tasks[0].id), Self.deleteLine("Task", Sample.tasks[3].id),
                Self.deleteLine("Project", Sample.inbox.id), Self.deleteLine("Project", fixedID(9, entity: 1)),
            ], to: file)
        #expect(
            kvtool("import", store.path, file, "--dry-run").output
                == "The input is valid: it would import 0 records and delete 3 records (1 more not stored); nothing "
                + "was written.\n")
        #expect(
            kvtool("import", store.path, file).output
                == "Imported 0 records from \(file); deleted 3 records (1 more not stored).\n")
        #expect(kvtool("count", store.path, "Task").output == "2\n")
        #expect(kvtool("count", store.path, "Project").output == "1\n")
        let info = kvtool("info", store.path).output
        #expect(info.contains("\nindex/Project/name          1 "))
        #expect(info.contains("\nindex/Task/projectID        2 "))
        ImportTesting.expectClean(store.path)
        // The unique value the deleted project held is free.
        try ImportTesting.write(
            [
                #"{"entity":"Project","id":"\#(fixedID(7, entity: 1))","record":{"id":"\#(fixedID(7, entity: 1))","#
                    + #""name":"Inbox","createdAt":"2026-05-09T06:13:20Z"}}"#
            ], to: file)
        #expect(kvtool("import", store.path, file).status == 0)
    }

    @Test func deleteLinesComeFirstNameKnownEntitiesAndIDsOnce() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("delete.jsonl")
        let fresh = Task(id: fixedID(8, entity: 2), title: "Fresh")
        try ImportTesting.write(
            [
                Self.deleteLine("Tsk", Sample.tasks[3].id), Self.deleteLine("Task", Sample.tasks[3].id),
                Self.deleteLine("Task", Sample.tasks[3].id), Self.recordLine(fresh),
                Self.deleteLine("Task", Sample.tasks[2].id),
            ], to: file)
        let before = try ImportTesting.dataFile(store.path)
        #expect(
            kvtool("import", store.path, file)
                == RunResult(
                    status: 65, output: "",
                    errors: """
                        Error: line 1: unknown entity 'Tsk' (the store has Project, Task)
                        Error: line 3: Task 01900000-0000-7000-8000-000000000204: the ID appears twice in the input, \
                        also at line 2
                        Error: line 5: a delete line after the record at line 4: delete lines come before the records \
                        (as 'kvtool export --since' writes them), so that what they free is known when the records are \
                        checked
                        Error: the input is invalid: 3 problems; nothing was written to the store

                        """))
        #expect(try ImportTesting.dataFile(store.path) == before)
    }

    @Test func aReferenceToADeletedRecordIsAProblemFromTheInputOrTheStore() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        let file = store.sibling("delete.jsonl")
        // Garden's tasks stay stored and reference it; the input's task references Inbox, which it deletes.
        try ImportTesting.write(
            [
                Self.deleteLine("Project", Sample.garden.id), Self.deleteLine("Project", Sample.inbox.id),
                Self.recordLine(Sample.tasks[0]),
            ], to: file)
        let stored = { (task: Int) in
            "Project 01900000-0000-7000-8000-000000000102: deleted, but the stored Task "
                + "01900000-0000-7000-8000-00000000020\(task), which the input neither replaces nor deletes, references "
                + "it through projectID (relationship project does not allow dangling references). Import applies no "
                + "delete rules (an incremental export carries the source's cascades and nullifications as changes of "
                + "their own): the store holds changes its source did not make. Make a new copy from a full export"
        }
        let expected = """
            Error: line 1: \(stored(2))
            Error: line 1: \(stored(3))
            Error: line 3: Task 01900000-0000-7000-8000-000000000201: projectID references Project \
            01900000-0000-7000-8000-000000000101, which line 2 deletes (relationship project does not allow dangling \
            references)
            Error: the input is invalid: 3 problems; nothing was written to the store

            """
        let result = kvtool("import", store.path, file, "--on-conflict", "replace")
        #expect(result == RunResult(status: 65, output: "", errors: expected))

        // Without an index on the reference's field, the stored records are read.
        try Sample.editCatalog(at: store.path) { entities in entities["Task"]?.indexes = [] }
        #expect(kvtool("import", store.path, file, "--on-conflict", "replace") == result)

        // Deleting Garden's tasks with it, and rewriting Inbox's, is consistent.
        var moved = Sample.tasks[0]
        moved.projectID = nil
        try ImportTesting.write(
            [
                Self.deleteLine("Project", Sample.garden.id), Self.deleteLine("Project", Sample.inbox.id),
                Self.deleteLine("Task", Sample.tasks[1].id), Self.deleteLine("Task", Sample.tasks[2].id),
                Self.recordLine(moved),
            ], to: file)
        let applied = kvtool("import", store.path, file, "--on-conflict", "replace")
        #expect(applied.status == 0, "\(applied.errors)")
        #expect(kvtool("count", store.path, "Project").output == "0\n")
    }

    @Test func theEndLineCountsDeleteLines() throws {
        let pair = try IncrementalExportTests.makePair()
        let container = try HistoryTesting.container(pair.source.path)
        try container.write { txn in _ = try txn.delete(SyncFolder.self, id: IncrementalExportTests.garden.id) }
        try container.close()
        let file = pair.source.sibling("changes.jsonl")
        #expect(kvtool("export", pair.source.path, "--since", pair.token, "--output", file).status == 0)
        var lines = try HistoryTesting.lines(of: file)
        #expect(lines.count == 5)
        lines.remove(at: 2)
        try ImportTesting.write(lines, to: file)
        #expect(
            kvtool("import", pair.copy, file)
                == RunResult(
                    status: 65, output: "",
                    errors: "Error: line 2: Folder 01900000-0000-7000-8000-000000000302: deleted, but the stored Note "
                        + "01900000-0000-7000-8000-000000000402, which the input neither replaces nor deletes, "
                        + "references it through folderID (relationship folder does not allow dangling references). "
                        + "Import applies no delete rules (an incremental export carries the source's cascades and "
                        + "nullifications as changes of their own): the store holds changes its source did not make. "
                        + "Make a new copy from a full export\n"
                        + "Error: line 4: the end line counts 2 delete lines of Note, and the input has 1: lines "
                        + "were lost or added\nError: the input is invalid: 2 problems; nothing was written to the "
                        + "store\n"))
    }
}
