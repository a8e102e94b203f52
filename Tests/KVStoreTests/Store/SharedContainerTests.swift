import Foundation
import Testing

@testable import KVStore

/// Several containers of one store in one process: they share one LMDB environment, and each works, closes and
/// grows on its own.
@Suite struct SharedContainerTests {
    /// A model with enough indexes that its container needs more tables than a small schema reserves.
    struct Wide: Model, Equatable {
        var id = UUID.timeOrdered()
        var title: String

        static let entity = Entity<Wide>(indexes: (0..<150).map { .index(\.title, name: "title\($0)") })
    }

    @Test func closingOneContainerLeavesTheOthersWorking() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let first = try ModelContainer(for: Project.self, configuration: configuration)
        let second = try ModelContainer(for: Project.self, configuration: configuration)
        let kept = Project(name: "kept")
        try first.write { txn in try txn.insert(kept) }
        try first.close()
        #expect(throws: KVStoreError.closed) { try first.read { txn in try txn.model(for: kept.id, as: Project.self) } }
        #expect(throws: KVStoreError.closed) { try ModelContext(first).fetch(FetchDescriptor<Project>()) }
        let added = Project(name: "added")
        try second.write { txn in try txn.insert(added) }
        #expect(try ModelContext(second).fetchCount(FetchDescriptor<Project>()) == 2)
        try second.close()
        let reopened = try ModelContainer(for: Project.self, configuration: configuration)
        defer { try? reopened.close() }
        #expect(
            try ModelContext(reopened).fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.name)])) == [
                added, kept,
            ])
    }

    @Test func aLaterContainerWithALargerSchemaGetsItsTables() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let small = try ModelContainer(for: Project.self, configuration: configuration)
        defer { try? small.close() }
        let project = Project(name: "before")
        try small.write { txn in try txn.insert(project) }
        // 1 + 150 tables for Wide, more than the 128 slots the first container's environment reserved.
        let large = try ModelContainer(for: Project.self, Wide.self, configuration: configuration)
        defer { try? large.close() }
        let wide = Wide(title: "indexed everywhere")
        try large.write { txn in try txn.insert(wide) }
        let after = Project(name: "after")
        try small.write { txn in try txn.insert(after) }
        #expect(try ModelContext(large).fetchCount(FetchDescriptor<Project>()) == 2)
        #expect(try ModelContext(small).fetchCount(FetchDescriptor<Project>()) == 2)
        let title = wide.title
        let found = try ModelContext(large).fetch(FetchDescriptor<Wide>(predicate: #Predicate { $0.title == title }))
        #expect(found == [wide])
        #expect(
            try ModelContext(large).explain(FetchDescriptor<Wide>(predicate: #Predicate { $0.title == title }))
                .hasPrefix("index title"))
    }
}
