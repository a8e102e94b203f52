import Foundation
import Testing

@testable import KVStore

/// SwiftData's spellings of a container: `configurations:` and `mainContext`.
@Suite struct MainContextTests {
    @MainActor @Test func mainContextIsOneContextOnTheMainActor() throws {
        let container = try ModelContainer(
            for: Task.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let task = Task(title: "pending")
        container.mainContext.insert(task)
        // The same context: the change is pending wherever the main context is used.
        #expect(container.mainContext === container.mainContext)
        #expect(container.mainContext.hasChanges)
        #expect(try ModelContext(container).model(for: task.id, as: Task.self) == nil)
        try container.mainContext.save()
        #expect(try ModelContext(container).model(for: task.id, as: Task.self) == task)
        try container.close()
    }

    @MainActor @Test func closeLetsTheMainContextGo() throws {
        let container = try ModelContainer(
            for: Task.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        weak var released: ModelContext?
        do {
            let context = container.mainContext
            context.insert(Task(title: "never saved"))
            released = context
        }
        #expect(released != nil)
        try container.close()
        #expect(released == nil)
        // A main context asked for after the close is a new one, and its reads say the container is closed.
        #expect(!container.mainContext.hasChanges)
        #expect(throws: KVStoreError.closed) { try container.mainContext.fetch(FetchDescriptor<Task>()) }
    }

    @Test func configurationsOpensTheStoreAtItsPath() throws {
        let directory = StoreDirectory()
        let url = URL(fileURLWithPath: directory.path).appendingPathComponent("notes.store")
        let container = try ModelContainer(for: Task.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        context.insert(Task(title: "kept"))
        try context.save()
        try container.close()
        #expect(FileManager.default.fileExists(atPath: url.appendingPathComponent("data.mdb").path))
        let reopened = try ModelContainer(for: Task.self, configurations: ModelConfiguration(url: url))
        #expect(try ModelContext(reopened).fetch(FetchDescriptor<Task>()).map(\.title) == ["kept"])
        try reopened.close()
    }
}
