import Foundation
import KVStore
import Testing

/// The smallest forms of the failures the mixed model-based test (``ReferenceModelBasedTests``) found in reference
/// models, kept as regression tests.
@Suite struct ReferenceModelRegressionTests {
    /// Saves a project with one task, and a tag on a second task outside it.
    private func seed(_ container: ModelContainer) throws -> (project: UUID, task: UUID, tag: UUID, tagged: UUID) {
        let context = ModelContext(container)
        let project = RefProject(name: "Launch")
        let task = RefTask(title: "in the project", project: project)
        let tag = RefTag(name: "red")
        let tagged = RefTask(title: "tagged")
        tagged.tags = [tag]
        context.insert(task)
        context.insert(tagged)
        try context.save()
        return (project.id, task.id, tag.id, tagged.id)
    }

    /// An object inserted and deleted before any save leaves no trace, even when a fetch ran between the insert and the
    /// delete: later fetches do not return it, `hasChanges` is false and `save()` writes nothing. The delete used to
    /// leave in the pending changes the insert that the fetch had recorded.
    @Test func anInsertedObjectDeletedAfterAFetchIsNeitherFetchedNorSaved() throws {
        try withContainer(RefProject.self) { container throws in
            let context = ModelContext(container)
            let task = RefTask(title: "inserted")
            context.insert(task)
            #expect(try context.fetch(FetchDescriptor<RefTask>()).count == 1)
            context.delete(task)
            #expect(try context.model(for: task.id, as: RefTask.self) == nil)
            #expect(try context.fetch(FetchDescriptor<RefTask>()).isEmpty)
            #expect(!context.hasChanges)
            try context.save()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<RefTask>()) == 0)
        }
    }

    /// Appending to a derived to-many list (`project.tasks`, `tag.tasks`) an object it already holds changes nothing:
    /// the list holds the object once and the context has no changes. The list used to keep the assigned array,
    /// duplicate included.
    @Test func appendingAnObjectADerivedListHoldsListsItOnce() throws {
        try withContainer(RefProject.self) { container in
            let ids = try seed(container)
            let context = ModelContext(container)
            let project = try #require(try context.model(for: ids.project, as: RefProject.self))
            let task = try #require(try context.model(for: ids.task, as: RefTask.self))
            let tag = try #require(try context.model(for: ids.tag, as: RefTag.self))
            let tagged = try #require(try context.model(for: ids.tagged, as: RefTask.self))
            project.tasks.append(task)
            tag.tasks.append(tagged)
            #expect(tagged.tags.count == 1)
            #expect(project.tasks.count == 1)
            #expect(tag.tasks.count == 1)
            #expect(!context.hasChanges)
        }
    }

    /// A derived to-many list reads in ID order from the moment it is assigned, and keeps that order through
    /// unrelated changes in the context. It used to read in the assigned order until the next relationship change,
    /// then in ID order.
    @Test func anAssignedDerivedListReadsInIDOrder() throws {
        try withContainer(RefProject.self) { container in
            let ids = try seed(container)
            let context = ModelContext(container)
            let project = try #require(try context.model(for: ids.project, as: RefProject.self))
            let older = try #require(try context.model(for: ids.task, as: RefTask.self))
            let newer = RefTask(title: "newer")
            context.insert(newer)
            project.tasks = [newer, older]
            let assigned = project.tasks.map(\.title)
            context.insert(RefTag(name: "unrelated"))
            let afterAnUnrelatedInsert = project.tasks.map(\.title)
            #expect(afterAnUnrelatedInsert == ["in the project", "newer"])
            #expect(assigned == afterAnUnrelatedInsert)
        }
    }

    /// An object changed and changed back to its stored values is no change, whether or not a fetch ran between the
    /// two changes. `hasChanges` used to count the change the fetch recorded until the next fetch of the type.
    @Test func anObjectChangedBackAfterAFetchIsNoChange() throws {
        try withContainer(RefProject.self) { container in
            let ids = try seed(container)
            let context = ModelContext(container)
            let task = try #require(try context.model(for: ids.task, as: RefTask.self))
            task.title = "changed"
            _ = try context.fetch(FetchDescriptor<RefTask>())
            task.title = "in the project"
            #expect(!context.hasChanges)
            _ = try context.fetch(FetchDescriptor<RefTask>())
            #expect(!context.hasChanges)
        }
    }

    /// Objects a context fetches between `delete(_:)` of their parent or tag and `save()`, and that the app keeps,
    /// show after the save what the store's delete rules did to them: a task the cascade deleted no longer reads, a
    /// task the nullify changed no longer holds the tag's ID, and the next save of that task succeeds. The save used
    /// to take every held object as stored as it was, so the next save failed with `missingReference`.
    @Test func objectsFetchedBetweenADeleteAndItsSaveTakeTheStoresRule() throws {
        try withContainer(RefProject.self) { container in
            let ids = try seed(container)
            let context = ModelContext(container)
            context.delete(try #require(try context.model(for: ids.project, as: RefProject.self)))
            context.delete(try #require(try context.model(for: ids.tag, as: RefTag.self)))
            // The rules reach the tasks the context did not hold at the delete as it saves, as documented; the
            // objects fetched now are kept, as a list on screen keeps them.
            let fetched = try context.fetch(FetchDescriptor<RefTask>())
            #expect(fetched.count == 2)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<RefTask>()).map(\.title) == ["tagged"])
            let tagged = try #require(try context.model(for: ids.tagged, as: RefTask.self))
            #expect(tagged.tags.isEmpty)
            #expect(try context.model(for: ids.task, as: RefTask.self) == nil)
            #expect(tagged.$tags.ids.isEmpty)
            tagged.title = "renamed"
            try context.save()
            let fresh = ModelContext(container)
            let stored = try #require(try fresh.model(for: ids.tagged, as: RefTask.self))
            #expect(stored.$tags.ids == [])
            #expect(stored.title == "renamed")
            withExtendedLifetime(fetched) {}
        }
    }
}
