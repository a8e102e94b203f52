import Foundation
import LMDB
import Testing

@testable import KVStore

private struct Entry: Model, Equatable {
    var id = UUID.timeOrdered()
    var text: String
    var rank: Int
    static let entity = Entity<Entry>(indexes: [.index(\.rank)])
}

/// A tmpfs mounted on a fresh directory, to fill a disk; unmounted and removed at the end. Needs root.
private struct SmallDisk: ~Copyable {
    let path: String

    init(size: Int) throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath()
        path = base.appendingPathComponent("kvstore-tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "mount tmpfs on \(path)"])
        }
    }

    func resize(_ size: Int) throws {
        guard try Self.run("/bin/mount", ["-o", "remount,size=\(size)", path]) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "remount \(path)"])
        }
    }

    deinit {
        _ = try? Self.run("/bin/umount", ["-l", path])
        rmdir(path)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Damaged files and full disks: a typed error that says what happened and what to do, never a crash, nothing
/// acknowledged lost.
@Suite struct DamageAndDiskTests {
    private static func makeStore(_ path: String, count: Int = 3000) throws {
        let container = try ModelContainer(
            for: Entry.self, configuration: ModelConfiguration(path: path, durability: .off))
        defer { try? container.close() }
        try container.write { txn in
            for index in 0..<count { try txn.insert(Entry(text: "entry \(index)", rank: index % 97)) }
        }
    }

    /// Overwrites page `page` of the store's data file with `bytes` from `offset` within the page.
    private static func damage(_ path: String, page: Int, at offset: Int = 0, with bytes: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path + "/data.mdb"))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(page * 4096 + offset))
        try handle.write(contentsOf: Data(bytes))
    }

    private static func rootPage(of table: String?, at path: String) throws -> Int {
        let report = try PageCheck.checkFile(path: path, options: PageCheck.Options(scope: .roots))
        return try #require(report.table(named: table)?.rootPage)
    }

    @Test(arguments: ["records/Entry", "index/Entry/rank", "catalog"])
    func aDamagedRootPageOfATableIsADamageErrorNamingItNotACrash(table: String) throws {
        let directory = StoreDirectory()
        try Self.makeStore(directory.path)
        let root = try Self.rootPage(of: table, at: directory.path)
        for pattern: [UInt8] in [Array(repeating: 0xFF, count: 64), Array(repeating: 0, count: 4096)] {
            try Self.damage(directory.path, page: root, with: pattern)
            let error = try #require(throws: KVStoreError.self) {
                try ModelContainer(
                    for: Entry.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
            }
            #expect(error == .damaged)
            #expect(error.description.contains("page \(root) of \(table)"), "\(error)")
            #expect(error.description.contains("kvtool check"))
        }
    }

    @Test func aDamagedRootOfTheMainTableIsADamageError() throws {
        let directory = StoreDirectory()
        try Self.makeStore(directory.path)
        let root = try Self.rootPage(of: nil, at: directory.path)
        try Self.damage(directory.path, page: root, at: 16, with: Array(repeating: 0xEE, count: 200))
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: Entry.self, configuration: ModelConfiguration(path: directory.path))
        }
        #expect(error == .damaged)
        #expect(error.description.contains("(main)"), "\(error)")
    }

    @Test func bothMetaPagesDamagedIsAClearError() throws {
        let directory = StoreDirectory()
        try Self.makeStore(directory.path, count: 10)
        try Self.damage(directory.path, page: 0, at: 16, with: Array(repeating: 0x5A, count: 64))
        try Self.damage(directory.path, page: 1, at: 16, with: Array(repeating: 0x5A, count: 64))
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: Entry.self, configuration: ModelConfiguration(path: directory.path))
        }
        #expect(error == .storage || error == .damaged)
        #expect(error.description.contains("not an LMDB environment") || error.description.contains("damaged"))
    }

    @Test func lmdbsPageErrorsReadAsDamageNamingTheTable() throws {
        let notFound = ModelContainer.mapped(
            LMDBError(
                code: LMDBError.pageNotFound.code, operation: "mdb_get", path: "/srv/store", table: "records/Task"))
        let failure = try #require(notFound as? KVStoreError)
        #expect(failure == .damaged)
        #expect(failure.description.contains("table 'records/Task'"))
        #expect(failure.description.contains("kvtool check /srv/store"))
        #expect(!failure.description.contains("migrate"))
        let corrupted = try #require(
            ModelContainer.mapped(LMDBError(code: LMDBError.corrupted.code, path: "/srv/store")) as? KVStoreError)
        #expect(corrupted == .damaged)
    }

    @Test func aFullDiskIsAFullDiskAndLosesNothingAcknowledged() throws {
        guard geteuid() == 0 else { return }
        let disk = try SmallDisk(size: 1 << 20)
        let path = disk.path + "/store"
        let configuration = ModelConfiguration(path: path, durability: .off, initialMapSize: 4 << 20)
        var acknowledged: [Entry] = []
        var failure: KVStoreError?
        do {
            let container = try ModelContainer(for: Entry.self, configuration: configuration)
            defer { try? container.close() }
            for index in 0..<10_000 {
                let batch = (0..<50).map {
                    Entry(text: String(repeating: "x", count: 200) + "\(index) \($0)", rank: $0)
                }
                do {
                    try container.write { txn in for entry in batch { try txn.insert(entry) } }
                    acknowledged += batch
                } catch let error as KVStoreError {
                    failure = error
                    break
                }
            }
            let error = try #require(failure)
            #expect(error == .diskFull, "\(error)")
            #expect(error.description.contains("full"))
            #expect(error.description.contains("nothing committed before it was lost"))
            // The container still reads everything it acknowledged.
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Entry>()) == acknowledged.count)
        }
        #expect(!acknowledged.isEmpty)
        // With room again, the store opens, has every acknowledged save, and takes writes.
        try disk.resize(16 << 20)
        let container = try ModelContainer(for: Entry.self, configuration: configuration)
        defer { try? container.close() }
        let stored = try ModelContext(container).fetch(FetchDescriptor<Entry>())
        #expect(Set(stored.map(\.id)) == Set(acknowledged.map(\.id)))
        try container.write { txn in try txn.insert(Entry(text: "after", rank: 1)) }
        #expect(try integrityErrors(at: path) == [])
    }

    @Test func aChunkedInsertSplitByItsBudgetStopsAtAFullDiskWithEveryCommittedTransactionKept() throws {
        guard geteuid() == 0 else { return }
        let disk = try SmallDisk(size: 1 << 20)
        let path = disk.path + "/store"
        var configuration = ModelConfiguration(path: path, durability: .off, initialMapSize: 4 << 20)
        // Every 256 models a transaction commits, so the disk fills in the middle of a chunk.
        configuration.chunkMemoryBudget = 0
        let entries = (0..<20_000).map {
            Entry(id: UUID(), text: String(repeating: "x", count: 200) + "\($0)", rank: $0)
        }
        var progress: [Int] = []
        let committed: Int
        do {
            let container = try ModelContainer(for: Entry.self, configuration: configuration)
            defer { try? container.close() }
            let error = try #require(throws: KVStoreError.self) {
                try ModelContext(container).insert(contentsOf: entries, chunkSize: 10_000) { progress.append($0) }
            }
            #expect(error == .diskFull, "\(error)")
            committed = try #require(error.committedCount)
            // What the progress acknowledged is what the error counts, a whole number of transactions of 256.
            #expect(committed == progress.last ?? 0)
            #expect(committed > 0 && committed.isMultiple(of: ModelContext.chunkBudgetInterval))
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Entry>()) == committed)
        }
        // With room again, the store has exactly the committed models: the first of each chunk in key order.
        try disk.resize(16 << 20)
        let container = try ModelContainer(for: Entry.self, configuration: configuration)
        defer { try? container.close() }
        let firstChunk = entries.prefix(10_000).sorted { $0.id.isOrdered(before: $1.id) }
        let stored = try ModelContext(container).fetch(FetchDescriptor<Entry>())
        #expect(Set(stored.map(\.id)) == Set(firstChunk.prefix(committed).map(\.id)))
        #expect(try integrityErrors(at: path) == [])
    }
}
