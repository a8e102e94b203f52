import Foundation
import LMDB
import Testing

@testable import KVStore

/// A temporary file removed when the test ends.
struct TemporaryFile: ~Copyable {
    let url: URL

    init(contents: Data = Data()) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("kvstore-external-\(UUID().uuidString)")
        try contents.write(to: url)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// An async sequence of chunks of pattern bytes of varied sizes, that throws after `failAfter` bytes when set.
struct PatternChunks: AsyncSequence, Sendable {
    typealias Element = Data

    struct SourceFailure: Error {}

    let total: Int
    var failAfter: Int?

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: PatternChunks
        var offset = 0
        var step = 0

        mutating func next() async throws -> Data? {
            if let failAfter = source.failAfter, offset >= failAfter { throw SourceFailure() }
            guard offset < source.total else { return nil }
            // Sizes that never line up with the store's chunks.
            let sizes = [1, 70_001, 300_000, 4_096, 1_000_003]
            let count = Swift.min(sizes[step % sizes.count], source.total - offset)
            step += 1
            defer { offset += count }
            return patternBytes(offset..<offset + count)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }
}

@Suite struct ExternalStreamingTests {
    /// More than a batch of a streamed write, so that it spans two write transactions.
    static let size = StreamedValueWriter<PhotoE>.batchSize + 12_345

    @Test func aFileStreamsInAndOut() throws {
        try withExternalContainer { container in
            let bytes = patternBytes(Self.size)
            let source = try TemporaryFile(contents: bytes)
            let photo = PhotoE(title: "Large")
            try container.write { txn in try txn.insert(photo) }
            let saved = try container.setData(for: \.image, of: photo, contentsOf: source.url)
            #expect(saved.image.byteCount == Self.size)
            #expect(try container.chunkCount(of: PhotoE.self) == chunks(for: Self.size))
            #expect(try container.stagedCount(of: PhotoE.self) == 0)

            let target = try TemporaryFile()
            let handle = try FileHandle(forWritingTo: target.url)
            try container.write(\.image, of: photo, to: handle)
            try handle.close()
            #expect(try Data(contentsOf: target.url) == bytes)
            #expect(try container.data(for: \.image, of: saved) == bytes)
        }
    }

    @Test func anAsyncSequenceStreamsInAndOut() async throws {
        let container = try ModelContainer(
            for: externalModelTypes, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        let photo = PhotoE(title: "Large", image: ExternalData(patternBytes(10)))
        try await container.write { txn in try txn.insert(photo) }
        let saved = try await container.setData(for: \.image, of: photo, from: PatternChunks(total: Self.size))
        #expect(saved.image.byteCount == Self.size)
        // The old value's chunk went with it.
        #expect(try container.chunkCount(of: PhotoE.self) == chunks(for: Self.size))

        var read = Data()
        var count = 0
        for try await chunk in container.chunks(for: \.image, of: photo) {
            #expect(chunk.count <= ExternalValueTable.chunkSize)
            read.append(chunk)
            count += 1
        }
        #expect(count == chunks(for: Self.size))
        #expect(read == patternBytes(Self.size))
    }

    @Test func anEmptySourceStoresAnEmptyValue() async throws {
        try await withExternalContainerAsync { container in
            let photo = PhotoE(title: "Empty", image: ExternalData(patternBytes(10)))
            try await container.write { txn in try txn.insert(photo) }
            let saved = try await container.setData(for: \.image, of: photo, from: PatternChunks(total: 0))
            #expect(saved.image.byteCount == 0)
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
            var iterator = container.chunks(for: \.image, of: photo).makeAsyncIterator()
            #expect(try await iterator.next() == nil)
        }
    }

    @Test func aSourceThatThrowsMidwayWritesNothing() async throws {
        try await withExternalContainerAsync { container in
            let photo = PhotoE(title: "Kept", image: ExternalData(patternBytes(10)))
            try await container.write { txn in try txn.insert(photo) }
            await #expect(throws: PatternChunks.SourceFailure.self) {
                try await container.setData(
                    for: \.image, of: photo, from: PatternChunks(total: Self.size, failAfter: Self.size / 2))
            }
            #expect(try container.chunkCount(of: PhotoE.self) == 1)
            #expect(try container.stagedCount(of: PhotoE.self) == 0)
            #expect(try container.data(for: \.image, of: photo) == patternBytes(10))
        }
    }

    @Test func aValueReplacedWhileStreamedOutThrows() async throws {
        try await withExternalContainerAsync { container in
            let photo = PhotoE(title: "Replaced", image: ExternalData(patternBytes(3 * ExternalValueTable.chunkSize)))
            try await container.write { txn in try txn.insert(photo) }
            var iterator = container.chunks(for: \.image, of: photo).makeAsyncIterator()
            _ = try await iterator.next()
            var replaced = photo
            replaced.image = ExternalData(patternBytes(5))
            try await container.write { [replaced] txn in try txn.insert(replaced) }
            let error = try await #require(throws: KVStoreError.self) { _ = try await iterator.next() }
            #expect(error == .missingExternalData)
            #expect(error.description.contains("PhotoE.image of \(photo.id)"))
        }
    }

    @Test func aModelDeletedWhileItsValueIsStreamedInKeepsNothing() async throws {
        try await withExternalContainerAsync { container in
            let photo = PhotoE(title: "Deleted")
            try await container.write { txn in try txn.insert(photo) }
            let error = try await #require(throws: KVStoreError.self) {
                try await container.setData(
                    for: \.image, of: photo,
                    from: DeletingChunks(container: container, id: photo.id, total: 3 * ExternalValueTable.chunkSize))
            }
            #expect(error == .modelNotFound)
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
            #expect(try container.stagedCount(of: PhotoE.self) == 0)
        }
    }
}

/// Chunks of pattern bytes that delete the model `id` once half of them are read.
struct DeletingChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let container: ModelContainer
    let id: UUID
    let total: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: DeletingChunks
        var offset = 0

        mutating func next() async throws -> Data? {
            guard offset < source.total else { return nil }
            if offset >= source.total / 2 {
                let id = source.id
                _ = try await source.container.write { txn in try txn.delete(PhotoE.self, id: id) }
            }
            let count = Swift.min(100_000, source.total - offset)
            offset += count
            return patternBytes(count)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }
}

/// Opens a store of the external storage models for an async test.
func withExternalContainerAsync(_ body: (ModelContainer) async throws -> Void) async throws {
    let container = try ModelContainer(
        for: externalModelTypes, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
    defer { try? container.close() }
    try await body(container)
}

@Suite struct ExternalStorageBadInputTests {
    @Test func readingAValueOfAModelThatIsNotStoredThrows() throws {
        try withExternalContainer { container in
            let photo = PhotoE(title: "Gone", image: ExternalData(patternBytes(10)))
            try container.write { txn in try txn.insert(photo) }
            let fetched = try #require(try container.read { txn in try txn.model(for: photo.id, as: PhotoE.self) })
            _ = try container.write { txn in try txn.delete(PhotoE.self, id: photo.id) }
            let error = try #require(throws: KVStoreError.self) { try container.data(for: \.image, of: fetched) }
            #expect(error == .modelNotFound)
            #expect(error.description == "Cannot read PhotoE.image of \(photo.id): no PhotoE has this ID")
            #expect(error.entity == "PhotoE")
            #expect(error.field == "image")
            #expect(error.id == photo.id)
        }
    }

    @Test func streamingIntoAModelThatIsNotStoredThrows() throws {
        try withExternalContainer { container in
            let photo = PhotoE(title: "Never saved")
            let source = try TemporaryFile(contents: patternBytes(10))
            let error = try #require(throws: KVStoreError.self) {
                try container.setData(for: \.image, of: photo, contentsOf: source.url)
            }
            #expect(error == .modelNotFound)
            #expect(error.description.contains("Cannot write PhotoE.image of \(photo.id): no PhotoE has this ID"))
            #expect(try container.chunkCount(of: PhotoE.self) == 0)
        }
    }

    @Test func anAttributeNotDeclaredExternalIsRefused() throws {
        struct Loose: Model {
            var id = UUID.timeOrdered()
            var blob = ExternalData()
        }
        try withContainer(Loose.self) { container in
            let model = Loose(blob: ExternalData(patternBytes(10)))
            let error = try #require(throws: KVStoreError.self) { try container.data(for: \.blob, of: model) }
            #expect(error == .invalidModel)
            #expect(error.description.contains("is not declared external"))
            let saving = try #require(throws: KVStoreError.self) {
                try container.write { txn in try txn.insert(model) }
            }
            #expect(saving == .encodingFailed)
            #expect(saving.description.contains("declare the attribute in its entity's externalStorage"))
        }
    }

    @Test func aDescriptorWhoseChunksAreMissingThrows() throws {
        try withExternalContainer { container in
            let photo = PhotoE(title: "Damaged", image: ExternalData(patternBytes(3 * ExternalValueTable.chunkSize)))
            try container.write { txn in try txn.insert(photo) }
            let fetched = try #require(try container.read { txn in try txn.model(for: photo.id, as: PhotoE.self) })
            let descriptor = try #require(fetched.image.descriptor)
            let store = try container.store(for: PhotoE.self)
            let table = try #require(store.externalTable)
            let fieldID = try #require(store.externalAttributes.first { $0.name == "image" }?.id)
            // Damage the store with the raw binding: chunk 1 goes, chunk 2 is cut short.
            try container.environment.write { txn in
                let key = ExternalValueTable.key(owner: photo.id, field: fieldID, value: descriptor.valueID, chunk: 1)
                _ = try txn.delete(forKey: key, in: table.chunks)
                let last = ExternalValueTable.key(owner: photo.id, field: fieldID, value: descriptor.valueID, chunk: 2)
                try txn.put([1, 2, 3], forKey: last, in: table.chunks)
            }
            let missing = try #require(throws: KVStoreError.self) { try container.data(for: \.image, of: fetched) }
            #expect(missing == .missingExternalData)
            #expect(missing.description.contains("Chunk 1 of 3 of PhotoE.image of \(photo.id) is missing"))
            #expect(missing.field == "image")
            #expect(missing.id == photo.id)
            try container.environment.write { txn in
                let key = ExternalValueTable.key(owner: photo.id, field: fieldID, value: descriptor.valueID, chunk: 1)
                try txn.put([UInt8](patternBytes(ExternalValueTable.chunkSize)), forKey: key, in: table.chunks)
            }
            let short = try #require(throws: KVStoreError.self) { try container.data(for: \.image, of: fetched) }
            #expect(short.description.contains("Chunk 1 of PhotoE.image of \(photo.id)"), "\(short)")
            #expect(short == .damaged)
            #expect(short.description.contains("checksum does not match"))
        }
    }

    @Test func aDamagedDescriptorThrowsInsteadOfReadingNonsense() throws {
        struct Descriptor: Encodable {
            var id = UUID()
            var size = -1
            var chunkSize = ExternalValueTable.chunkSize
        }
        struct Forged: Encodable {
            var id: UUID
            var title = "Forged"
            var image = Descriptor()
        }
        try withExternalContainer { container in
            let photo = PhotoE(title: "Real", image: ExternalData(patternBytes(10)))
            try container.write { txn in try txn.insert(photo) }
            let store = try container.store(for: PhotoE.self)
            var fields = store.fields
            var encoder = RecordEncoder()
            let record = try encoder.encode(Forged(id: photo.id), fields: &fields)
            #expect(fields == store.fields, "the forged record uses only interned names")
            try container.environment.write { txn in
                try withKey(photo.id) { key in try txn.put(record, forKey: Array(key), in: store.records) }
            }
            let error = try #require(throws: KVStoreError.self) { try container.data(for: \.image, of: photo) }
            #expect(error == .corruptRecord)
            #expect(error.id == photo.id)
        }
    }
}
