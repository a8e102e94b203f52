import Foundation
import LMDB
import Testing

@testable import KVStore

@Suite struct StoreBadInputTests {
    @Test func aUniqueViolationNamesEverythingAndWritesNothing() throws {
        try withContainer(Project.self, Task.self) { container throws in
            let context = ModelContext(container)
            let first = Project(name: "Apollo")
            context.insert(first)
            try context.save()

            let task = Task(title: "not written either")
            let second = Project(name: "Apollo")
            context.insert(task)
            context.insert(second)
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .uniqueViolation)
            #expect(error.entity == "Project")
            #expect(error.field == "name")
            #expect(error.id == second.id)
            #expect(error.description.contains("'Apollo'"))
            #expect(error.description.contains(first.id.uuidString))
            #expect(context.hasChanges)  // the changes stay pending

            let fresh = ModelContext(container)
            #expect(try fresh.fetch(FetchDescriptor<Project>()) == [first])
            #expect(try fresh.model(for: task.id, as: Task.self) == nil)
        }
    }

    @Test func uniqueValuesMayMoveBetweenModelsAndBeKeptOnUpdate() throws {
        try withContainer(Project.self) { container throws in
            let context = ModelContext(container)
            var project = Project(name: "Gemini")
            context.insert(project)
            try context.save()
            project.createdAt = Date(timeIntervalSince1970: 0)
            context.insert(project)  // same name, same model
            try context.save()
            project.name = "Mercury"
            context.insert(project)
            try context.save()
            context.insert(Project(name: "Gemini"))  // the old name is free again
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<Project>()) == 2)
        }
    }

    @Test func twoModelsWithTheSameValueInOneSaveAreRefused() throws {
        try withContainer(Project.self) { container throws in
            let context = ModelContext(container)
            context.insert(Project(name: "Twin"))
            context.insert(Project(name: "Twin"))
            #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Project>()) == 0)
        }
    }

    @Test(arguments: [0, 1, 5, 17])
    func corruptRecordBytesThrowAnErrorNamingEntityAndID(keep: Int) throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            let task = Task(title: "will be damaged", projectID: UUID())
            let healthy = Task(title: "healthy")
            context.insert(task)
            context.insert(healthy)
            try context.save()
            let store = try container.store(for: Task.self)
            try container.environment.write { txn throws in
                let bytes = try #require(try withKey(task.id) { try txn.value(forKey: $0, in: store.records) })
                try withKey(task.id) { key throws in
                    try txn.put(
                        Array(bytes.prefix(keep)) + (keep == 17 ? [0xEE, 0xEE] : []), forKey: key, in: store.records)
                }
            }
            // The record's checksum no longer matches: damage, named with entity, ID and table, never data.
            let error = try #require(throws: KVStoreError.self) { try context.model(for: task.id, as: Task.self) }
            #expect(error == .damaged)
            #expect(error.entity == "Task")
            #expect(error.id == task.id)
            #expect(error.description.contains(task.id.uuidString))
            #expect(error.description.contains("table 'records/Task'"))
            #expect(!error.description.contains("migrate"))
            #expect(throws: KVStoreError.damaged) { try context.fetch(FetchDescriptor<Task>()) }
            #expect(throws: KVStoreError.damaged) {
                try context.models(for: [healthy.id, task.id], as: Task.self)
            }
            // The healthy record still reads.
            #expect(try context.model(for: healthy.id) == healthy)
        }
    }

    @Test func aClosedContainerThrowsAClearError() throws {
        let container = try ModelContainer(
            for: Task.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Task(title: "t"))
        try context.save()
        let path = container.path
        try container.close()
        #expect(!FileManager.default.fileExists(atPath: path))
        context.insert(Task(title: "after close"))
        let error = try #require(throws: KVStoreError.self) { try context.save() }
        #expect(error == .closed)
        #expect(error.description.contains("closed"))
        #expect(throws: KVStoreError.closed) { try context.fetch(FetchDescriptor<Task>()) }
        #expect(throws: KVStoreError.closed) { try context.model(for: UUID(), as: Task.self) }
        #expect(throws: KVStoreError.closed) {
            try container.read { txn throws in try txn.fetchCount(FetchDescriptor<Task>()) }
        }
    }

    @Test func aModelOutsideTheContainerIsReported() throws {
        try withContainer(Project.self) { container throws in
            let context = ModelContext(container)
            let error = try #require(throws: KVStoreError.self) { try context.fetch(FetchDescriptor<Task>()) }
            #expect(error == .unknownEntity)
            #expect(error.description.contains("ModelContainer(for:"))
        }
    }

    @Test func twoTypesWithOneEntityNameAreRefused() throws {
        struct Other: Model {
            var id: UUID
            static let entity = Entity<Other>(name: "Task")
        }
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: Task.self, Other.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        }
        #expect(error == .invalidModel)
    }

    @Test func aStorePathThatIsAFileIsReported() throws {
        let directory = StoreDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let file = directory.path + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: Task.self, configuration: ModelConfiguration(path: file))
        }
        #expect(error == .storage)
        #expect(error.description.contains("is a file"))
    }

    @Test func anOnDiskStoreIsCreatedWithItsDirectory() throws {
        let directory = StoreDirectory()
        let path = directory.path + "/nested/store"
        let container = try ModelContainer(for: Task.self, configuration: ModelConfiguration(path: path))
        defer { try? container.close() }
        #expect(FileManager.default.fileExists(atPath: path + "/data.mdb"))
        let mode = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
