import Foundation
import Testing

@testable import KVStore

/// A model whose optional fields are interned in the order they are first stored.
private struct Sparse: Model, Equatable {
    var id = UUID.timeOrdered()
    var first: Int?
    var second: Int?
}

/// An error that makes a write transaction abort.
private struct Abort: Error {}

/// The smallest forms of the failures the model-based tests found, kept as regression tests.
@Suite struct ModelBasedRegressionTests {
    @Test func aSaveThatUpdatesAModelAndDeletesWhatItReferencesAppliesTheNullifyRule() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container in
            let context = ModelContext(container)
            let tag = TagC(label: "urgent")
            var task = TaskC(title: "Ship", tagIDs: [tag.id])
            context.insert(tag)
            context.insert(task)
            try context.save()

            task.title = "Ship it"
            context.insert(task)
            context.delete(tag)
            try context.save()
            #expect(try context.model(for: task.id, as: TaskC.self) == TaskC(id: task.id, title: "Ship it"))
        }
    }

    @Test func aFieldFirstStoredByAnAbortedTransactionReachesTheCatalogWhenItIsStoredAgain() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let model = Sparse(first: nil, second: 2)
        do {
            let container = try ModelContainer(for: Sparse.self, configuration: configuration)
            defer { try? container.close() }
            // Interns `id` and `second`, and the catalog entry goes with the aborted transaction.
            #expect(throws: Abort.self) {
                try container.write { txn in
                    try txn.insert(Sparse(second: 1))
                    throw Abort()
                }
            }
            // The next transaction gets the same LMDB transaction ID.
            try container.write { txn in try txn.insert(model) }
        }
        let reopened = try ModelContainer(for: Sparse.self, configuration: configuration)
        defer { try? reopened.close() }
        #expect(try reopened.read { txn in try txn.model(for: model.id, as: Sparse.self) } == model)
    }
}
