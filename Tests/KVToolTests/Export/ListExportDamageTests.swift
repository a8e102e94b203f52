import Foundation
import KVStore
import LMDB
import Testing

@testable import KVToolCore

/// `list`, `export` and `count --where` on a record table damaged where LMDB does not notice: a key that is not a
/// record key, a table whose own count of entries disagrees with what its pages hold, a record whose bytes changed.
/// Each prints what it could read, says what is wrong and exits 1.
@Suite struct ListExportDamageTests {
    /// The sample tasks' lines as `list` prints them, in ID order.
    private static let taskLines = [
        CountListTests.task1, CountListTests.task2, CountListTests.task3, CountListTests.task4,
    ]
    .map { $0 + "\n" }

    /// The sample tasks' lines as `export` writes them, in ID order.
    private static let exportedTaskLines = zip(Sample.tasks, taskLines).map { task, line in
        #"{"kind":"record","entity":"Task","id":""# + task.id.uuidString + #"","record":"# + line.dropLast() + "}\n"
    }

    /// Plants `keys` in the sample store's Task table through the LMDB binding, each with a record's bytes.
    private static func plant(_ keys: [[UInt8]], at path: String) throws {
        try withEnvironment(at: path) { environment in
            let records = try environment.openTable(named: Catalog.recordTableName("Task"))
            try environment.write { txn in
                let record = try #require(try txn.value(forKey: bytes(Sample.tasks[0].id), in: records))
                for key in keys { try txn.put(record, forKey: key, in: records) }
            }
        }
    }

    /// Writes `entries` as the entry count of the Task table's record (its MDB_db) in the main table's root page: the
    /// node's key, then the 48-byte record, whose md_entries is 32 bytes in. LMDB hands that count out (`mdb_stat`)
    /// and never compares it with the pages.
    private static func setRecordedEntries(_ entries: UInt64, at path: String) throws {
        let report = try PageCheck.checkFile(path: path)
        let main = try #require(report.table(named: nil)?.rootPage)
        let url = URL(fileURLWithPath: path + "/data.mdb")
        let file = try Data(contentsOf: url)
        let page = file[(main * 4096)..<((main + 1) * 4096)]
        let key = try #require(page.range(of: Data(Catalog.recordTableName("Task").utf8)))
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(key.upperBound + 32))
        try handle.write(contentsOf: withUnsafeBytes(of: entries.littleEndian) { Data($0) })
    }

    private static func nonRecordKeysMessage(_ path: String) -> String {
        "Error: Task's record table holds 2 keys that are not record keys (16-byte IDs), the first 6A756E6B (4 "
            + "bytes); they were skipped. The store is damaged: run 'kvtool check \(path)' for the whole report\n"
    }

    private static func entriesMessage(_ path: String, recorded: String, read: String) -> String {
        "Error: Task's record table says it holds \(recorded) entries, but \(read) were read: the table is damaged. "
            + "Run 'kvtool check \(path)' for the whole report\n"
    }

    /// The lines of an export but for its header, which must come first.
    private static func linesAfterHeader(_ output: String) throws -> [String] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) + "\n" }
        try #require(lines.first?.hasPrefix(#"{"kvtool-export":2,"kind":"header""#) == true, "\(output)")
        // The split leaves an empty string after the last newline.
        return Array(lines.dropFirst().dropLast())
    }

    @Test func keysThatAreNotRecordKeysAreReportedAfterTheRecords() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Self.plant([Array("junk".utf8), Array("zz-not-an-id".utf8)], at: store.path)
        let message = Self.nonRecordKeysMessage(store.path)
        #expect(
            kvtool("list", store.path, "Task")
                == RunResult(status: 1, output: Self.taskLines.joined(), errors: message))
        let sorted = kvtool("list", store.path, "Task", "--sort", "title:desc", "--fields", "title")
        #expect(sorted.status == 1)
        #expect(sorted.output.split(separator: "\n").count == 4, "\(sorted)")
        #expect(sorted.errors == message)
        let table = kvtool("list", store.path, "Task", "--table")
        #expect(table.status == 1)
        #expect(table.output.hasSuffix("(4 records)\n"), "\(table.output)")
        #expect(table.errors == message)
        #expect(
            kvtool("count", store.path, "Task", "--where", "isDone=false")
                == RunResult(status: 1, output: "3\n", errors: message))
        let check = kvtool("check", store.path)
        #expect(check.status == 1)
        #expect(check.output.contains("error: Task: a record key of 4 bytes is not a UUID\n"), "\(check.output)")
    }

    @Test func aListStoppedByItsLimitReportsTheKeysItMetAsAtLeast() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        // Sorts before every record key, so that the first entry read is not a record.
        try Self.plant([[0x00, 0x01]], at: store.path)
        let result = kvtool("list", store.path, "Task", "--limit", "1")
        #expect(result.status == 1)
        #expect(result.output == Self.taskLines[0])
        #expect(
            result.errors
                == "Error: Task's record table holds at least 1 key that is not a record key (16-byte IDs), the first "
                + "0001 (2 bytes); it was skipped. The store is damaged: run 'kvtool check \(store.path)' for the "
                + "whole report\n")
    }

    @Test func exportWritesTheRecordsButNoEndLineAndReportsTheKeys() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Self.plant([Array("junk".utf8), Array("zz-not-an-id".utf8)], at: store.path)
        let result = kvtool("export", store.path, "Task")
        #expect(result.status == 1)
        #expect(try Self.linesAfterHeader(result.output) == Self.exportedTaskLines)
        #expect(
            result.errors
                == Self.nonRecordKeysMessage(store.path)
                + "Error: The export is incomplete: it has no end line, so 'kvtool import' refuses it\n")
        // Written to a file, nothing is left: the export failed.
        let file = store.sibling("tasks.jsonl")
        let toFile = kvtool("export", store.path, "Task", "--output", file)
        #expect(toFile.status == 1)
        #expect(toFile.output == "")
        #expect(
            toFile.errors
                == Self.nonRecordKeysMessage(store.path)
                + "Error: The export is incomplete: '\(file)' was not written\n")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test(arguments: [(UInt64(5), "5"), (UInt64(3), "3"), (UInt64.max, "18,446,744,073,709,551,615")])
    func aTableWhoseCountDisagreesWithItsPagesIsDamage(_ recorded: UInt64, _ shown: String) throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Self.setRecordedEntries(recorded, at: store.path)
        let message = Self.entriesMessage(store.path, recorded: shown, read: "4")
        #expect(
            kvtool("list", store.path, "Task")
                == RunResult(status: 1, output: Self.taskLines.joined(), errors: message))
        let export = kvtool("export", store.path)
        #expect(export.status == 1)
        let lines = try Self.linesAfterHeader(export.output)
        #expect(Array(lines.suffix(4)) == Self.exportedTaskLines, "\(export.output)")
        #expect(!lines.contains { $0.hasPrefix(#"{"kind":"end""#) })
        #expect(
            export.errors == message + "Error: The export is incomplete: it has no end line, so 'kvtool import' "
                + "refuses it\n")
        #expect(
            kvtool("count", store.path, "Task", "--where", "isDone=false")
                == RunResult(status: 1, output: "3\n", errors: message))
        // The full check compares the count with the pages too.
        let check = kvtool("check", store.path)
        #expect(check.status == 1)
        #expect(check.output.contains("of records/Task: The record of table records/Task counts"), "\(check.output)")
    }

    @Test func aRecordWhoseChecksumFailsStopsListAndExportWithoutPrintingIt() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let damaged = Sample.tasks[2]
        let size = try withEnvironment(at: store.path) { environment in
            let records = try environment.openTable(named: Catalog.recordTableName("Task"))
            return try environment.write { txn in
                var value = try #require(try txn.value(forKey: bytes(damaged.id), in: records))
                let title = Array(damaged.title.utf8)
                let start = try #require(value.indices.first { value[$0...].starts(with: title) })
                value[start] ^= 0x20
                try txn.put(value, forKey: bytes(damaged.id), in: records)
                return value.count
            }
        }
        let message =
            "Error: The stored Task \(damaged.id) does not decode (Corrupt record at byte \(size): its checksum does "
            + "not match its bytes); run 'kvtool check' on the store\n"
        #expect(
            kvtool("list", store.path, "Task")
                == RunResult(status: 1, output: Self.taskLines.prefix(2).joined(), errors: message))
        let export = kvtool("export", store.path, "Task")
        #expect(export.status == 1)
        #expect(export.errors == message)
        // The lines of a read transaction are written once it ends: the one that met the record wrote none.
        #expect(try Self.linesAfterHeader(export.output) == [])
    }

    @Test func theBuiltBinaryReportsKeysAndCountsWithExitStatusOne() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Self.plant([Array("junk".utf8), Array("zz-not-an-id".utf8)], at: store.path)
        let list = try BinarySmokeTests.run(["list", store.path, "Task"])
        #expect(
            list == RunResult(status: 1, output: Self.taskLines.joined(), errors: Self.nonRecordKeysMessage(store.path))
        )
        let export = try BinarySmokeTests.run(["export", store.path, "Task"])
        #expect(export.status == 1)
        #expect(try Self.linesAfterHeader(export.output) == Self.exportedTaskLines)
        #expect(export.errors.hasPrefix(Self.nonRecordKeysMessage(store.path)), "\(export.errors)")

        let counted = TemporaryStore()
        try Sample.makeStore(at: counted.path)
        try Self.setRecordedEntries(20_000, at: counted.path)
        let mismatch = try BinarySmokeTests.run(["list", counted.path, "Task"])
        #expect(
            mismatch
                == RunResult(
                    status: 1, output: Self.taskLines.joined(),
                    errors: Self.entriesMessage(counted.path, recorded: "20,000", read: "4")))
    }
}
