import Foundation
import KVStore
import LMDB
import Testing

@testable import KVToolCore

/// `check` on damaged pages: it reads every page itself before LMDB does, reports the damage with its table, does not
/// read a damaged table through LMDB, and never crashes, whatever the bytes.
@Suite struct CheckDamageTests {
    /// A store with enough tasks that its tables have branch pages above their leaves.
    private static func makeDeepStore(at path: String) throws {
        let tasks = (0..<3000).map { index in
            Task(
                id: UUID.timeOrdered(), title: "task \(index) " + String(repeating: "x", count: 40),
                projectID: Sample.inbox.id)
        }
        try Sample.makeStore(at: path, tasks: tasks)
    }

    /// The numbers of the leaf pages of the file that are not the root of a table.
    private static func innerLeafPages(of path: String) throws -> [Int] {
        let report = try PageCheck.checkFile(path: path)
        let roots = Set(report.tables.compactMap(\.rootPage))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        return stride(from: 2, to: bytes.count / 4096, by: 1).filter { page in
            // The page header's flags, a little-endian UInt16 at offset 10: P_LEAF is 0x02.
            let flags = UInt16(bytes[page * 4096 + 10]) | UInt16(bytes[page * 4096 + 11]) << 8
            return flags & 0x02 != 0 && flags & 0x04 == 0 && !roots.contains(page)
        }
    }

    private static func damage(_ path: String, page: Int, offset: Int, bytes: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path + "/data.mdb"))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(page * 4096 + offset))
        try handle.write(contentsOf: Data(bytes))
    }

    @Test func aDamagedLeafPageIsReportedWithItsTableAndTheTableIsNotReadThroughLMDB() throws {
        let store = TemporaryStore()
        try Self.makeDeepStore(at: store.path)
        // Leaf pages below the roots, which opening does not read: some are in use, some free. Their node offsets,
        // after the 16-byte header, now point outside the page.
        let pages = try Self.innerLeafPages(of: store.path)
        try #require(!pages.isEmpty)
        for page in pages {
            try Self.damage(store.path, page: page, offset: 16, bytes: Array(repeating: 0xFF, count: 32))
        }
        let result = kvtool("check", store.path)
        #expect(result.status == 1, "\(result)")
        let lines = result.output.split(separator: "\n").map(String.init)
        let prefix = "error: page check: damage: page "
        // The first damaged page of a named table (free-list pages are damaged too, and belong to none).
        let pageLine = try #require(
            lines.first { $0.hasPrefix(prefix) && !$0.contains(" of (") }, "\(result.output)")
        let page = Int(pageLine.dropFirst(prefix.count).prefix { $0.isNumber }) ?? -1
        #expect(pages.contains(page))
        let table = String(pageLine.dropFirst(prefix.count).drop { $0 != " " }.dropFirst(4).prefix { $0 != ":" })
        #expect(table.contains("/Task"), "\(pageLine)")
        // Each entity with a damaged table is reported as not read further, the entity's own table first.
        #expect(
            lines.contains {
                $0.hasPrefix("error: Task: the table '")
                    && $0.hasSuffix("has damaged pages; its entries were not checked")
            }, "\(result.output)")
    }

    @Test func aDamagedRootPageMakesOtherCommandsRefuseToReadThroughIt() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let report = try PageCheck.checkFile(path: store.path)
        let root = try #require(report.table(named: "records/Task")?.rootPage)
        try Self.damage(store.path, page: root, offset: 16, bytes: Array(repeating: 0xFF, count: 32))
        let result = kvtool("count", store.path, "Task")
        #expect(result.status == 1)
        #expect(result.errors.contains("page \(root) of records/Task"), "\(result)")
        #expect(result.errors.contains("kvtool check"))
    }

    @Test func bothMetaPagesDamagedIsAStoreThatCannotBeRead() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Self.damage(store.path, page: 0, offset: 16, bytes: Array(repeating: 0x33, count: 48))
        try Self.damage(store.path, page: 1, offset: 16, bytes: Array(repeating: 0x33, count: 48))
        let result = kvtool("check", store.path)
        #expect(result.status == 2, "\(result)")
        #expect(result.errors.hasPrefix("Error: "))
    }

    @Test func aDamagedMetaMapSizeStillOpens() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        // mm_mapsize is the meta's second field, after the 16-byte page header and the magic and version words.
        for page in [0, 1] {
            try Self.damage(
                store.path, page: page, offset: 16 + 16, bytes: withUnsafeBytes(of: UInt64(1 << 55)) { Array($0) })
        }
        let count = kvtool("count", store.path, "Task")
        #expect(count.status == 0, "\(count)")
        #expect(count.output == "\(Sample.tasks.count)\n")
    }

    /// Found by the FuzzStoreCheck target: LMDB asserts on a table whose root is a meta page, and the check counted
    /// every record table and followed references into damaged tables.
    @Test func aTableWhoseRootIsAMetaPageIsNeitherCountedNorReferencedThroughLMDB() throws {
        let store = TemporaryStore()
        let container = try ModelContainer(
            for: Team.self, Member.self, configuration: ModelConfiguration(path: store.path, durability: .off))
        let team = Team(name: "Engines")
        try container.write { txn in
            try txn.insert(team)
            try txn.insert(Member(name: "Ada", teamID: team.id))
        }
        try container.close()
        // The table's record in the main table: the node's key, then the 48-byte MDB_db whose last field, md_root,
        // is 40 bytes in.
        let report = try PageCheck.checkFile(path: store.path)
        let main = try #require(report.table(named: nil)?.rootPage)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store.path + "/data.mdb"))
        let page = bytes[(main * 4096)..<((main + 1) * 4096)]
        let name = Data("records/Team".utf8)
        let key = try #require(page.range(of: name))
        try Self.damage(
            store.path, page: main, offset: key.upperBound - main * 4096 + 40, bytes: Array(repeating: 0, count: 8))
        let result = kvtool("check", store.path)
        #expect(result.status == 1, "\(result)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.hasPrefix("error: page check: damage: page \(main) of records/Team: ") },
            "\(result.output)")
        #expect(lines.contains("error: Team: the table 'records/Team' has damaged pages; its entries were not checked"))
        #expect(
            lines.contains(
                "warning: relationship Member.team: its references were not checked, as Team's record table has "
                    + "damaged pages"), "\(result.output)")
    }

    /// Found by the FuzzStoreCheck target: `size_t` counts come into Swift as `Int`, and a count past `Int.max` in a
    /// meta page trapped when the page check compared it with its own.
    @Test func aCountPastIntMaxInTheMetaPagesIsDamageNotATrap() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        // The main table's record is the second of the meta's two, after the page header, the magic, the version,
        // the address and the map size; md_entries is 32 bytes into it.
        for page in [0, 1] {
            try Self.damage(store.path, page: page, offset: 16 + 24 + 48 + 32, bytes: Array(repeating: 0xFF, count: 8))
        }
        let result = kvtool("check", store.path)
        #expect(result.status == 2, "\(result)")
        #expect(result.errors.contains("of (main)"), "\(result)")
        #expect(result.errors.hasSuffix("Nothing else of it can be checked; restore the store from a backup\n"))
    }

    @Test func randomDamageNeverCrashesTheBuiltBinary() throws {
        let store = TemporaryStore()
        try Self.makeDeepStore(at: store.path)
        let original = try Data(contentsOf: URL(fileURLWithPath: store.path + "/data.mdb"))
        var generator = SystemRandomNumberGenerator()
        var statuses: [Int32: Int] = [:]
        for _ in 0..<40 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[position] = UInt8.random(in: 0...255, using: &generator)
            }
            try bytes.write(to: URL(fileURLWithPath: store.path + "/data.mdb"))
            try? FileManager.default.removeItem(atPath: store.path + "/lock.mdb")
            let result = try BinarySmokeTests.run(["check", store.path])
            #expect([0, 1, 2].contains(result.status), "status \(result.status): \(result.errors)")
            statuses[result.status, default: 0] += 1
        }
        #expect(statuses.values.reduce(0, +) == 40)
    }
}

/// `check` beside work under way: a streamed external write and a migration are reported as under way, not as damage.
@Suite struct CheckWorkUnderWayTests {
    /// Hands out chunks until it has given `total` bytes, then waits until `release` is opened before it ends.
    final class Gate: @unchecked Sendable {
        // @unchecked Sendable: the semaphores are thread-safe.
        let staged = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
    }

    @Test func aStreamedWriteUnderWayIsNotDamage() async throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        let container = try ModelContainer(
            for: Photo.self, configuration: ModelConfiguration(path: store.path, durability: .off))
        defer { try? container.close() }
        let photo = try #require(
            try await container.read { txn in try txn.model(for: ExternalSample.photoID, as: Photo.self) })
        let gate = Gate()
        let chunk = Data(repeating: 0x5A, count: 1 << 20)
        let (source, continuation) = AsyncStream.makeStream(of: Data.self)
        Thread.detachNewThread {
            for _ in 0..<20 { continuation.yield(chunk) }
            gate.staged.signal()
            gate.release.wait()
            continuation.finish()
        }
        let writing = _Concurrency.Task { try await container.setData(for: \.image, of: photo, from: source) }
        // Waits without blocking a thread of the pool, which the write needs.
        while gate.staged.wait(timeout: .now()) == .timedOut {
            try await _Concurrency.Task.sleep(for: .milliseconds(5))
        }
        // The first 16 MiB batch is committed once the source has handed out more than that; wait for the commit.
        let environment = try Environment.open(path: store.path)
        defer { try? environment.close() }
        let staging = try environment.openTable(named: "staging/Photo")
        var staged = 0
        for _ in 0..<1000 where staged == 0 {
            try await _Concurrency.Task.sleep(for: .milliseconds(10))
            staged = try environment.read { txn in try txn.count(of: staging) }
        }
        #expect(staged == 1)
        let result = kvtool("check", store.path)
        gate.release.signal()
        _ = try await writing.value
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("staged chunks of the external value"), "\(result.output)")
        #expect(result.output.contains("which a writer is writing"), "\(result.output)")
        #expect(kvtool("check", store.path).output.hasPrefix("No problems"))
    }
}

/// A custom migration that stops half-way until the test lets it go on.
enum HaltingMigration {
    static let reached = DispatchSemaphore(value: 0)
    static let goOn = DispatchSemaphore(value: 0)

    enum V1: VersionedSchema {
        static let versionIdentifier = SchemaVersion(1, 0, 0)
        static let models: [any Model.Type] = [Entry.self]
        struct Entry: Model {
            var id = UUID.timeOrdered()
            var text: String
            static let entity = Entity<Entry>(name: "HaltEntry", indexes: [.index(\.text)])
        }
    }

    enum V2: VersionedSchema {
        static let versionIdentifier = SchemaVersion(2, 0, 0)
        static let models: [any Model.Type] = [Entry.self]
        struct Entry: Model {
            var id: UUID
            var text: String
            var length: Int
            static let entity = Entity<Entry>(name: "HaltEntry", indexes: [.index(\.text), .index(\.length)])
        }
    }

    enum Plan: SchemaMigrationPlan {
        static let schemas: [any VersionedSchema.Type] = [V1.self, V2.self]
        static let stages: [MigrationStage] = [
            .custom(
                fromVersion: V1.self, toVersion: V2.self,
                migrations: [
                    .transform(V1.Entry.self, to: V2.Entry.self) { old in
                        if old.text == "entry 25" {
                            reached.signal()
                            goOn.wait()
                        }
                        return V2.Entry(id: old.id, text: old.text, length: old.text.count)
                    }
                ])
        ]
        static let migrationChunkSize = 10
    }
}

extension CheckWorkUnderWayTests {
    @Test func aMigrationUnderWayIsNotDamage() throws {
        let store = TemporaryStore()
        do {
            let container = try ModelContainer(
                for: HaltingMigration.V1.self, configuration: ModelConfiguration(path: store.path))
            try container.write { txn in
                for index in 0..<60 { try txn.insert(HaltingMigration.V1.Entry(text: "entry \(index)")) }
            }
            try container.close()
        }
        let path = store.path
        let migrated = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let container = try? ModelContainer(
                for: HaltingMigration.V2.self, migrationPlan: HaltingMigration.Plan.self,
                configuration: ModelConfiguration(path: path))
            try? container?.close()
            migrated.signal()
        }
        HaltingMigration.reached.wait()
        let result = kvtool("check", store.path)
        HaltingMigration.goOn.signal()
        migrated.wait()
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("A schema migration is under way"), "\(result.output)")
        #expect(!result.output.contains("error:"), "\(result.output)")
        #expect(kvtool("check", store.path).output.hasPrefix("No problems"))
    }
}
