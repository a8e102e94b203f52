import Foundation
import Testing

@testable import KVStore

/// Every read through a context sees the store as last saved with that context's pending changes laid over it.
@Suite struct PendingChangeReadTests {
    /// A saved project with two saved tasks, and a second project.
    private func seeded(_ context: ModelContext) throws -> (ProjectC, ProjectC, [TaskC]) {
        let launch = ProjectC(name: "Launch")
        let other = ProjectC(name: "Other")
        let tasks = [TaskC(title: "a", projectID: launch.id), TaskC(title: "b", projectID: launch.id)]
        context.insert(launch)
        context.insert(other)
        for task in tasks { context.insert(task) }
        try context.save()
        return (launch, other, tasks)
    }

    @Test func childrenSeePendingInsertsMovesAndDeletes() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let (launch, other, tasks) = try seeded(context)
            let added = TaskC(title: "c", projectID: launch.id)
            context.insert(added)
            var moved = tasks[0]
            try context.modify(&moved) { $0.projectID = other.id }
            context.delete(tasks[1])

            let children = try context.children(of: [launch.id, other.id], through: \TaskC.projectID)
            #expect(children[launch.id] == [added])
            #expect(children[other.id] == [moved])

            // A fresh context sees only what was saved; the same context sees the same after its save.
            let fresh = try ModelContext(container).children(of: [launch.id, other.id], through: \TaskC.projectID)
            #expect(fresh[launch.id] == tasks)
            #expect(fresh[other.id] == nil)
            try context.save()
            #expect(try context.children(of: [launch.id, other.id], through: \TaskC.projectID) == children)
        }
    }

    @Test func childrenServedFromAPrefetchSeePendingChanges() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let (launch, _, tasks) = try seeded(context)
            var descriptor = FetchDescriptor<ProjectC>()
            descriptor.relationshipsToPrefetch = ["tasks"]
            _ = try context.fetch(descriptor)
            let added = TaskC(title: "c", projectID: launch.id)
            context.insert(added)
            var renamed = tasks[1]
            try context.modify(&renamed) { $0.title = "B" }
            context.delete(tasks[0])
            #expect(try context.children(of: [launch.id], through: \TaskC.projectID)[launch.id] == [renamed, added])
        }
    }

    @Test func manyToManyChildrenSeePendingChanges() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let (urgent, later) = (TagC(label: "urgent"), TagC(label: "later"))
            let tagged = TaskC(title: "tagged", tagIDs: [urgent.id])
            context.insert(urgent)
            context.insert(later)
            context.insert(tagged)
            try context.save()

            var retagged = tagged
            try context.modify(&retagged) { $0.tagIDs = [later.id, later.id] }
            let fresh = TaskC(title: "fresh", tagIDs: [urgent.id, later.id])
            context.insert(fresh)
            let children = try context.children(of: [urgent.id, later.id], through: \TaskC.tagIDs)
            #expect(children[urgent.id] == [fresh])
            #expect(children[later.id] == [retagged, fresh])
        }
    }

    @Test func relatedSeesPendingInsertsAndDeletes() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let (launch, other, tasks) = try seeded(context)
            var renamed = launch
            try context.modify(&renamed) { $0.name = "Liftoff" }
            context.delete(other)
            let newProject = ProjectC(name: "New")
            context.insert(newProject)
            let sources = tasks + [TaskC(title: "x", projectID: other.id), TaskC(title: "y", projectID: newProject.id)]
            let related = try context.related(sources, through: \.projectID, as: ProjectC.self)
            #expect(related == [launch.id: renamed, newProject.id: newProject])
        }
    }

    @Test func countsSeePendingChangesOnBothSidesOfThePredicate() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let (launch, other, tasks) = try seeded(context)
            let launchID: UUID? = launch.id
            let onLaunch = FetchDescriptor<TaskC>(predicate: #Predicate { $0.projectID == launchID })
            #expect(try context.fetchCount(onLaunch) == 2)
            try context.modify(TaskC.self, id: tasks[0].id) { $0.projectID = other.id }  // leaves the match
            context.insert(TaskC(title: "new", projectID: launch.id))  // joins it
            try context.modify(TaskC.self, id: tasks[1].id) { $0.title = "still here" }  // stays in it
            #expect(try context.fetchCount(onLaunch) == 2)
            #expect(try context.fetch(onLaunch).count == 2)
            context.delete(TaskC.self, id: tasks[1].id)
            #expect(try context.fetchCount(onLaunch) == 1)
            #expect(try context.fetchCount(FetchDescriptor<TaskC>()) == 2)
        }
    }

    @Test(arguments: [1, 2, 3, 100])
    func enumerateSeesPendingChangesInIDOrder(batchSize: Int) throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let stored = (0..<6).map { TaskC(title: "stored \($0)") }
            for task in stored { context.insert(task) }
            try context.save()
            // Random IDs fall between and around the stored ones.
            let inserted = (0..<5).map { TaskC(id: UUID(), title: "new \($0)") }
            for task in inserted { context.insert(task) }
            context.delete(stored[2])
            try context.modify(TaskC.self, id: stored[4].id) { $0.title = "changed" }

            var seen: [TaskC] = []
            try context.enumerate(FetchDescriptor<TaskC>(), batchSize: batchSize) { seen += $0 }
            let expected = try context.fetch(FetchDescriptor<TaskC>()).sorted { $0.id.isOrdered(before: $1.id) }
            #expect(seen == expected)
            #expect(seen.count == 10)
            #expect(seen.contains { $0.title == "changed" })
        }
    }
}

/// `modify` changes a model and records it in one step.
@Suite struct ModifyTests {
    @Test func modifyInPlaceIsSavedAndHasChangesTellsTheTruth() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            var task = TaskC(title: "draft")
            context.insert(task)
            try context.save()
            #expect(!context.hasChanges)
            try context.modify(&task) { $0.title = "final" }
            #expect(task.title == "final")
            #expect(context.hasChanges)
            try context.save()
            #expect(!context.hasChanges)
            #expect(try ModelContext(container).model(for: task.id, as: TaskC.self)?.title == "final")
        }
    }

    @Test func modifyByIDReadsThroughPendingChanges() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let task = TaskC(title: "unsaved")
            context.insert(task)
            let changed = try context.modify(TaskC.self, id: task.id) { $0.title += "!" }
            #expect(changed.title == "unsaved!")
            try context.modify(TaskC.self, id: task.id) { $0.title += "!" }
            try context.save()
            #expect(try context.model(for: task.id, as: TaskC.self)?.title == "unsaved!!")
        }
    }

    @Test func modifyOfAMissingOrDeletedModelIsModelNotFound() throws {
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            let missing = UUID()
            let error = #expect(throws: KVStoreError.modelNotFound) {
                try context.modify(TaskC.self, id: missing) { $0.title = "x" }
            }
            #expect(error?.message.contains("no TaskC \(missing) to modify") == true)
            let task = TaskC(title: "gone")
            context.insert(task)
            try context.save()
            context.delete(task)
            #expect(throws: KVStoreError.modelNotFound) { try context.modify(TaskC.self, id: task.id) { _ in } }
        }
    }

    @Test func modifyThatChangesTheIDOrThrowsChangesNothing() throws {
        struct Refused: Error {}
        try withContainer(ProjectC.self) { container throws in
            let context = ModelContext(container)
            var task = TaskC(title: "keep")
            let error = #expect(throws: KVStoreError.invalidModel) {
                try context.modify(&task) {
                    $0.id = UUID()
                    $0.title = "lost"
                }
            }
            #expect(error?.message.contains("must not change a model's ID") == true)
            #expect(throws: Refused.self) {
                try context.modify(&task) {
                    $0.title = "lost"
                    throw Refused()
                }
            }
            #expect(task.title == "keep")
            #expect(!context.hasChanges)
        }
    }
}
