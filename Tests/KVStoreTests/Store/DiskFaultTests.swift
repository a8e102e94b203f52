import Foundation
import LMDB
import Testing

@testable import KVStore

/// A full disk or a failing device during a commit, injected with the LD_PRELOAD shim into a child process: the
/// error reaches the caller, nothing is reported committed, and the store reopens with every earlier commit.
@Suite(.enabled(if: FaultShim.compiler != nil, "needs a C compiler to build the fault shim"))
struct DiskFaultTests {
    /// The child's statuses besides ``FaultShim/expected``.
    enum Status {
        static let committed: Int32 = 10
        static let otherError: Int32 = 11
        static let shimFailedNothing: Int32 = 12
        static let setUpFailed: Int32 = 13
    }

    /// In the child: commits `kept` in one transaction, then arms the shim and writes 200 large values in another,
    /// whose commit must fail with `errno`.
    static func failingEnvironmentCommit(_ name: String, after: Int, errno: Int32, calls: FaultShim.Calls) -> Never {
        FaultShim.child(name) { store, arm, disarm in
            do {
                let environment = try Environment.open(path: store)
                let table = try environment.openTable(named: "t")
                try environment.write { txn in try txn.put(Array("kept".utf8), forKey: Array("second".utf8), in: table)
                }
                arm(after, errno, calls)
                do {
                    try environment.write { txn throws in
                        for index in 0..<200 {
                            try txn.put(
                                [UInt8](repeating: 7, count: 2000), forKey: Array("lost \(index)".utf8), in: table)
                        }
                    }
                } catch let error as LMDBError where error.code == errno {
                    return disarm() > 0 ? FaultShim.expected : Status.shimFailedNothing
                } catch {
                    FileHandle.standardError.write(Data("unexpected: \(error)\n".utf8))
                    return Status.otherError
                }
                return Status.committed
            } catch {
                return Status.setUpFailed
            }
        }
    }

    /// Makes the store with one commit, runs the child, then checks that the store holds both commits before the
    /// fault and nothing of the failed one, and still takes writes.
    static func checkEnvironment(
        _ name: String, child: @escaping @Sendable () async -> Void
    ) async throws {
        let workspace = try FaultShim.Workspace(name)
        do {
            let environment = try Environment.open(path: workspace.store)
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn in try txn.put(Array("kept".utf8), forKey: Array("first".utf8), in: table) }
            try environment.close()
        }
        await child()
        let environment = try Environment.open(path: workspace.store)
        defer { try? environment.close() }
        let table = try environment.openTable(named: "t")
        try environment.read { txn throws in
            #expect(try txn.count(of: table) == 2)
            #expect(try txn.value(forKey: Array("first".utf8), in: table) == Array("kept".utf8))
            #expect(try txn.value(forKey: Array("second".utf8), in: table) == Array("kept".utf8))
        }
        try environment.write { txn in try txn.put([1], forKey: Array("after".utf8), in: table) }
        #expect(try environment.read { txn in try txn.count(of: table) } == 3)
    }

    @Test func aFullDiskAtTheFirstWriteFailsTheCommit() async throws {
        try await Self.checkEnvironment("enospc-first") {
            await #expect(processExitsWith: .exitCode(FaultShim.expected)) {
                Self.failingEnvironmentCommit("enospc-first", after: 0, errno: ENOSPC, calls: .writes)
            }
        }
    }

    @Test func aFullDiskHalfwayThroughTheWritesFailsTheCommit() async throws {
        try await Self.checkEnvironment("enospc-later") {
            await #expect(processExitsWith: .exitCode(FaultShim.expected)) {
                Self.failingEnvironmentCommit("enospc-later", after: 3, errno: ENOSPC, calls: .writes)
            }
        }
    }

    @Test func anIOErrorWhileWritingFailsTheCommit() async throws {
        try await Self.checkEnvironment("eio-write") {
            await #expect(processExitsWith: .exitCode(FaultShim.expected)) {
                Self.failingEnvironmentCommit("eio-write", after: 1, errno: EIO, calls: .writes)
            }
        }
    }

    @Test func anIOErrorWhileSyncingFailsTheCommit() async throws {
        try await Self.checkEnvironment("eio-sync") {
            await #expect(processExitsWith: .exitCode(FaultShim.expected)) {
                Self.failingEnvironmentCommit("eio-sync", after: 0, errno: EIO, calls: .syncs)
            }
        }
    }

    @Test func aFullDiskDuringASaveThrowsADiskFullErrorAndKeepsEarlierSaves() async throws {
        let workspace = try FaultShim.Workspace("store-enospc")
        let first = Project(name: "first")
        do {
            let container = try ModelContainer(
                for: Project.self, Task.self, configuration: ModelConfiguration(path: workspace.store))
            let context = ModelContext(container)
            context.insert(first)
            try context.save()
            try container.close()
        }
        await #expect(processExitsWith: .exitCode(FaultShim.expected)) {
            FaultShim.child("store-enospc") { store, arm, disarm in
                do {
                    let container = try ModelContainer(
                        for: Project.self, Task.self, configuration: ModelConfiguration(path: store))
                    let context = ModelContext(container)
                    context.insert(Project(name: "second"))
                    try context.save()
                    arm(0, ENOSPC, .writes)
                    for index in 0..<300 { context.insert(Task(title: "lost \(index)")) }
                    context.insert(Project(name: "lost"))
                    do {
                        try context.save()
                    } catch let error as KVStoreError
                        where error == .diskFull && error.message.contains("is full")
                        && error.description.contains("No space left on device")
                    {
                        guard disarm() > 0 else { return Status.shimFailedNothing }
                        // The changes stay pending, for the caller to retry.
                        return context.hasChanges ? FaultShim.expected : Status.otherError
                    } catch {
                        FileHandle.standardError.write(Data("unexpected: \(error)\n".utf8))
                        return Status.otherError
                    }
                    return Status.committed
                } catch {
                    return Status.setUpFailed
                }
            }
        }
        let container = try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: workspace.store))
        defer { try? container.close() }
        let context = ModelContext(container)
        #expect(
            try context.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.name)])).map(\.name) == [
                "first", "second",
            ])
        #expect(try context.fetchCount(FetchDescriptor<Task>()) == 0)
        #expect(try context.model(for: first.id) == first)
        // The unique index agrees with the records: the lost name is free, the kept ones are not.
        context.insert(Project(name: "lost"))
        try context.save()
        context.insert(Project(name: "second"))
        #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
    }

    /// In the child: a store at `level` commits while every flush fails with EIO. At ``Durability/off`` a commit
    /// flushes nothing, so it succeeds, and ``ModelContainer/sync()`` then fails with a message that says the commits
    /// are not known to be on disk; at ``Durability/normal`` the commit flushes its data, so it fails.
    static func failingFlushes(_ name: String, level: Durability) -> Never {
        FaultShim.child(name) { store, arm, disarm in
            do {
                let container = try ModelContainer(
                    for: Project.self, configuration: ModelConfiguration(path: store, durability: level))
                arm(0, EIO, .syncs)
                let committed: Bool
                do {
                    try container.write { txn in try txn.insert(Project(name: "unflushed")) }
                    committed = true
                } catch let error as KVStoreError where error == .storage && error.message.contains("I/O error") {
                    committed = false
                }
                guard committed == (level == .off) else { return Status.otherError }
                guard level == .off else { return disarm() > 0 ? FaultShim.expected : Status.shimFailedNothing }
                do {
                    try container.sync()
                    return Status.committed
                } catch let error as KVStoreError
                    where error == .storage
                    && error.message.hasPrefix("Flushing the store at \(container.path) to disk failed")
                    && error.description.contains("EIO")
                {
                    guard disarm() > 0 else { return Status.shimFailedNothing }
                    // The commit itself stands, and a later flush that works puts it on disk.
                    try container.sync()
                    return try container.read { txn in try txn.fetchCount(FetchDescriptor<Project>()) } == 1
                        ? FaultShim.expected : Status.otherError
                }
            } catch {
                FileHandle.standardError.write(Data("unexpected: \(error)\n".utf8))
                return Status.setUpFailed
            }
        }
    }

    @Test func atDurabilityOffCommitsFlushNothingAndAFailedSyncSaysTheyAreNotOnDisk() async throws {
        let workspace = try FaultShim.Workspace("off-sync")
        await #expect(processExitsWith: .exitCode(FaultShim.expected)) {
            Self.failingFlushes("off-sync", level: .off)
        }
        #expect(FileManager.default.fileExists(atPath: workspace.store + "/data.mdb"))
    }

    @Test func atDurabilityNormalACommitFlushesItsDataAndFailsWithTheFlush() async throws {
        let workspace = try FaultShim.Workspace("normal-sync")
        await #expect(processExitsWith: .exitCode(FaultShim.expected)) {
            Self.failingFlushes("normal-sync", level: .normal)
        }
        #expect(FileManager.default.fileExists(atPath: workspace.store + "/data.mdb"))
    }

}
