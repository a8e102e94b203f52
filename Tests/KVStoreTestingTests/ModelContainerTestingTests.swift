import Foundation
import KVStore
import KVStoreTesting
import Testing

/// `ModelContainer.testing`: an in-memory container with its fixtures saved, in one line.
@Suite struct ModelContainerTestingTests {
    @Test func theSeedIsSavedInAnInMemoryStore() throws {
        let project = Project(name: "Launch")
        let container = try ModelContainer.testing(Project.self, Task.self) { context in
            context.insert(project)
            context.insert(Task(title: "Plan", projectID: project.id))
            context.insert(Task(title: "Ship", projectID: project.id))
        }
        defer { try? container.close() }
        #expect(container.configuration.isStoredInMemoryOnly)
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Task>()) == 2)
        #expect(try context.model(for: project.id, as: Project.self)?.name == "Launch")
    }

    @Test func withoutASeedTheStoreIsEmptyAndHoldsTheTypesTheRelationshipsReach() throws {
        let container = try ModelContainer.testing(Project.self)
        defer { try? container.close() }
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Project>()) == 0)
        // Task and Tag come with Project's relationships.
        context.insert(Tag(label: "urgent"))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Tag>()) == 1)
    }

    @Test func eachContainerHasAStoreOfItsOwn() throws {
        let first = try ModelContainer.testing(Project.self) { $0.insert(Project(name: "A")) }
        let second = try ModelContainer.testing(Project.self) { $0.insert(Project(name: "A")) }
        defer {
            try? first.close()
            try? second.close()
        }
        #expect(try ModelContext(first).fetchCount(FetchDescriptor<Project>()) == 1)
        #expect(try ModelContext(second).fetchCount(FetchDescriptor<Project>()) == 1)
    }

    @Test func aSeedTheStoreRefusesThrows() {
        #expect(throws: KVStoreError.uniqueViolation) {
            _ = try ModelContainer.testing(Project.self) { context in
                context.insert(Project(name: "Twice"))
                context.insert(Project(name: "Twice"))
            }
        }
        #expect(throws: KVStoreError.missingReference) {
            _ = try ModelContainer.testing(Project.self) { context in
                context.insert(Task(title: "Orphan", projectID: UUID.timeOrdered()))
            }
        }
    }

    @Test func theObserverHearsTheSeed() throws {
        let recorder = RecordingObserver()
        let container = try ModelContainer.testing(Project.self, observer: recorder) { context in
            context.insert(Project(name: "Launch"))
        }
        defer { try? container.close() }
        #expect(recorder.commits.count == 1)
        #expect(recorder.changes.map(\.entity) == ["Project"])
    }
}
