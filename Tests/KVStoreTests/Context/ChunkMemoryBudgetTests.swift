import Foundation
import LMDB
import Testing

@testable import KVStore

/// Chunked inserts commit by a budget of changed pages (``ModelConfiguration/chunkMemoryBudget``) as well as by a count
/// of models, so that an importer's memory stays flat as its store grows.
@Suite struct ChunkMemoryBudgetTests {
    /// An in-memory container for `types` whose chunked inserts have `budget` bytes of changed pages.
    private func withContainer<R>(
        _ types: any StoredModel.Type..., budget: Int, body: (ModelContainer) throws -> R
    ) throws -> R {
        var configuration = ModelConfiguration(isStoredInMemoryOnly: true)
        configuration.chunkMemoryBudget = budget
        let container = try ModelContainer(for: types, configuration: configuration)
        defer { try? container.close() }
        return try body(container)
    }

    /// Tasks with random IDs, which land all over the tree, as an importer's of another system's rows do.
    private func randomTasks(_ count: Int) -> [Task] {
        (0..<count).map { Task(id: UUID(), title: "task \($0)", priority: $0 % 7) }
    }

    @Test func theDefaultBudgetLeavesAChunkOfASmallStoreInOneTransaction() throws {
        #expect(ModelConfiguration().chunkMemoryBudget == 16 << 20)
        try withContainer(Task.self, budget: ModelConfiguration().chunkMemoryBudget) { container in
            var reported: [Int] = []
            let saved = try ModelContext(container).insert(contentsOf: randomTasks(5_000), chunkSize: 2_000) {
                reported.append($0)
            }
            #expect(saved == 5_000)
            #expect(reported == [2_000, 4_000, 5_000])
        }
    }

    @Test func aChunkPastTheBudgetCommitsAndGoesOnInTheNextTransaction() throws {
        // 64 KiB: sixteen pages, which 256 random writes to a task's four tables pass.
        try withContainer(Task.self, budget: 64 << 10) { container in
            var reported: [Int] = []
            let tasks = randomTasks(5_000)
            let saved = try ModelContext(container).insert(contentsOf: tasks, chunkSize: 2_000) { reported.append($0) }
            #expect(saved == 5_000)
            #expect(reported.last == 5_000)
            let steps = zip(reported, [0] + reported).map { $0 - $1 }
            // Every transaction holds a whole number of estimate intervals, but the last of each chunk, and none
            // spans two chunks: the chunks end at 2,000 and 4,000.
            #expect(steps.count > 3)
            #expect(reported.contains(2_000) && reported.contains(4_000))
            for (step, end) in zip(steps, reported) where ![2_000, 4_000, 5_000].contains(end) {
                #expect(
                    step.isMultiple(of: ModelContext.chunkBudgetInterval), "a transaction of \(step) ended at \(end)")
            }
            #expect(steps.allSatisfy { $0 >= 1 && $0 <= 2_000 })
            // Nothing lost, nothing twice, indexes in step.
            let context = ModelContext(container)
            #expect(try context.fetchCount(FetchDescriptor<Task>()) == 5_000)
            #expect(
                try context.fetchCount(FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 3 }))
                    == tasks.count { $0.priority == 3 })
            let stored = try context.models(for: tasks.map(\.id), as: Task.self)
            #expect(stored == tasks.map { Optional($0) })
        }
    }

    @Test(arguments: [0, -1, Int.min])
    func aBudgetOfNothingCommitsEveryInterval(budget: Int) throws {
        try withContainer(Task.self, budget: budget) { container in
            var reported: [Int] = []
            try ModelContext(container).insert(contentsOf: randomTasks(1_000), chunkSize: 10_000) {
                reported.append($0)
            }
            let interval = ModelContext.chunkBudgetInterval
            #expect(reported == Array(stride(from: interval, to: 1_000, by: interval)) + [1_000])
        }
    }

    @Test func aFailingTransactionOfAChunkSaysHowManyWereCommittedBeforeIt() throws {
        try withContainer(Project.self, budget: 0) { container in
            // 700 projects sorted by ID: the chunk's third transaction (models 513 to 700) holds the duplicate name.
            var projects = (0..<700).map { Project(id: UUID(), name: "p\($0)") }
            projects.sort { $0.id.isOrdered(before: $1.id) }
            projects[600].name = projects[0].name
            let error = try #require(throws: KVStoreError.self) {
                try ModelContext(container).insert(contentsOf: projects, chunkSize: 1_000)
            }
            #expect(error == .uniqueViolation)
            #expect(error.committedCount == 2 * ModelContext.chunkBudgetInterval)
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Project>()) == 512)
        }
    }

    @Test func aBudgetOfEverythingCommitsByTheChunkSizeAlone() throws {
        try withContainer(Task.self, budget: .max) { container in
            var reported: [Int] = []
            try ModelContext(container).insert(contentsOf: randomTasks(5_000), chunkSize: 2_000) {
                reported.append($0)
            }
            #expect(reported == [2_000, 4_000, 5_000])
        }
        try withContainer(RefProject.self, budget: .max) { container in
            var reported: [Int] = []
            try ModelContext(container).insert(
                contentsOf: (0..<5_000).map { RefTask(title: "task \($0)") }, chunkSize: 2_000
            ) {
                reported.append($0)
            }
            #expect(reported == [2_000, 4_000, 5_000])
        }
    }

    @Test func aChunkedUpdatePastTheBudgetGoesOnAfterTheLastModelItChanged() throws {
        try withContainer(Task.self, budget: 0) { container in
            let tasks = randomTasks(1_500)
            try ModelContext(container).insert(contentsOf: tasks)
            var reported: [Int] = []
            // Four tasks in seven match: the pages skip the others, and each transaction changes 256 matches.
            let updated = try ModelContext(container).update(
                FetchDescriptor<Task>(predicate: #Predicate { $0.priority < 4 }), chunkSize: 1_000,
                progress: { reported.append($0) }
            ) { task in task.title += " (changed)" }
            let matching = tasks.count { $0.priority < 4 }
            #expect(updated == matching)
            let interval = ModelContext.chunkBudgetInterval
            #expect(reported == Array(stride(from: interval, to: matching, by: interval)) + [matching])
            // Each matching task changed exactly once, the others not at all.
            let stored = try ModelContext(container).models(for: tasks.map(\.id), as: Task.self)
            for (task, stored) in zip(tasks, stored) {
                #expect(stored?.title == (task.priority < 4 ? task.title + " (changed)" : task.title))
            }
        }
    }

    @Test func classChunksAreSizedFromThePagesTheLastSaveChanged() throws {
        try withContainer(RefProject.self, budget: 64 << 10) { container in
            let context = ModelContext(container)
            var reported: [Int] = []
            let tasks = (0..<6_000).lazy.map { RefTask(title: "task \($0)", priority: $0 % 5) }
            let saved = try context.insert(contentsOf: tasks, chunkSize: 2_000) { reported.append($0) }
            #expect(saved == 6_000)
            let steps = zip(reported, [0] + reported).map { $0 - $1 }
            // The first chunk is the chunk size; it changed more than 64 KiB, so the next ones are smaller, never
            // below the interval.
            #expect(steps.first == 2_000)
            #expect(steps.count > 3)
            #expect(steps.dropFirst().dropLast().allSatisfy { $0 >= ModelContext.chunkBudgetInterval && $0 < 2_000 })
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<RefTask>()) == 6_000)
            #expect(!context.hasChanges)
        }
    }

    @Test func aSaveOutsideAChunkedInsertIsNotMeasured() throws {
        try withContainer(RefProject.self, budget: 64 << 10) { container in
            let context = ModelContext(container)
            context.insert(RefTask(title: "one"))
            try context.save()
            #expect(context.lastSaveChangedBytes == nil)
            try context.insert(contentsOf: [RefTask(title: "two")])
            #expect(context.lastSaveChangedBytes == nil)
        }
    }

    @Test func theEstimateCoversThePagesAddedAndNoMoreThanTheTablesHold() throws {
        try withContainer(Task.self, budget: 16 << 20) { container in
            try ModelContext(container).insert(contentsOf: randomTasks(20_000))
            let store = try container.store(for: Task.self)
            try container.write { txn in
                let lmdb = txn.transaction
                let before = try store.modelTables.map { try lmdb.pointee.statistics(of: $0) }
                let footprint = try WriteFootprint(store: store, firstID: nil, in: lmdb.pointee)
                #expect(try footprint.changedBytes(afterWriting: 0, in: lmdb.pointee) == 0)
                for task in randomTasks(1_000) { try txn.insert(task) }
                let after = try store.modelTables.map { try lmdb.pointee.statistics(of: $0) }
                let estimate = try footprint.changedBytes(afterWriting: 1_000, in: lmdb.pointee)
                func pages(_ statistics: Environment.Statistics) -> Int {
                    statistics.leafPages + statistics.branchPages + statistics.overflowPages
                }
                let added = zip(before, after).map { pages($1) - pages($0) }.reduce(0, +)
                let held = after.map(pages).reduce(0, +)
                let pageSize = after[0].pageSize
                // New pages are changed pages; a table cannot change more pages than it has.
                #expect(estimate >= added * pageSize)
                #expect(estimate <= held * pageSize)
                // A thousand random inserts into a table of 20,000 records on fewer leaves than that land on most of
                // its leaves: the estimate counts them all.
                #expect(after[0].leafPages < 1_000)
                #expect(estimate >= after[0].leafPages * pageSize)
            }
        }
    }

    @Test func recordsAppendedAfterTheLastKeyCountTheLeavesTheyFill() throws {
        try withContainer(Task.self, budget: 16 << 20) { container in
            // Time-ordered IDs: each new task's key sorts after every stored one.
            try ModelContext(container).insert(contentsOf: (0..<20_000).map { Task(title: "task \($0)") })
            let store = try container.store(for: Task.self)
            let later = (0..<1_000).map { Task(title: "later \($0)") }
            try container.write { txn in
                let lmdb = txn.transaction
                let appended = try WriteFootprint(store: store, firstID: later[0].id, in: lmdb.pointee)
                let unknown = try WriteFootprint(store: store, firstID: nil, in: lmdb.pointee)
                // A first ID before the last stored one is not an append.
                let stored = try WriteFootprint(
                    store: store, firstID: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                    in: lmdb.pointee)
                let recordsBefore = try lmdb.pointee.statistics(of: store.records)
                for task in later { try txn.insert(task) }
                let recordsAfter = try lmdb.pointee.statistics(of: store.records)
                let pageSize = recordsAfter.pageSize
                let addedLeaves = recordsAfter.leafPages - recordsBefore.leafPages
                #expect(addedLeaves > 0)
                let byAppend = try appended.changedBytes(afterWriting: 1_000, in: lmdb.pointee)
                let byUnknown = try unknown.changedBytes(afterWriting: 1_000, in: lmdb.pointee)
                #expect(try stored.changedBytes(afterWriting: 1_000, in: lmdb.pointee) == byUnknown)
                // The appends count the leaves they filled and the last one, not a leaf per record.
                #expect(byAppend < byUnknown)
                #expect(byUnknown - byAppend >= (recordsAfter.leafPages - addedLeaves - 1) * pageSize)
                #expect(byAppend >= (addedLeaves + 1) * pageSize)
            }
        }
    }
}
