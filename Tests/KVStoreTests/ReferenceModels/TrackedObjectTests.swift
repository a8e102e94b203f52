import Foundation
import Testing

@testable import KVStore

/// A context tracks reference models: one object per model, saves of what changed, rollbacks to what was fetched,
/// and reads that see unsaved changes.
@Suite struct TrackedObjectTests {
    /// A store with one project of three tasks, saved by a context that is gone.
    private func seeded(_ container: ModelContainer) throws -> (project: UUID, tasks: [UUID]) {
        let context = ModelContext(container)
        let project = RefProject(name: "Launch")
        let tasks = (0..<3).map { RefTask(title: "task \($0)", project: project, priority: $0) }
        context.insert(project)
        for task in tasks { context.insert(task) }
        try context.save()
        return (project.id, tasks.map(\.id))
    }

    private func allTasks(_ context: ModelContext) throws -> [RefTask] {
        try context.fetch(FetchDescriptor<RefTask>(sortBy: [SortDescriptor(\.priority)]))
    }

    @Test func everyReadOfAModelGivesTheSameObjectInAContextAndAnotherInAnother() throws {
        try withContainer(RefProject.self) { container in
            let (projectID, taskIDs) = try seeded(container)
            let context = ModelContext(container)
            let fetched = try allTasks(context)
            #expect(fetched.map(\.id) == taskIDs)
            #expect(zip(fetched, try allTasks(context)).allSatisfy { $0 === $1 })
            #expect(try context.model(for: taskIDs[1], as: RefTask.self) === fetched[1])
            let project = try #require(try context.model(for: projectID, as: RefProject.self))
            #expect(fetched.allSatisfy { $0.project === project })
            #expect(try ModelContext(container).model(for: taskIDs[1], as: RefTask.self) !== fetched[1])
        }
    }

    @Test func aChangeThroughAReferenceNobodyKeepsIsSaved() throws {
        try withContainer(RefProject.self) { container in
            let (_, taskIDs) = try seeded(container)
            let context = ModelContext(container)
            #expect(!context.hasChanges)
            try allTasks(context)[0].isDone = true
            #expect(context.hasChanges)
            try context.save()
            #expect(!context.hasChanges)
            let reread = try #require(try ModelContext(container).model(for: taskIDs[0], as: RefTask.self))
            #expect(reread.isDone)
        }
    }

    @Test func aSaveWritesOnlyTheObjectsThatChanged() throws {
        try withContainer(RefProject.self) { container in
            let (_, taskIDs) = try seeded(container)
            let context = ModelContext(container)
            let tasks = try allTasks(context)
            // Another context renames the second task; this one changes only the first, so its save must not write
            // the second back with the title it fetched.
            let other = ModelContext(container)
            try #require(try other.model(for: taskIDs[1], as: RefTask.self)).title = "renamed elsewhere"
            try other.save()
            tasks[0].title = "renamed here"
            try context.save()
            let reread = try allTasks(ModelContext(container))
            #expect(reread.map(\.title) == ["renamed here", "renamed elsewhere", "task 2"])
        }
    }

    @Test func aRollbackGivesTheSameObjectsTheirFetchedValuesBack() throws {
        try withContainer(RefProject.self) { container in
            let (projectID, taskIDs) = try seeded(container)
            let context = ModelContext(container)
            let tasks = try allTasks(context)
            tasks[0].title = "changed"
            tasks[0].priority = 99
            context.delete(tasks[1])
            let added = RefTask(title: "added")
            context.insert(added)
            #expect(context.hasChanges)
            context.rollback()
            #expect(!context.hasChanges)
            #expect(tasks[0].title == "task 0" && tasks[0].priority == 0)
            #expect(tasks[0].project?.id == projectID)
            let after = try allTasks(context)
            #expect(after.map(\.id) == taskIDs)
            #expect(zip(after, tasks).allSatisfy { $0 === $1 })
            try context.save()
            #expect(try allTasks(ModelContext(container)).map(\.title) == ["task 0", "task 1", "task 2"])
        }
    }

    @Test func fetchesAndCountsSeeUnsavedChanges() throws {
        try withContainer(RefProject.self) { container in
            _ = try seeded(container)
            let context = ModelContext(container)
            let open = FetchDescriptor<RefTask>(
                predicate: #Predicate { !$0.isDone }, sortBy: [SortDescriptor(\.priority)])
            let tasks = try context.fetch(open)
            #expect(tasks.count == 3)
            tasks[1].isDone = true
            #expect(try context.fetch(open).map(\.title) == ["task 0", "task 2"])
            #expect(try context.fetchCount(open) == 2)
            let added = RefTask(title: "added", priority: -1)
            context.insert(added)
            #expect(try context.fetch(open).first === added)
            context.delete(tasks[0])
            #expect(try context.fetch(open).map(\.title) == ["added", "task 2"])
            // An index answers the predicate exactly; the context's changes still count.
            let urgent = FetchDescriptor<RefTask>(predicate: #Predicate { $0.priority >= 1 })
            tasks[2].priority = 0
            #expect(try context.fetch(urgent).map(\.title) == ["task 1"])
            #expect(try ModelContext(container).fetchCount(urgent) == 2)
        }
    }

    @Test func aModelClassThatInheritsIsRefused() throws {
        let error = #expect(throws: KVStoreError.invalidModel) {
            try withContainer(InheritingNote.self) { _ in }
        }
        #expect(error?.message.contains("inherits from another class") == true)
    }
}

class BaseNote: Codable {
    var id = UUID.timeOrdered()
}

final class InheritingNote: BaseNote, PersistentModel {
    static let entity = Entity<InheritingNote>()
}

/// A chunked insert of reference models saves every chunk and lets its objects go.
@Suite struct ChunkedReferenceInsertTests {
    final class Weak: @unchecked Sendable {
        // @unchecked: only the test's thread touches it.
        var objects: [() -> AnyObject?] = []
    }

    @Test func eachChunkIsSavedAndReleased() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            let made = Weak()
            var progress: [Int] = []
            let tasks = (0..<25).lazy.map { number -> RefTask in
                let task = RefTask(title: "task \(number)", priority: number)
                made.objects.append { [weak task] in task }
                return task
            }
            let saved = try context.insert(contentsOf: tasks, chunkSize: 10) { progress.append($0) }
            #expect(saved == 25)
            #expect(progress == [10, 20, 25])
            #expect(made.objects.count == 25)
            #expect(made.objects.allSatisfy { $0() == nil })
            #expect(!context.hasChanges)
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<RefTask>()) == 25)
        }
    }

    @Test func aFailingChunkSaysWhatWasCommittedAndStaysPending() throws {
        try withContainer(UniqueLabel.self) { container throws in
            let context = ModelContext(container)
            let labels = (0..<15).map { UniqueLabel(name: $0 == 12 ? "label 3" : "label \($0)") }
            let error = #expect(throws: KVStoreError.uniqueViolation) {
                try context.insert(contentsOf: labels, chunkSize: 5)
            }
            #expect(error?.committedCount == 10)
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<UniqueLabel>()) == 10)
            #expect(context.hasChanges)
            context.rollback()
            #expect(!context.hasChanges)
            #expect(throws: KVStoreError.invalidModel) { try context.insert(contentsOf: labels, chunkSize: 0) }
        }
    }
}

final class UniqueLabel: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String

    init(name: String) {
        self.name = name
    }

    static let entity = Entity<UniqueLabel>(indexes: [.unique(\.name)])
}

/// Unique upserts and deletes by ID with reference models.
@Suite struct ReferenceModelUpsertTests {
    @Test func anInsertThatMergesLeavesTheContextAndTheStoredModelTakesItsValues() throws {
        try withContainer(UpsertLabel.self) { container throws in
            let first = ModelContext(container)
            let stored = UpsertLabel(name: "red", uses: 1)
            first.insert(stored)
            try first.save()

            let context = ModelContext(container)
            let again = UpsertLabel(name: "red", uses: 5)
            context.insert(again)
            let result = try context.save()
            #expect(result.storedID(of: again.id) == stored.id)
            let labels = try context.fetch(FetchDescriptor<UpsertLabel>())
            #expect(labels.map(\.id) == [stored.id])
            #expect(labels.first !== again)
            #expect(labels.first?.uses == 5)
            #expect(!context.hasChanges)
        }
    }

    @Test func deletingAnotherObjectOfAModelDeletesTheContextsOne() throws {
        try withContainer(UpsertLabel.self) { container throws in
            let context = ModelContext(container)
            let label = UpsertLabel(name: "blue", uses: 0)
            context.insert(label)
            try context.save()
            let copy = try #require(try container.read { txn in try txn.model(for: label.id, as: UpsertLabel.self) })
            #expect(copy !== label)
            context.delete(copy)
            #expect(try context.fetch(FetchDescriptor<UpsertLabel>()).isEmpty)
            try context.save()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<UpsertLabel>()) == 0)
        }
    }
}

final class UpsertLabel: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String
    var uses: Int

    init(name: String, uses: Int) {
        self.name = name
        self.uses = uses
    }

    static let entity = Entity<UpsertLabel>(indexes: [.unique(\.name, onConflict: .update)])
}
