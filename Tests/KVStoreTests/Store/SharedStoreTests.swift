import Foundation
import Testing

@testable import KVStore

/// A model whose optional fields are interned in the order they are first stored.
private struct Sparse: Model, Equatable {
    var id = UUID.timeOrdered()
    var first: Int?
    var second: Int?
}

/// Two containers on one store stand for two processes: each keeps its own field tables, while the environment and
/// the catalog are shared, as the file and its catalog are between processes.
@Suite struct SharedStoreTests {
    private func containers(_ directory: borrowing StoreDirectory) throws -> (ModelContainer, ModelContainer) {
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        return (
            try ModelContainer(for: Sparse.self, configuration: configuration),
            try ModelContainer(for: Sparse.self, configuration: configuration)
        )
    }

    @Test func aContainerReadsModelsWrittenByAnotherAfterItOpened() throws {
        let directory = StoreDirectory()
        let (reader, writer) = try containers(directory)
        defer { try? reader.close() }
        let model = Sparse(first: 1, second: 2)
        try writer.write { txn in try txn.insert(model) }
        #expect(try reader.read { txn in try txn.model(for: model.id, as: Sparse.self) } == model)
        #expect(try ModelContext(reader).fetch(FetchDescriptor<Sparse>()) == [model])
    }

    @Test func aContainerDoesNotReuseFieldIDsAnotherOneInterned() throws {
        let directory = StoreDirectory()
        let (one, other) = try containers(directory)
        defer { try? one.close() }
        // `other` interns `second`; `one` opened before, and must not give `first` the same id.
        let theirs = Sparse(first: nil, second: 2)
        try other.write { txn in try txn.insert(theirs) }
        let mine = Sparse(first: 1, second: nil)
        try one.write { txn in try txn.insert(mine) }
        for container in [one, other] {
            let stored = try container.read { txn in
                (try txn.model(for: theirs.id, as: Sparse.self), try txn.model(for: mine.id, as: Sparse.self))
            }
            #expect(stored.0 == theirs)
            #expect(stored.1 == mine)
        }
    }
}
