import Foundation
import LMDB
import Testing

@testable import KVStore

/// The engine's limits reached through the store, and stores the process may not write: each surfaces as a clear
/// error and leaves the store intact.
@Suite struct StoreFaultTests {
    /// A model with many indexes, to use up the environment's tables.
    /// A model whose entity name is longer than LMDB's longest key, the limit of table names.
    struct LongNamed: Model {
        var id = UUID.timeOrdered()

        static let entity = Entity<LongNamed>(name: String(repeating: "N", count: 600))
    }

    @Test func aFullMapAtTheMaximumSizeThrowsAndKeepsEarlierSaves() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(
            path: directory.path, durability: .off, initialMapSize: 256 << 10, maximumMapSize: 512 << 10)
        let kept = Project(name: "kept")
        do {
            let container = try ModelContainer(for: Project.self, Task.self, configuration: configuration)
            defer { try? container.close() }
            let context = ModelContext(container)
            context.insert(kept)
            try context.save()
            for index in 0..<5_000 { context.insert(Task(title: String(repeating: "x", count: 200) + "\(index)")) }
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .storage)
            #expect((error.cause as? LMDBError)?.code == LMDBError.mapFull.code)
            #expect(error.description.contains("maximum size of 524288 bytes"))
            #expect(context.hasChanges)
            context.rollback()
            context.insert(Task(title: "fits"))
            try context.save()
        }
        let container = try ModelContainer(for: Project.self, Task.self, configuration: configuration)
        defer { try? container.close() }
        let context = ModelContext(container)
        #expect(try context.fetch(FetchDescriptor<Project>()) == [kept])
        #expect(try context.fetch(FetchDescriptor<Task>()).map(\.title) == ["fits"])
    }

    @Test func aFailedSaveThenASuccessfulOneKeepTheFieldNamesDurable() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let task = Task(title: "saved after a failed save")
        do {
            let container = try ModelContainer(for: Project.self, Task.self, configuration: configuration)
            defer { try? container.close() }
            let context = ModelContext(container)
            context.insert(Project(name: "twin"))
            try context.save()
            // The first Task ever encoded interns its field names, in a transaction that a unique violation aborts.
            context.insert(Task(title: "never saved"))
            context.insert(Project(name: "twin"))
            #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
            context.rollback()
            context.insert(task)
            try context.save()
        }
        let container = try ModelContainer(for: Project.self, Task.self, configuration: configuration)
        defer { try? container.close() }
        #expect(try ModelContext(container).model(for: task.id) == task)
    }

    @Test func aFirstSaveThatGrowsTheMapKeepsTheFieldNamesDurable() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off, initialMapSize: 64 << 10)
        let tasks = (0..<2_000).map { Task(title: "task \($0) with a title that takes some room") }
        do {
            let container = try ModelContainer(for: Task.self, configuration: configuration)
            defer { try? container.close() }
            let context = ModelContext(container)
            for task in tasks { context.insert(task) }
            try context.save()
        }
        let container = try ModelContainer(for: Task.self, configuration: configuration)
        defer { try? container.close() }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Task>()) == tasks.count)
        #expect(try ModelContext(container).model(for: tasks[1_999].id) == tasks[1_999])
    }

    @Test func hugeIndexedStringsAreStoredFoundAndKeptUnique() throws {
        try withContainer(Project.self) { container throws in
            let context = ModelContext(container)
            let prefix = String(repeating: "p", count: 5_000)
            let first = Project(name: prefix + "1")
            let second = Project(name: prefix + "2")
            context.insert(first)
            context.insert(second)
            try context.save()
            let name = second.name
            #expect(try context.fetch(FetchDescriptor<Project>(predicate: #Predicate { $0.name == name })) == [second])
            context.insert(Project(name: prefix + "2"))
            #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
            context.rollback()
            #expect(try context.fetchCount(FetchDescriptor<Project>()) == 2)
        }
    }

    @Test func hugeRecordsAreStored() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            let task = Task(title: String(repeating: "t", count: 8 << 20))
            context.insert(task)
            try context.save()
            #expect(try context.model(for: task.id) == task)
        }
    }

    @Test func anEntityNameLongerThanATableNameMayBeIsRefused() throws {
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: LongNamed.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        }
        #expect(error == .storage || error == .invalidModel)
        #expect(error.description.contains("511") || error.description.contains("MDB_BAD_VALSIZE"))
    }

    @Test func readerSlotsRunOutAsAStorageError() throws {
        try withContainer(Task.self) { container throws in
            func nest(_ depth: Int) throws {
                guard depth > 0 else { return }
                try container.read { _ in try nest(depth - 1) }
            }
            let error = try #require(throws: KVStoreError.self) { try nest(200) }
            #expect(error == .storage)
            #expect((error.cause as? LMDBError)?.code == LMDBError.readersFull.code)
            try nest(10)
        }
    }

    @Test func storeFilesAreCreatedForTheOwnerOnly() throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(for: Task.self, configuration: ModelConfiguration(path: directory.path))
        defer { try? container.close() }
        for file in ["data.mdb", "lock.mdb"] {
            let mode = try FileManager.default.attributesOfItem(atPath: directory.path + "/" + file)[.posixPermissions]
            #expect(mode as? Int == 0o600, "\(file)")
        }
    }

    @Test func aStoreTheProcessMayNotWriteFailsClearly() async throws {
        let directory = StoreDirectory()
        let path = directory.path
        do {
            let container = try ModelContainer(for: Task.self, configuration: ModelConfiguration(path: path))
            let context = ModelContext(container)
            context.insert(Task(title: "kept"))
            try context.save()
            try container.close()
        }
        // Readable by everyone, writable by its owner (root) only.
        _ = chmod(path, 0o755)
        for file in ["data.mdb", "lock.mdb"] { _ = chmod(path + "/" + file, 0o644) }
        // Root ignores permissions, so the attempt runs in a child process that gives up root first.
        await #expect(processExitsWith: .success) { [path = path as String] in
            if getuid() == 0 {
                guard setgid(65534) == 0, setuid(65534) == 0 else { exit(2) }
            }
            do {
                _ = try ModelContainer(for: Task.self, configuration: ModelConfiguration(path: path))
                exit(3)
            } catch let error as KVStoreError where error == .storage && error.description.contains("Permission denied")
            {
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                exit(4)
            }
        }
        let container = try ModelContainer(for: Task.self, configuration: ModelConfiguration(path: path))
        defer { try? container.close() }
        #expect(try ModelContext(container).fetch(FetchDescriptor<Task>()).map(\.title) == ["kept"])
    }
}
