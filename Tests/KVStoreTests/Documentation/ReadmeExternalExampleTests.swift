import Foundation
import KVStore
import TestSupport
import Testing

// Example: begin external models
struct Photo: Model {
    var id = UUID.timeOrdered()
    var title: String
    var image = ExternalData()

    static let entity = Entity<Photo>(externalStorage: [.attribute(\.image)])
}
// Example: end external models

// Example: begin optional external models
struct Item: Model {
    var id = UUID.timeOrdered()
    var title: String
    var photo: ExternalData?  // SwiftData: @Attribute(.externalStorage) var photo: Data?

    static let entity = Entity<Item>(externalStorage: [.attribute(\.photo)])
}
// Example: end optional external models

/// The external storage example of README.md, as it is written there.
@Suite struct ReadmeExternalExampleTests {
    @Test func externalExample() async throws {
        let directory = StoreDirectory()
        let path = directory.path
        let scanFile = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString)")
        let copyFile = FileManager.default.temporaryDirectory.appendingPathComponent("copy-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: scanFile)
            try? FileManager.default.removeItem(at: copyFile)
        }
        let scanBytes = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 / 7) })
        try scanBytes.write(to: scanFile)
        #expect(FileManager.default.createFile(atPath: copyFile.path, contents: nil))

        // Example: begin external example
        let container = try ModelContainer(for: Photo.self, configuration: ModelConfiguration(path: path))

        // A value held in memory is written in chunks when its model is saved.
        let icon = Photo(title: "Icon", image: ExternalData(Data(repeating: 0xFF, count: 4096)))
        try await container.write { txn in try txn.insert(icon) }

        // A large one is streamed in from a file (or an async sequence of chunks), 16 MiB per transaction.
        var scan = Photo(title: "Scan")
        try await container.write { [scan] txn in try txn.insert(scan) }
        scan = try container.setData(for: \.image, of: scan, contentsOf: scanFile)

        // A fetch reads the record only: the size is known, the bytes are not read.
        let fetched = try await container.read { [scan] txn in try txn.model(for: scan.id, as: Photo.self) }
        print(fetched?.image.byteCount ?? 0)  // 3000000

        // Read a value whole, into a file chunk by chunk, or as an async sequence of chunks.
        let iconBytes = try container.data(for: \.image, of: icon)
        let output = try FileHandle(forWritingTo: copyFile)
        try container.write(\.image, of: scan, to: output)
        try output.close()
        var streamed = 0
        for try await chunk in container.chunks(for: \.image, of: scan) { streamed += chunk.count }

        // Deleting a model deletes its chunks in the same transaction, whatever the path of the delete.
        try await container.write { [scan] txn in _ = try txn.delete(Photo.self, id: scan.id) }
        // Example: end external example

        #expect(fetched?.image.byteCount == 3_000_000)
        #expect(iconBytes == Data(repeating: 0xFF, count: 4096))
        #expect(try Data(contentsOf: copyFile) == scanBytes)
        #expect(streamed == 3_000_000)
        let error = try #require(throws: KVStoreError.self) { try container.data(for: \.image, of: scan) }
        #expect(error == .modelNotFound)
        try container.close()
    }

    @Test func optionalAndCopiedValuesExample() throws {
        let directory = StoreDirectory()
        let path = directory.path
        let photoBytes = Data(repeating: 0xAB, count: 300_000)

        // Example: begin optional external example
        let container = try ModelContainer(for: Item.self, configuration: ModelConfiguration(path: path))
        let context = ModelContext(container)

        // nil stores nothing; a value is written in chunks when its model is saved.
        let lamp = Item(title: "Lamp", photo: ExternalData(photoBytes))
        context.insert(lamp)
        context.insert(Item(title: "Shade"))
        try context.save()

        // A stored value assigned to another model is copied when that model is saved: streamed into chunks of its
        // own, 16 MiB per transaction, before the save commits.
        let stored = try context.model(for: lamp.id, as: Item.self)
        let twin = Item(title: "Lamp, again", photo: stored?.photo)
        context.insert(twin)
        try context.save()

        // Saving a model whose value was set to nil deletes its chunks; the copy keeps its bytes.
        if var cleared = stored {
            cleared.photo = nil
            context.insert(cleared)
            try context.save()
        }
        print(try context.data(for: \.photo, of: lamp) == nil)  // true
        print(try context.data(for: \.photo, of: twin)?.count ?? 0)  // 300000
        // Example: end optional external example

        #expect(try context.data(for: \.photo, of: lamp) == nil)
        #expect(try context.data(for: \.photo, of: twin) == photoBytes)
        let items = try context.fetch(FetchDescriptor<Item>(sortBy: [SortDescriptor(\.title)]))
        #expect(items.map(\.title) == ["Lamp", "Lamp, again", "Shade"])
        #expect(items.map { $0.photo?.byteCount } == [nil, 300_000, nil])
        try container.close()
    }

    @Test func readmeShowsTheExamplesAsTested() throws {
        #expect(
            try documentationDifferences(
                [
                    ("external models", 0), ("external example", 8), ("optional external models", 0),
                    ("optional external example", 8),
                ], testedIn: #filePath) == [])
    }
}
