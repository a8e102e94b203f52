import Foundation
import KVStore
import Testing

/// The library bugs the mixed model-based test (``ReferenceModelBasedTests``) found, each in its smallest form and
/// marked as a known issue until it is fixed: then `withKnownIssue` fails, the marking goes, and the run's
/// `includesKnownIssues` paths can be made the default (`KVSTORE_REFMODEL_KNOWN_ISSUES=1` runs them now).
@Suite struct ReferenceModelBasedKnownIssueTests {
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

    /// Bug: `ModelContext.delete(_:)` of an object inserted and not saved takes it out of the tracked objects
    /// (`tracked.remove`) but leaves the `.insert` that an earlier fetch recorded for it in the pending changes
    /// (`recordChanges(of:)`): later fetches still return it, `hasChanges` stays true, and `save()` writes it.
    @Test func anInsertedObjectDeletedAfterAFetchIsNeitherFetchedNorSaved() throws {
        try withContainer(RefProject.self) { container throws in
            let context = ModelContext(container)
            let task = RefTask(title: "inserted")
            context.insert(task)
            #expect(try context.fetch(FetchDescriptor<RefTask>()).count == 1)
            context.delete(task)
            #expect(try context.model(for: task.id, as: RefTask.self) == nil)
            withKnownIssue("the delete leaves the insert a fetch recorded in the pending changes") {
                #expect(try context.fetch(FetchDescriptor<RefTask>()).isEmpty)
                #expect(!context.hasChanges)
                try context.save()
                #expect(try ModelContext(container).fetchCount(FetchDescriptor<RefTask>()) == 0)
            }
        }
    }

    /// Bug: appending to a derived to-many list (`project.tasks`, `tag.tasks`) an object it already holds lists the
    /// object twice: `RelationshipUpdate.setDerived` keeps the assigned array, duplicate included, as the list until
    /// the next relationship change. The stored side does not change, and the many-to-many side (`task.tags`) stays
    /// right.
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
            withKnownIssue("the derived list keeps the assigned array with its duplicate") {
                #expect(project.tasks.count == 1)
                #expect(tag.tasks.count == 1)
            }
            #expect(!context.hasChanges)
        }
    }

    /// Bug: a derived to-many list that was assigned or appended to reads in the order it was assigned, and after any
    /// relationship change elsewhere in the context in ID order (the order it reads in from the store): the same
    /// list changes order with no change to it.
    @Test func aDerivedListKeepsItsOrderUntilItChanges() throws {
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
            withKnownIssue("the assigned array is the list until the next relationship change") {
                #expect(assigned == afterAnUnrelatedInsert)
            }
        }
    }

    /// Bug: `hasChanges` counts the pending changes a fetch recorded for tracked objects, so an object changed, fetched
    /// and changed back to its fetched values reads as a change until the next fetch of its type records it again.
    @Test func anObjectChangedBackAfterAFetchIsNoChange() throws {
        try withContainer(RefProject.self) { container in
            let ids = try seed(container)
            let context = ModelContext(container)
            let task = try #require(try context.model(for: ids.task, as: RefTask.self))
            task.title = "changed"
            _ = try context.fetch(FetchDescriptor<RefTask>())
            task.title = "in the project"
            withKnownIssue("hasChanges reads the pending changes the fetch recorded") {
                #expect(!context.hasChanges)
            }
            _ = try context.fetch(FetchDescriptor<RefTask>())
            #expect(!context.hasChanges)
        }
    }

    /// Bug: objects a context fetches after `delete(_:)` of their parent or tag and before `save()`, and that the app
    /// keeps, miss after the save what the store's delete rule did to them: `didSave` takes every held object as
    /// stored as it is. A task the cascade deleted still reads through `model(for:)`, a task the nullify changed
    /// keeps the tag's ID, and the next save of that task, after any change, fails with `missingReference`.
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
            withKnownIssue("the save keeps the held objects as they were, not as the rules left them") {
                #expect(try context.model(for: ids.task, as: RefTask.self) == nil)
                #expect(tagged.$tags.ids.isEmpty)
                tagged.title = "renamed"
                try context.save()
            }
            let fresh = ModelContext(container)
            #expect(try fresh.model(for: ids.tagged, as: RefTask.self)?.$tags.ids == [])
            withExtendedLifetime(fetched) {}
        }
    }
}
