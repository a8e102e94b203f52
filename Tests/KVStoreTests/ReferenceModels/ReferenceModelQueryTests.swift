import Foundation
import Testing

@testable import KVStore

/// Predicates through a reference model's to-one property read the relationship's index, as a struct's `UUID?` field
/// does.
@Suite struct ReferenceModelQueryTests {
    /// Two projects with two tasks each, and one task in none.
    private func seed(_ context: ModelContext) throws -> (RefProject, RefProject) {
        let (launch, other) = (RefProject(name: "Launch"), RefProject(name: "Other"))
        for (title, project) in [("a", launch), ("b", launch), ("c", other), ("d", other)] {
            context.insert(RefTask(title: title, project: project))
        }
        context.insert(RefTask(title: "loose"))
        try context.save()
        return (launch, other)
    }

    @Test func theRelatedModelsIDReadsTheIndex() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            let (launch, other) = try seed(context)
            let projectID = launch.id
            let ofLaunch = FetchDescriptor<RefTask>(
                predicate: #Predicate { $0.project?.id == projectID }, sortBy: [SortDescriptor(\.title)])
            #expect(try context.explain(ofLaunch) == "index project: 1 key")
            #expect(try context.fetch(ofLaunch).map(\.title) == ["a", "b"])
            #expect(try ModelContext(container).fetch(ofLaunch).map(\.title) == ["a", "b"])
            // Unsaved moves count.
            let moved = try #require(other.tasks.first)
            moved.project = launch
            #expect(try context.fetch(ofLaunch).map(\.title) == ["a", "b", "c"])
            #expect(try context.fetchCount(ofLaunch) == 3)
        }
    }

    @Test func aNilToOneReadsTheIndex() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            let (launch, _) = try seed(context)
            let loose = FetchDescriptor<RefTask>(predicate: #Predicate { $0.project == nil })
            #expect(try context.explain(loose) == "index project: 1 key")
            #expect(try context.fetch(loose).map(\.title) == ["loose"])
            launch.tasks[0].project = nil
            #expect(try context.fetch(loose).map(\.title).sorted() == ["a", "loose"])
        }
    }

    @Test func aComparisonWithARelatedObjectReadsTheIndex() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            let (_, other) = try seed(context)
            let ofOther = FetchDescriptor<RefTask>(
                predicate: #Predicate { $0.project == other && !$0.isDone }, sortBy: [SortDescriptor(\.title)])
            #expect(try context.explain(ofOther) == "index project: 1 key")
            #expect(try context.fetch(ofOther).map(\.title) == ["c", "d"])
        }
    }

    @Test func otherOptionalChainsScanAndStillMatch() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            _ = try seed(context)
            let byName = FetchDescriptor<RefTask>(
                predicate: #Predicate { $0.project?.name == "Other" }, sortBy: [SortDescriptor(\.title)])
            #expect(try context.explain(byName) == "scan")
            #expect(try context.fetch(byName).map(\.title) == ["c", "d"])
        }
    }

    /// A held object the store does not offer (changed in memory to match the indexed part) is evaluated with its
    /// relationship read, which loads the related object into the context while the fetch goes through its objects.
    @Test func aHeldObjectChangedToMatchReadsItsRelationshipDuringTheFetch() throws {
        try withContainer(RefProject.self) { container in
            _ = try seed(ModelContext(container))
            let context = ModelContext(container)
            let loose = try #require(try context.fetch(FetchDescriptor<RefTask>()).first { $0.title == "a" })
            loose.priority = 5
            let urgentInLaunch = FetchDescriptor<RefTask>(
                predicate: #Predicate { $0.priority >= 1 && $0.project?.name == "Launch" })
            #expect(try context.explain(urgentInLaunch).hasPrefix("index priority"))
            #expect(try context.fetch(urgentInLaunch).map(\.title) == ["a"])
        }
    }
}
