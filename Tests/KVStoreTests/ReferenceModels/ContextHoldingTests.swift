import Foundation
import KVStoreInspection
import LMDB
import Testing

@testable import KVStore

/// What a context keeps of its objects between reads and saves, and the index keys it computes from the attributes of
/// reference models: a read lets go of unchanged objects nothing else references, never of a changed one; index keys
/// read a class's stored attributes in place and anything else through its key path.
@Suite struct ContextHoldingTests {
    /// A store with three tasks, saved by a context that is gone.
    private func seeded(_ container: ModelContainer) throws -> [UUID] {
        let context = ModelContext(container)
        let tasks = (0..<3).map { RefTask(title: "task \($0)", priority: $0) }
        for task in tasks { context.insert(task) }
        try context.save()
        return tasks.map(\.id)
    }

    private func allTasks(_ context: ModelContext) throws -> [RefTask] {
        try context.fetch(FetchDescriptor<RefTask>(sortBy: [SortDescriptor(\.priority)]))
    }

    @Test func aReadLetsGoOfUnchangedObjectsNothingElseReferences() throws {
        try withContainer(RefProject.self) { container in
            _ = try seeded(container)
            let context = ModelContext(container)
            var released: [() -> AnyObject?] = []
            for task in try allTasks(context) { released.append { [weak task] in task } }
            #expect(released.allSatisfy { $0() != nil })
            #expect(try context.fetchCount(FetchDescriptor<RefTask>()) == 3)
            #expect(released.allSatisfy { $0() == nil })
            #expect(context.tracked.count(of: RefTask.self) == 3)
        }
    }

    @Test func aReadKeepsTheObjectsTheProgramHoldsAsTheSameObjects() throws {
        try withContainer(RefProject.self) { container in
            _ = try seeded(container)
            let context = ModelContext(container)
            let held = try allTasks(context)
            for _ in 0..<3 { _ = try allTasks(context) }
            #expect(zip(held, try allTasks(context)).allSatisfy { $0 === $1 })
        }
    }

    @Test func aChangedObjectNobodyReferencesOutlivesReadsAndIsSaved() throws {
        try withContainer(RefProject.self) { container in
            let ids = try seeded(container)
            let context = ModelContext(container)
            try allTasks(context)[1].title = "changed, then dropped"
            for _ in 0..<3 {
                #expect(try allTasks(context).map(\.title) == ["task 0", "changed, then dropped", "task 2"])
            }
            #expect(try context.fetchCount(FetchDescriptor<RefTask>(predicate: #Predicate { $0.priority >= 0 })) == 3)
            #expect(context.hasChanges)
            try context.save()
            let reread = try #require(try ModelContext(container).model(for: ids[1], as: RefTask.self))
            #expect(reread.title == "changed, then dropped")
        }
    }

    @Test func anInsertedObjectLeavesAtItsSaveUnlessReferencedAndAKeptOneSavesItsNextChange() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            var dropped: () -> AnyObject? = { nil }
            do {
                let task = RefTask(title: "dropped", priority: 1)
                context.insert(task)
                dropped = { [weak task] in task }
            }
            let kept = RefTask(title: "kept", priority: 2)
            context.insert(kept)
            try context.save()
            #expect(dropped() == nil)
            #expect(context.tracked.count(of: RefTask.self) == 1)
            kept.title = "kept and changed"
            #expect(context.hasChanges)
            try context.save()
            let reread = try allTasks(ModelContext(container))
            #expect(reread.map(\.title) == ["dropped", "kept and changed"])
        }
    }

    @Test func indexKeysReadStoredObservedAndComputedAttributesOfAClass() throws {
        try withContainer(ObservedItem.self) { container in
            let context = ModelContext(container)
            let items = (0..<20).map {
                ObservedItem(name: "Item \($0)", rank: $0 % 5, note: $0.isMultiple(of: 2) ? "even" : nil)
            }
            for item in items { context.insert(item) }
            try context.save()
            items[3].rank = 40
            items[4].name = "RENAMED"
            items[5].note = "now set"
            try context.save()
            #expect(items[3].rankChanges == 1)

            let reader = ModelContext(container)
            let ranked = try reader.fetch(FetchDescriptor<ObservedItem>(predicate: #Predicate { $0.rank == 40 }))
            #expect(ranked.map(\.id) == [items[3].id])
            let folded = try reader.fetch(
                FetchDescriptor<ObservedItem>(predicate: #Predicate { $0.nameFolded == "renamed" }))
            #expect(folded.map(\.id) == [items[4].id])
            let noted = try reader.fetch(FetchDescriptor<ObservedItem>(predicate: #Predicate { $0.note == "now set" }))
            #expect(noted.map(\.id) == [items[5].id])
            #expect(
                try reader.explain(FetchDescriptor<ObservedItem>(predicate: #Predicate { $0.rank == 40 })).contains(
                    "rank"))
            let errors = try StoreInspection.check(path: container.path).errors
            #expect(errors.isEmpty, "\(errors)")
        }
    }

    @Test func aComputedIndexEntryPointingNowhereIsStillReported() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let container = try ModelContainer(for: ObservedItem.self, configuration: configuration)
        let context = ModelContext(container)
        for number in 0..<3 { context.insert(ObservedItem(name: "Item \(number)", rank: number, note: nil)) }
        try context.save()
        try container.close()
        // An entry of the computed index that names no record: the check cannot recompute a computed property's
        // keys from the records, but it still follows each entry to its record.
        let ghost = UUID.timeOrdered()
        let environment = try Environment.open(path: directory.path)
        let index = try environment.openTable(named: "index/ObservedItem/nameFolded", options: [.dupSort, .dupFixed])
        var key: [UInt8] = []
        "ghost".appendIndexKey(to: &key)
        let value = withUnsafeBytes(of: ghost.uuid) { Array($0) }
        try environment.write { txn in try txn.put(value, forKey: key, in: index) }
        try environment.close()
        let errors = try StoreInspection.check(path: directory.path).errors
        #expect(errors.count == 1)
        #expect(errors.first?.description.contains("points to ObservedItem \(ghost), which does not exist") == true)
    }

    @Test func aReadThroughAnotherContainerSeesItsSaveForObjectsNotHeldAndKeepsHeldOnes() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let reading = try ModelContainer(for: RefProject.self, configuration: configuration)
        defer { try? reading.close() }
        let writing = try ModelContainer(for: RefProject.self, configuration: configuration)
        defer { try? writing.close() }
        let ids = try seeded(writing)
        let context = ModelContext(reading)
        let held = try #require(try context.model(for: ids[0], as: RefTask.self))
        #expect(try allTasks(context).map(\.title) == ["task 0", "task 1", "task 2"])
        // The other container renames two tasks: the one this context holds, and one it read and let go.
        let other = ModelContext(writing)
        for id in ids.prefix(2) { try #require(try other.model(for: id, as: RefTask.self)).title = "renamed" }
        try other.save()
        let reread = try allTasks(context)
        // A held object answers with the values it holds, as in SwiftData; the other is read anew.
        #expect(reread[0] === held)
        #expect(reread.map(\.title) == ["task 0", "renamed", "task 2"])
        #expect(!context.hasChanges)
    }

    @Test func modelKeysFindEveryIDWhateverTheirHalvesShare() {
        // IDs that share either half, or differ in one bit, are all distinct keys and all found.
        var ids: [UUID] = []
        for number in 0..<2_000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            bytes[number.isMultiple(of: 2) ? 15 : 7] = UInt8(truncatingIfNeeded: number)
            bytes[number.isMultiple(of: 2) ? 14 : 6] = UInt8(truncatingIfNeeded: number >> 8)
            ids.append(bytes.withBorrowedBytes { UUID(bytes: $0) })
        }
        var table: [ModelKey: Int] = [:]
        for (position, id) in ids.enumerated() { table[ModelKey(id)] = position }
        #expect(Set(ids).count == ids.count)
        #expect(table.count == ids.count)
        #expect(ids.enumerated().allSatisfy { table[ModelKey($1)] == $0 })
        #expect(ModelKey(ids[1]) != ModelKey(ids[2]))
        var hasher = Hasher()
        ModelKey(ids[1]).hash(into: &hasher)
        var same = Hasher()
        ModelKey(ids[1]).hash(into: &same)
        #expect(hasher.finalize() == same.finalize())
    }
}

/// A model class whose indexes are on a stored attribute with an observer (whose key path goes through its setter, as a
/// computed property's does, so its index is named), on a computed property and on an optional attribute.
final class ObservedItem: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String
    var rank: Int {
        didSet { rankChanges += 1 }
    }
    var note: String?
    var rankChanges = 0
    var nameFolded: String { name.lowercased() }

    init(name: String, rank: Int, note: String?) {
        self.name = name
        self.rank = rank
        self.note = note
    }

    static let entity = Entity<ObservedItem>(
        indexes: [.index(\.rank, name: "rank"), .index(\.nameFolded, name: "nameFolded"), .index(\.note)])
}
