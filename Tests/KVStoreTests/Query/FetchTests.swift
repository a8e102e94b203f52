import Foundation
import Testing

@testable import KVStore

@Suite struct FetchTests {
    /// 3 projects with 10 tasks each: task i of project p has priority i, is done when i is even, and is due on day
    /// 10·p + i.
    private func withTasks<R>(_ body: (ModelContext, [Project], [Task]) throws -> R) throws -> R {
        try withContainer(Project.self, Task.self) { container throws in
            let context = ModelContext(container)
            let projects = (0..<3).map { Project(name: "P\($0)") }
            var tasks: [Task] = []
            for (p, project) in projects.enumerated() {
                context.insert(project)
                for i in 0..<10 {
                    let day = Date(timeIntervalSince1970: Double(10 * p + i) * 86_400)
                    tasks.append(
                        Task(title: "P\(p)-T\(i)", isDone: i % 2 == 0, dueDate: day, projectID: project.id, priority: i)
                    )
                }
            }
            for task in tasks { context.insert(task) }
            context.insert(Task(title: "orphan", dueDate: nil, projectID: nil, priority: 100))
            try context.save()
            return try body(ModelContext(context.container), projects, tasks)
        }
    }

    @Test func equalityOnAnIndexedAttributeUsesTheIndex() throws {
        try withTasks { context, projects, _ throws in
            let id = projects[1].id
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == id })
            #expect(try context.explain(descriptor).contains("index projectID"))
            let titles = try context.fetch(descriptor).map(\.title)
            #expect(titles == (0..<10).map { "P1-T\($0)" })
            #expect(try context.fetchCount(descriptor) == 10)
            #expect(try context.fetchIdentifiers(descriptor).count == 10)
        }
    }

    /// The descriptor keeps its predicate's expression for the planner: a predicate changed or removed after the
    /// descriptor was made is the one every fetch, count and identifier list goes by.
    @Test func aPredicateChangedOrRemovedAfterTheDescriptorWasMadeIsTheOneFetchedBy() throws {
        try withTasks { context, projects, tasks throws in
            let (first, second) = (projects[0].id, projects[2].id)
            var descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == first })
            #expect(try context.fetch(descriptor).map(\.title) == (0..<10).map { "P0-T\($0)" })
            descriptor.predicate = #Predicate { $0.projectID == second }
            #expect(try context.fetch(descriptor).map(\.title) == (0..<10).map { "P2-T\($0)" })
            #expect(try context.fetchCount(descriptor) == 10)
            #expect(try context.container.read { try $0.fetchCount(descriptor) } == 10)
            let id = tasks[13].id
            descriptor.predicate = #Predicate { $0.id == id }
            #expect(try context.container.read { try $0.fetch(descriptor) }.map(\.title) == ["P1-T3"])
            #expect(try context.fetchIdentifiers(descriptor) == [id])
            descriptor.predicate = nil
            #expect(try context.fetchCount(descriptor) == 31)
            #expect(try context.container.read { try $0.fetchCount(descriptor) } == 31)
            #expect(try context.fetch(descriptor).count == 31)
            descriptor.predicate = #Predicate { $0.priority == 100 }
            #expect(try context.container.read { try $0.fetch(descriptor) }.map(\.title) == ["orphan"])
        }
    }

    @Test func nilEqualityFindsModelsWithoutAValue() throws {
        try withTasks { context, _, _ throws in
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == nil })
            #expect(try context.fetch(descriptor).map(\.title) == ["orphan"])
        }
    }

    static let ranges: [(Predicate<Task>, Int)] = [
        (#Predicate<Task> { $0.priority < 2 }, 6),
        (#Predicate<Task> { $0.priority <= 2 }, 9),
        (#Predicate<Task> { $0.priority > 8 }, 4),
        (#Predicate<Task> { $0.priority >= 8 }, 7),
        (#Predicate<Task> { $0.priority >= 3 && $0.priority < 5 }, 6),
        (#Predicate<Task> { 7 < $0.priority }, 7),
    ]

    @Test(arguments: ranges)
    func rangesOnAnIndexedAttributeUseTheIndex(predicate: Predicate<Task>, expected: Int) throws {
        try withTasks { context, _, _ throws in
            let descriptor = FetchDescriptor<Task>(predicate: predicate)
            #expect(try context.explain(descriptor).contains("index priority"))
            #expect(try context.fetch(descriptor).count == expected)
            #expect(try context.fetchCount(descriptor) == expected)
        }
    }

    @Test func containsOnAConstantArrayUsesTheIndex() throws {
        try withTasks { context, _, _ throws in
            let wanted = [1, 3, 100]
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { wanted.contains($0.priority) })
            #expect(try context.explain(descriptor).contains("index priority"))
            #expect(try context.fetch(descriptor).count == 7)
        }
    }

    @Test func unindexedPredicatesScanAndStillFilter() throws {
        try withTasks { context, _, _ throws in
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.isDone && $0.title.contains("P2") })
            #expect(try context.explain(descriptor) == "scan")
            #expect(try context.fetch(descriptor).map(\.title) == ["P2-T0", "P2-T2", "P2-T4", "P2-T6", "P2-T8"])
        }
    }

    @Test func conjunctionUsesTheIndexAndFiltersTheRest() throws {
        try withTasks { context, projects, _ throws in
            let id = projects[0].id
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == id && !$0.isDone })
            #expect(try context.explain(descriptor).contains("index projectID"))
            #expect(try context.fetch(descriptor).map(\.priority) == [1, 3, 5, 7, 9])
        }
    }

    @Test func sortOffsetAndLimit() throws {
        try withTasks { context, _, _ throws in
            var descriptor = FetchDescriptor<Task>(
                predicate: #Predicate { $0.priority < 100 },
                sortBy: [SortDescriptor(\.priority, order: .reverse), SortDescriptor(\.title)])
            descriptor.fetchOffset = 2
            descriptor.fetchLimit = 4
            #expect(try context.fetch(descriptor).map(\.title) == ["P2-T9", "P0-T8", "P1-T8", "P2-T8"])
            descriptor.fetchOffset = 29
            #expect(try context.fetch(descriptor).map(\.title) == ["P2-T0"])
            descriptor.fetchOffset = 40
            #expect(try context.fetch(descriptor).isEmpty)
            descriptor.fetchOffset = 0
            descriptor.fetchLimit = 0
            #expect(try context.fetch(descriptor).isEmpty)
        }
    }

    @Test func sortOnAnIndexedAttributeWithALimitReadsTheIndexInOrder() throws {
        try withTasks { context, _, _ throws in
            var descriptor = FetchDescriptor<Task>(sortBy: [SortDescriptor(\.dueDate, order: .reverse)])
            descriptor.fetchLimit = 3
            #expect(try context.explain(descriptor).contains("ordered"))
            #expect(try context.fetch(descriptor).map(\.title) == ["P2-T9", "P2-T8", "P2-T7"])
            var ascending = FetchDescriptor<Task>(
                predicate: #Predicate { $0.isDone }, sortBy: [SortDescriptor(\.dueDate)])
            ascending.fetchLimit = 2
            #expect(try context.fetch(ascending).map(\.title) == ["P0-T0", "P0-T2"])
        }
    }

    @Test func fetchWithoutPredicateReturnsEverything() throws {
        try withTasks { context, _, tasks throws in
            #expect(try context.fetchCount(FetchDescriptor<Task>()) == tasks.count + 1)
            let sorted = try context.fetch(FetchDescriptor<Task>(sortBy: [SortDescriptor(\.title)]))
            #expect(sorted.first?.title == "P0-T0")
            #expect(sorted.last?.title == "orphan")
        }
    }

    @Test func uniqueEqualityFindsOneModel() throws {
        try withTasks { context, projects, _ throws in
            let descriptor = FetchDescriptor<Project>(predicate: #Predicate { $0.name == "P2" })
            #expect(try context.explain(descriptor).contains("name"))
            #expect(try context.fetch(descriptor) == [projects[2]])
        }
    }
}
