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

    @Test func readmeShowsTheExamplesAsTested() throws {
        #expect(
            try documentationDifferences([("external models", 0), ("external example", 8)], testedIn: #filePath) == [])
    }
}
