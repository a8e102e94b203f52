import Foundation
import LMDB
import Testing

@testable import KVStore

/// The durability levels: each opens the store with its LMDB flags and keeps every commit; one store in one process
/// commits at the strongest level its containers asked for; `sync()` flushes, and refuses a closed container.
@Suite struct DurabilityTests {
    @Test(arguments: Durability.allCases)
    func eachLevelCommitsWithItsFlagsAndKeepsEveryCommit(_ level: Durability) throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: level)
        #expect(configuration.durability == level)
        let saved = Project(name: "saved at \(level)")
        do {
            let container = try ModelContainer(for: Project.self, configuration: configuration)
            #expect(container.durability == level)
            #expect(container.environment.syncOptions == level.environmentOptions)
            try container.write { txn in try txn.insert(saved) }
            try container.sync()
            try container.close()
        }
        let reopened = try ModelContainer(for: Project.self, configuration: configuration)
        defer { try? reopened.close() }
        #expect(try reopened.read { txn in try txn.model(for: saved.id, as: Project.self) } == saved)
    }

    @Test func theDefaultIsFullOnDiskAndOffInMemory() throws {
        #expect(ModelConfiguration(path: "/tmp/unused").durability == .full)
        #expect(ModelConfiguration(url: URL(fileURLWithPath: "/tmp/unused")).durability == .full)
        #expect(ModelConfiguration(isStoredInMemoryOnly: true).durability == .off)
        let container = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        #expect(container.durability == .off)
        try container.sync()
    }

    @Test func theLevelsNameThemselvesAsInCode() {
        #expect(Durability.allCases.map(\.description) == ["full", "normal", "off"])
    }

    @Test func aStoreInOneProcessCommitsAtTheStrongestLevelItsContainersAskedFor() throws {
        let directory = StoreDirectory()
        func open(_ level: Durability) throws -> ModelContainer {
            try ModelContainer(
                for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: level))
        }
        let off = try open(.off)
        #expect(off.durability == .off)
        let normal = try open(.normal)
        // The second container asked for more: both commit at its level, so that it gets what it asked for.
        #expect(normal.durability == .normal)
        #expect(off.durability == .normal)
        // A weaker container later never weakens it.
        let offAgain = try open(.off)
        #expect(offAgain.durability == .normal)
        let full = try open(.full)
        for container in [off, normal, offAgain, full] { #expect(container.durability == .full) }
        try full.write { txn in try txn.insert(Project(name: "committed at full")) }
        for container in [full, offAgain, normal, off] { try container.close() }
        // The last close closed the store: the next opener's level stands alone.
        let reopened = try open(.off)
        defer { try? reopened.close() }
        #expect(reopened.durability == .off)
        #expect(try reopened.read { txn in try txn.fetchCount(FetchDescriptor<Project>()) } == 1)
    }

    @Test func aReadOnlyContainerDoesNotRaiseTheLevelItNeverCommitsAt() throws {
        let directory = StoreDirectory()
        let writer = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
        defer { try? writer.close() }
        try writer.write { txn in try txn.insert(Project(name: "p")) }
        var configuration = ModelConfiguration(path: directory.path)
        configuration.isReadOnly = true
        #expect(configuration.durability == .full)
        let reader = try ModelContainer(for: Project.self, configuration: configuration)
        defer { try? reader.close() }
        #expect(writer.durability == .off)
        #expect(try reader.read { txn in try txn.fetchCount(FetchDescriptor<Project>()) } == 1)
    }

    @Test func theStrongerLevelSurvivesTheStoreReopeningForMoreTables() throws {
        let directory = StoreDirectory()
        let narrow = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
        defer { try? narrow.close() }
        let full = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: .full))
        defer { try? full.close() }
        // 150 indexes need more table slots than the first container reserved: the environment reopens with them.
        let wide = try ModelContainer(
            for: SharedContainerTests.Wide.self,
            configuration: ModelConfiguration(path: directory.path, durability: .off))
        defer { try? wide.close() }
        try wide.write { txn in try txn.insert(SharedContainerTests.Wide(title: "wide")) }
        for container in [narrow, full, wide] {
            #expect(container.durability == .full)
            #expect(container.environment.syncOptions == [])
        }
    }

    @Test func aStrongerOpenInsideATransactionOfTheStoreIsRefusedWithoutWaitingForever() throws {
        let directory = StoreDirectory()
        let off = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
        defer { try? off.close() }
        _ = try off.read { _ in
            // Raising the level waits for the store's transactions to end, and this thread is inside one.
            let error = #expect(throws: KVStoreError.storage) {
                try ModelContainer(
                    for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: .full))
            }
            #expect(
                error?.message == "The store at \(directory.path) cannot do this while the calling thread is inside "
                    + "one of its transactions (a read or write of one of its containers): end that transaction first")
        }
        #expect(off.durability == .off)
        let full = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: .full))
        defer { try? full.close() }
        #expect(off.durability == .full)
    }

    @Test func syncOfAClosedContainerThrowsClosed() throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
        try container.close()
        #expect(throws: KVStoreError.closed) { try container.sync() }
    }

    @Test func syncOfAReadOnlyContainerHasNothingToFlush() throws {
        let directory = StoreDirectory()
        do {
            let writer = try ModelContainer(for: Project.self, configuration: ModelConfiguration(path: directory.path))
            try writer.write { txn in try txn.insert(Project(name: "p")) }
            try writer.close()
        }
        var configuration = ModelConfiguration(path: directory.path)
        configuration.isReadOnly = true
        let reader = try ModelContainer(for: Project.self, configuration: configuration)
        defer { try? reader.close() }
        try reader.sync()
    }

    /// The deprecated spelling still means what it meant: `true` the full level, `false` none.
    @available(*, deprecated)
    @Test func theDeprecatedBoolMapsToFullAndOff() {
        #expect(ModelConfiguration(path: "/tmp/unused", isDurable: true).durability == .full)
        #expect(ModelConfiguration(path: "/tmp/unused", isDurable: false).durability == .off)
        #expect(ModelConfiguration(url: URL(fileURLWithPath: "/tmp/unused"), isDurable: false).durability == .off)
        var configuration = ModelConfiguration(path: "/tmp/unused", durability: .normal)
        #expect(!configuration.isDurable)
        configuration.isDurable = true
        #expect(configuration.durability == .full)
        configuration.isDurable = false
        #expect(configuration.durability == .off)
    }
}
