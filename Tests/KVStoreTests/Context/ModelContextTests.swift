import Foundation
import Testing

@testable import KVStore

@Suite struct ModelContextTests {
    @Test func insertSaveAndReadBack() throws {
        try withContainer(Project.self, Task.self) { container throws in
            let context = ModelContext(container)
            let project = Project(name: "Launch")
            let task = Task(
                title: "Write the README", dueDate: Date(timeIntervalSince1970: 1_800_000_000), projectID: project.id)
            context.insert(project)
            context.insert(task)
            #expect(context.hasChanges)
            try context.save()
            #expect(!context.hasChanges)

            let fresh = ModelContext(container)
            #expect(try fresh.model(for: project.id, as: Project.self) == project)
            #expect(try fresh.model(for: task.id) == task)
            #expect(try fresh.model(for: UUID(), as: Task.self) == nil)
        }
    }

    @Test func insertWithAnExistingIDReplacesTheModel() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            var task = Task(title: "Draft", priority: 1)
            context.insert(task)
            try context.save()
            task.title = "Final"
            task.priority = 5
            context.insert(task)
            try context.save()
            #expect(try context.model(for: task.id) == task)
            #expect(try context.fetchCount(FetchDescriptor<Task>()) == 1)
            // The index follows the update: the old priority finds nothing.
            #expect(try context.fetch(FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 1 })).isEmpty)
            #expect(try context.fetch(FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 5 })) == [task])
        }
    }

    @Test func deleteRemovesTheModelAndItsIndexEntries() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            let projectID = UUID()
            let tasks = (0..<5).map { Task(title: "T\($0)", projectID: projectID) }
            for task in tasks { context.insert(task) }
            try context.save()
            context.delete(tasks[1])
            context.delete(Task.self, id: tasks[3].id)
            try context.save()
            let left = try context.fetch(FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == projectID }))
            #expect(left.map(\.title) == ["T0", "T2", "T4"])
            #expect(try context.model(for: tasks[1].id, as: Task.self) == nil)
        }
    }

    @Test func rollbackForgetsPendingChanges() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            let kept = Task(title: "kept")
            context.insert(kept)
            try context.save()
            context.insert(Task(title: "forgotten"))
            context.delete(kept)
            context.rollback()
            #expect(!context.hasChanges)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Task>()) == [kept])
        }
    }

    @Test func readsSeePendingChanges() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            let saved = Task(title: "saved", priority: 1)
            let doomed = Task(title: "doomed", priority: 1)
            context.insert(saved)
            context.insert(doomed)
            try context.save()
            let pending = Task(title: "pending", priority: 1)
            context.insert(pending)
            context.delete(doomed)
            #expect(try context.model(for: pending.id) == pending)
            #expect(try context.model(for: doomed.id, as: Task.self) == nil)
            let descriptor = FetchDescriptor<Task>(
                predicate: #Predicate { $0.priority == 1 }, sortBy: [SortDescriptor(\.title)])
            #expect(try context.fetch(descriptor).map(\.title) == ["pending", "saved"])
            #expect(try context.fetchCount(descriptor) == 2)
            #expect(
                try context.models(for: [doomed.id, pending.id, saved.id], as: Task.self) == [nil, pending, saved])
            // Another context sees only what was saved.
            #expect(try ModelContext(container).fetch(descriptor).map(\.title) == ["doomed", "saved"])
        }
    }

    @Test func batchFetchKeepsTheCallersOrderAndReportsMissingIDs() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            let tasks = (0..<100).map { Task(title: "T\($0)") }
            for task in tasks { context.insert(task) }
            try context.save()
            let missing = UUID()
            let ids = [tasks[42].id, missing, tasks[7].id, tasks[99].id, tasks[7].id]
            let fetched = try context.models(for: ids, as: Task.self)
            #expect(fetched.map { $0?.title } == ["T42", nil, "T7", "T99", "T7"])
        }
    }

    @Test func explicitTransactionsReadAndWriteTogether() throws {
        struct Abort: Error {}
        try withContainer(Project.self, Task.self) { container throws in
            let project = Project(name: "Atomic")
            try container.write { txn throws in
                try txn.insert(project)
                try txn.insert(Task(title: "one", projectID: project.id))
                #expect(try txn.fetchCount(FetchDescriptor<Task>()) == 1)
            }
            #expect(throws: Abort.self) {
                try container.write { txn throws in
                    try txn.insert(Task(title: "two", projectID: project.id))
                    throw Abort()
                }
            }
            let count = try container.read { txn throws in try txn.fetchCount(FetchDescriptor<Task>()) }
            #expect(count == 1)
            let deleted = try container.write { txn throws in try txn.delete(Project.self, id: project.id) }
            #expect(deleted == project)
            #expect(try container.read { txn throws in try txn.model(for: project.id, as: Project.self) } == nil)
        }
    }

    @Test func nestedCodableValuesRoundTrip() throws {
        try withContainer(Recipe.self) { container throws in
            let recipe = Recipe(
                title: "Pancakes", course: .dessert,
                ingredients: [
                    .init(name: "flour", grams: 250, optional: nil), .init(name: "sugar", grams: 30.5, optional: true),
                ],
                steps: ["mix", "fry"], nutrition: ["kcal": 230.5, "fat": 9], ratings: [5: 12, 4: 3],
                tags: ["sweet", "quick"], source: .book(title: "Breakfasts", page: 12), tagIDs: [UUID(), UUID()])
            let web = Recipe(
                title: "Soup", course: .starter, ingredients: [], steps: [], nutrition: [:], ratings: [:], tags: [],
                source: .web(URL(string: "https://example.com/soup")!))
            let context = ModelContext(container)
            context.insert(recipe)
            context.insert(web)
            try context.save()
            #expect(try context.model(for: recipe.id) == recipe)
            #expect(try context.model(for: web.id) == web)
            let dessert = Recipe.Course.dessert
            let desserts = try context.fetch(FetchDescriptor<Recipe>(predicate: #Predicate { $0.course == dessert }))
            #expect(desserts == [recipe])
            let tag = recipe.tagIDs[1]
            let tagged = FetchDescriptor<Recipe>(predicate: #Predicate { $0.tagIDs.contains(tag) })
            #expect(try context.fetch(tagged) == [recipe])
            #expect(try context.explain(tagged).contains("tagIDs"))
        }
    }

    @Test func enumerateWalksInBatches() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            for index in 0..<250 { context.insert(Task(title: "T\(index)", priority: index % 2)) }
            try context.save()
            var batches: [Int] = []
            var titles: [String] = []
            try context.enumerate(FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 0 }), batchSize: 50) {
                batch throws in
                batches.append(batch.count)
                titles += batch.map(\.title)
            }
            #expect(batches == [50, 50, 25])
            #expect(titles == stride(from: 0, to: 250, by: 2).map { "T\($0)" })
            #expect(throws: KVStoreError.invalidModel) {
                try context.enumerate(FetchDescriptor<Task>(sortBy: [SortDescriptor(\.title)])) { _ in }
            }
        }
    }

    @Test func timeOrderedIDsAreVersion7AndIncreasing() {
        let ids = (0..<10_000).map { _ in UUID.timeOrdered() }
        for (previous, next) in zip(ids, ids.dropFirst()) { #expect(previous.isOrdered(before: next)) }
        #expect(ids.allSatisfy { $0.uuid.6 >> 4 == 7 && $0.uuid.8 >> 6 == 0b10 })
        let milliseconds = ids[0].uuidString.replacingOccurrences(of: "-", with: "").prefix(12)
        let stamp = Double(UInt64(milliseconds, radix: 16) ?? 0) / 1000
        #expect(abs(stamp - Date().timeIntervalSince1970) < 60)
    }
}
