import Foundation
import LMDB
import Testing

@testable import KVStore

/// Optional external attributes, `var photo: ExternalData?`: `nil` stores nothing, and setting a stored value to `nil`
/// deletes its chunks.
@Suite struct ExternalOptionalTests {
    static let chunk = ExternalValueTable.chunkSize

    @Test(arguments: [0, 1, chunk, chunk + 1])
    func anOptionalValueRoundTripsBesideANilOne(size: Int) throws {
        try withOptionalExternalContainer { container in
            let item = ItemE(title: "Lamp", photo: ExternalData(patternBytes(size)))
            try container.write { txn in try txn.insert(item) }
            #expect(try container.chunkCount(of: ItemE.self) == chunks(for: size))

            let fetched = try #require(try container.stored(ItemE.self, item.id))
            #expect(fetched.photo?.isStored == true)
            #expect(fetched.photo?.byteCount == size)
            #expect(fetched.scan == nil)
            #expect(try container.data(for: \.photo, of: fetched) == patternBytes(size))
            #expect(try container.data(for: \.scan, of: fetched) == nil)
        }
    }

    @Test func nilStoresNothing() throws {
        try withOptionalExternalContainer { container in
            let item = ItemE(title: "Empty")
            let context = ModelContext(container)
            context.insert(item)
            // Before the save, a nil value reads as nil too.
            #expect(try context.data(for: \.photo, of: item) == nil)
            try context.save()
            #expect(try container.chunkCount(of: ItemE.self) == 0)
            let fetched = try #require(try context.model(for: item.id, as: ItemE.self))
            #expect(fetched.photo == nil)
            #expect(try context.data(for: \.photo, of: fetched) == nil)
        }
    }

    @Test func settingAStoredValueToNilDeletesItsChunks() throws {
        try withOptionalExternalContainer { container in
            let item = ItemE(
                title: "Lamp", photo: ExternalData(patternBytes(2 * Self.chunk + 1)),
                scan: ExternalData(patternBytes(10, seed: 4)))
            try container.write { txn in try txn.insert(item) }
            #expect(try container.chunkCount(of: ItemE.self) == 4)

            var fetched = try #require(try container.stored(ItemE.self, item.id))
            fetched.photo = nil
            let context = ModelContext(container)
            context.insert(fetched)
            try context.save()

            // Only the scan's chunk is left, and the photo reads as nil.
            #expect(try container.chunkCount(of: ItemE.self) == 1)
            let saved = try #require(try container.stored(ItemE.self, item.id))
            #expect(saved.photo == nil)
            #expect(try container.data(for: \.photo, of: saved) == nil)
            #expect(try container.data(for: \.scan, of: saved) == patternBytes(10, seed: 4))
        }
    }

    @Test func settingNilOnAModelThatNeverHadAValueWritesNoChunk() throws {
        try withOptionalExternalContainer { container in
            let bare = ItemE(title: "Bare", scan: ExternalData(patternBytes(5)))
            try container.write { txn in try txn.insert(bare) }
            var item = try #require(try container.stored(ItemE.self, bare.id))
            let scan = try #require(item.scan?.descriptor)
            item.photo = nil
            item.title = "Still bare"
            try container.write { txn in try txn.insert(item) }
            // The scan is the one chunk, under the same value ID; the photo has none.
            #expect(try container.chunkCount(of: ItemE.self) == 1)
            #expect(try container.stagedCount(of: ItemE.self) == 0)
            let saved = try #require(try container.stored(ItemE.self, item.id))
            #expect(saved.title == "Still bare")
            #expect(saved.photo == nil)
            #expect(saved.scan?.descriptor == scan)
        }
    }

    @Test func replacingAnOptionalValueDeletesTheOldChunks() throws {
        try withOptionalExternalContainer { container in
            var item = ItemE(title: "Lamp", photo: ExternalData(patternBytes(3 * Self.chunk)))
            try container.write { txn in try txn.insert(item) }
            item.photo = ExternalData(patternBytes(7, seed: 3))
            try container.write { txn in try txn.insert(item) }
            #expect(try container.chunkCount(of: ItemE.self) == 1)
            #expect(try container.data(for: \.photo, of: item) == patternBytes(7, seed: 3))
        }
    }

    @Test func anOptionalValueStreamsInAndOut() async throws {
        let container = try ModelContainer(
            for: ItemE.self, ShelfE.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        let item = ItemE(title: "Streamed")
        try await container.write { [item] txn in try txn.insert(item) }
        let source = try TemporaryFile(contents: patternBytes(Self.chunk + 9))
        let saved = try container.setData(for: \.photo, of: item, contentsOf: source.url)
        #expect(saved.photo?.byteCount == Self.chunk + 9)
        #expect(try container.chunkCount(of: ItemE.self) == 2)

        var read = Data()
        for try await chunk in container.chunks(for: \.photo, of: item) { read.append(chunk) }
        #expect(read == patternBytes(Self.chunk + 9))
        var none = 0
        for try await _ in container.chunks(for: \.scan, of: item) { none += 1 }
        #expect(none == 0)

        let output = try TemporaryFile(contents: Data())
        let handle = try FileHandle(forWritingTo: output.url)
        #expect(try container.write(\.photo, of: item, to: handle))
        #expect(try !container.write(\.scan, of: item, to: handle))
        try handle.close()
        #expect(try Data(contentsOf: output.url) == patternBytes(Self.chunk + 9))

        let streamed = try await container.setData(
            for: \.scan, of: saved, from: dataStream([patternBytes(3), patternBytes(4, seed: 2)]))
        #expect(try container.data(for: \.scan, of: streamed) == patternBytes(3) + patternBytes(4, seed: 2))
    }

    @Test func deletesAndCascadesDeleteOptionalValues() throws {
        try withOptionalExternalContainer { container in
            let shelf = ShelfE(label: ExternalData(patternBytes(100)))
            let bare = ShelfE()
            let items = [
                ItemE(title: "photo", photo: ExternalData(patternBytes(Self.chunk + 1)), shelfID: shelf.id),
                ItemE(title: "nothing", shelfID: shelf.id),
                ItemE(title: "scan", scan: ExternalData(patternBytes(5)), shelfID: bare.id),
            ]
            try container.write { txn in
                try txn.insert(shelf)
                try txn.insert(bare)
                for item in items { try txn.insert(item) }
            }
            #expect(try container.chunkCount(of: ItemE.self) == 3)
            #expect(try container.chunkCount(of: ShelfE.self) == 1)

            // The cascade reaches the items of the shelf, with a value or without.
            let context = ModelContext(container)
            context.delete(shelf)
            try context.save()
            #expect(try container.chunkCount(of: ItemE.self) == 1)
            #expect(try container.chunkCount(of: ShelfE.self) == 0)
            #expect(try container.stored(ItemE.self, items[1].id) == nil)

            try container.write { txn in _ = try txn.delete(ShelfE.self, id: bare.id) }
            #expect(try container.chunkCount(of: ItemE.self) == 0)
        }
    }
}

/// `parts` as an async sequence of chunks.
func dataStream(_ parts: [Data]) -> AsyncStream<Data> {
    AsyncStream { continuation in
        for part in parts { continuation.yield(part) }
        continuation.finish()
    }
}
