import Foundation
import Testing

@testable import KVStore

/// `id` is the record key: equality and `contains` on it read the records of those IDs directly, alone or beside
/// other conditions, in a context and in a transaction, and see the context's unsaved changes as every fetch does.
@Suite struct KeyLookupTests {
    /// 3 projects with 10 tasks each; task i has priority i.
    private func withTasks<R>(_ body: (ModelContext, [Task]) throws -> R) throws -> R {
        try withContainer(Project.self, Task.self) { container throws in
            let context = ModelContext(container)
            var tasks: [Task] = []
            for p in 0..<3 {
                let project = Project(name: "P\(p)")
                context.insert(project)
                for i in 0..<10 {
                    tasks.append(Task(title: "P\(p)-T\(i)", projectID: project.id, priority: i))
                }
            }
            for task in tasks { context.insert(task) }
            try context.save()
            return try body(ModelContext(context.container), tasks)
        }
    }

    @Test func equalityOnIDIsOneLookup() throws {
        try withTasks { context, tasks throws in
            let id = tasks[17].id
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.id == id })
            #expect(try context.explain(descriptor) == "key id: 1 key")
            #expect(try context.fetch(descriptor).map(\.title) == ["P1-T7"])
            #expect(try context.fetchCount(descriptor) == 1)
        }
    }

    @Test func anIDThatIsNotStoredFindsNothing() throws {
        try withTasks { context, _ throws in
            let id = UUID()
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.id == id })
            #expect(try context.explain(descriptor) == "key id: 1 key")
            #expect(try context.fetch(descriptor).isEmpty)
            #expect(try context.fetchCount(descriptor) == 0)
        }
    }

    @Test func containsOnIDIsABatchLookupWithoutDuplicates() throws {
        try withTasks { context, tasks throws in
            let ids = [tasks[3].id, tasks[25].id, UUID(), tasks[3].id, tasks[11].id]
            let descriptor = FetchDescriptor<Task>(
                predicate: #Predicate { ids.contains($0.id) }, sortBy: [SortDescriptor(\.title)])
            #expect(try context.explain(descriptor) == "key id: 4 keys")
            #expect(try context.fetch(descriptor).map(\.title) == ["P0-T3", "P1-T1", "P2-T5"])
            #expect(try context.fetchCount(descriptor) == 3)
        }
    }

    @Test func theIDNarrowsOtherConditionsFirst() throws {
        try withTasks { context, tasks throws in
            let ids = tasks.prefix(10).map(\.id)
            let projectID = try #require(tasks.first?.projectID)
            let descriptor = FetchDescriptor<Task>(
                predicate: #Predicate { $0.projectID == projectID && ids.contains($0.id) && $0.priority >= 8 },
                sortBy: [SortDescriptor(\.priority, order: .reverse)])
            #expect(try context.explain(descriptor) == "key id: 10 keys")
            #expect(try context.fetch(descriptor).map(\.title) == ["P0-T9", "P0-T8"])
        }
    }

    @Test func eitherOfTwoIDsIsTheUnionOfTheirLookups() throws {
        try withTasks { context, tasks throws in
            let (first, second) = (tasks[0].id, tasks[29].id)
            let descriptor = FetchDescriptor<Task>(predicate: #Predicate { $0.id == first || $0.id == second })
            #expect(try context.explain(descriptor) == "key id: 2 keys")
            #expect(Set(try context.fetch(descriptor).map(\.title)) == ["P0-T0", "P2-T9"])
        }
    }

    @Test func aLimitAndOffsetPageTheLookedUpModelsInTheSortOrder() throws {
        try withTasks { context, tasks throws in
            let ids = tasks.map(\.id).shuffled()
            var descriptor = FetchDescriptor<Task>(
                predicate: #Predicate { ids.contains($0.id) }, sortBy: [SortDescriptor(\.title, order: .reverse)])
            descriptor.fetchOffset = 1
            descriptor.fetchLimit = 2
            #expect(try context.fetch(descriptor).map(\.title) == ["P2-T8", "P2-T7"])
        }
    }

    @Test func aSortByIDWithALimitIsNotReadFromTheKey() throws {
        try withTasks { context, tasks throws in
            var descriptor = FetchDescriptor<Task>(sortBy: [SortDescriptor(\.id)])
            descriptor.fetchLimit = 3
            #expect(try context.explain(descriptor) == "scan")
            let expected = tasks.map(\.id).sorted().prefix(3)
            #expect(try context.fetch(descriptor).map(\.id) == Array(expected))
        }
    }

    @Test func theContextsUnsavedChangesAreSeen() throws {
        try withTasks { context, tasks throws in
            let fresh = Task(title: "new", priority: 1)
            context.insert(fresh)
            context.delete(tasks[0])
            let ids = [fresh.id, tasks[0].id, tasks[1].id]
            let found = try context.fetch(FetchDescriptor<Task>(predicate: #Predicate { ids.contains($0.id) }))
            #expect(Set(found.map(\.title)) == ["new", "P0-T1"])
        }
    }

    @Test func aTransactionLooksIDsUpToo() throws {
        try withTasks { context, tasks throws in
            let id = tasks[5].id
            let found = try context.container.read { txn in
                try txn.fetch(FetchDescriptor<Task>(predicate: #Predicate { $0.id == id }))
            }
            #expect(found.map(\.title) == ["P0-T5"])
        }
    }

    /// An equality alone, on `id` or on an index whose keys are equal exactly when the values are, is read exactly,
    /// and so are comparisons of an integer and an `||` of such sides; anything else around them, or a date's
    /// equality (NaN), is evaluated.
    @Test func onlyAComparisonAloneIsReadExactly() throws {
        try withTasks { context, tasks throws in
            let store = try context.container.store(for: Task.self)
            let (id, ids, projectID) = (tasks[0].id, tasks.map(\.id), tasks[0].projectID)
            let dueDate = tasks[0].dueDate
            let exact = [
                FetchDescriptor<Task>(predicate: #Predicate { $0.id == id }),
                FetchDescriptor<Task>(predicate: #Predicate { ids.contains($0.id) }),
                FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == projectID }),
                FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 1 }),
                FetchDescriptor<Task>(predicate: #Predicate { $0.priority > 1 }),
                FetchDescriptor<Task>(predicate: #Predicate { $0.id == id || $0.priority > 1 }),
            ]
            let evaluated = [
                FetchDescriptor<Task>(predicate: #Predicate { $0.id == id && $0.priority > 1 }),
                FetchDescriptor<Task>(predicate: #Predicate { $0.dueDate == dueDate }),
                FetchDescriptor<Task>(predicate: #Predicate { $0.priority > 1 && $0.isDone }),
            ]
            #expect(exact.map { store.plan($0).isExact } == [true, true, true, true, true, true])
            #expect(evaluated.map { store.plan($0).isExact } == [false, false, false])
            // What an exact plan returns is what evaluating the predicate would keep.
            #expect(try context.fetch(exact[0]).map(\.id) == [id])
            #expect(try context.fetchCount(exact[1]) == tasks.count)
            #expect(try context.fetchCount(exact[5]) == tasks.filter { $0.id == id || $0.priority > 1 }.count)
            #expect(try context.fetch(evaluated[0]).isEmpty)
        }
    }

    @Test func aUniqueConstraintOnIDIsTheKeyItself() throws {
        let entity = Entity<Task>(indexes: [.unique(\.id), .index(\.priority)])
        #expect(entity.indexes.map(\.name) == ["priority"])
    }
}
