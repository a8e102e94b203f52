import Foundation
import LMDB
import TestSupport
import Testing

@testable import KVStore

/// A save whose record key sorts after every stored one is appended (`MDB_APPEND`): the same records and index
/// entries as a put, on filled leaves; the first key that is not after the last turns the appends off for the rest of
/// the write, and everything after it is put as before.
@Suite struct AppendedRecordTests {
    private func withContainer<R>(_ body: (ModelContainer) throws -> R) throws -> R {
        let container = try ModelContainer(
            for: Task.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        return try body(container)
    }

    /// The tasks of `projectID`, through its index.
    private func tasks(of projectID: UUID, in container: ModelContainer) throws -> [Task] {
        try container.read { txn in
            try txn.fetch(FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == projectID }))
        }.sorted { $0.title < $1.title }
    }

    @Test func ascendingIDsFillTheRecordLeavesAndKeepTheirIndexEntries() throws {
        try withContainer { container in
            let project = UUID()
            let ascending = (0..<3_000).map { Task(title: "task \($0)", projectID: project) }
            // Random IDs from a fixed seed, so the leaf count compared below is the same on every run.
            var generator = SplitMix64(seed: 25)
            let random = (0..<3_000).map { number in
                Task(id: UUID.random(using: &generator), title: "task \(number)", projectID: project)
            }
            try container.write { txn in for task in ascending { try txn.insert(task) } }
            let store = try container.store(for: Task.self)
            let appendedLeaves = try container.read { txn in
                try txn.transaction.pointee.statistics(of: store.records).leafPages
            }
            #expect(try tasks(of: project, in: container).count == 3_000)

            // The same number of records of random IDs, in a store of their own, leave leaves split in halves.
            try withContainer { other in
                try other.write { txn in for task in random { try txn.insert(task) } }
                let store = try other.store(for: Task.self)
                let putLeaves = try other.read { txn in
                    try txn.transaction.pointee.statistics(of: store.records).leafPages
                }
                #expect(Double(putLeaves) >= 1.25 * Double(appendedLeaves), "\(putLeaves) against \(appendedLeaves)")
            }
            let read = try container.read { txn in try txn.models(for: ascending.map(\.id), as: Task.self) }
            #expect(read == ascending.map { Optional($0) })
        }
    }

    @Test func aKeyNotAfterTheLastIsPutAndTheWriteGoesOnWithPuts() throws {
        try withContainer { container in
            let first = UUID()
            let second = UUID()
            var tasks = (0..<50).map { Task(title: "task \($0)", projectID: first) }
            try container.write { txn in for task in tasks { try txn.insert(task) } }
            try container.write { txn in
                // The last stored key again: an update, which must move its index entry and not add a record.
                tasks[49].projectID = second
                try txn.insert(tasks[49])
                // Then new keys after the last, an update of an earlier one, and a key before every stored one.
                for number in 50..<60 { tasks.append(Task(title: "task \(number)", projectID: first)) }
                for task in tasks[50...] { try txn.insert(task) }
                tasks[10].projectID = second
                try txn.insert(tasks[10])
                let earliest = Task(
                    id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1)), title: "task 99",
                    projectID: second)
                tasks.append(earliest)
                try txn.insert(earliest)
            }
            #expect(try container.read { txn in try txn.fetchCount(FetchDescriptor<Task>()) } == 61)
            #expect(
                try self.tasks(of: first, in: container).map(\.id).sorted()
                    == tasks.filter { $0.projectID == first }.map(\.id).sorted())
            #expect(try self.tasks(of: second, in: container).map(\.title) == ["task 10", "task 49", "task 99"])
            let read = try container.read { txn in try txn.models(for: tasks.map(\.id), as: Task.self) }
            #expect(read == tasks.map { Optional($0) })
        }
    }

    @Test func anAppendInAWriteThatFailsLeavesNothingBehind() throws {
        try withContainer { container in
            let stored = Task(title: "stored")
            try container.write { txn in try txn.insert(stored) }
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try container.write { txn in
                    for number in 0..<100 { try txn.insert(Task(title: "new \(number)")) }
                    throw Stop()
                }
            }
            // The next write of ascending keys appends after the stored record again.
            let later = (0..<10).map { Task(title: "later \($0)") }
            try container.write { txn in for task in later { try txn.insert(task) } }
            let titles = try container.read { txn in try txn.fetch(FetchDescriptor<Task>()).map(\.title) }
            #expect(titles.sorted() == (["stored"] + later.map(\.title)).sorted())
        }
    }
}
