import Foundation
import KVStoreInspection
import LMDB
import Testing

@testable import KVStore

/// Chunks of pattern bytes that kill the process once `killAfter` bytes were handed out.
struct KillingChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let killAfter: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let killAfter: Int
        var offset = 0

        mutating func next() async throws -> Data? {
            if offset >= killAfter {
                kill(getpid(), SIGKILL)
                try await _Concurrency.Task.sleep(for: .seconds(10))
            }
            offset += 1 << 20
            return patternBytes(offset - (1 << 20)..<offset)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(killAfter: killAfter)
    }
}

@Suite struct ExternalCrashTests {
    static func open(_ path: String) throws -> ModelContainer {
        try ModelContainer(for: externalModelTypes, configuration: ModelConfiguration(path: path, durability: .off))
    }

    /// The errors kvtool's integrity check finds in the store at `path`.
    static func problems(at path: String) throws -> [String] {
        try integrityErrors(at: path)
    }

    @Test func aProcessKilledWhileStreamingLeavesNoOrphanAfterReopen() async throws {
        let directory = StoreDirectory()
        let photo = PhotoE(title: "Kept", image: ExternalData(patternBytes(10)))
        do {
            let container = try Self.open(directory.path)
            try await container.write { txn in try txn.insert(photo) }
            try container.close()
        }
        // The child streams two and a half batches, so that two write transactions of chunks commit before it dies.
        await #expect(processExitsWith: .signal(SIGKILL)) {
            [path = directory.path as String, id = photo.id as UUID] in
            do {
                let container = try Self.open(path)
                guard let photo = try await container.read({ txn in try txn.model(for: id, as: PhotoE.self) }) else {
                    exit(3)
                }
                try await container.setData(
                    for: \.image, of: photo,
                    from: KillingChunks(killAfter: 5 * StreamedValueWriter<PhotoE>.batchSize / 2))
            } catch {
                exit(1)
            }
            exit(2)
        }
        // What the dead writer staged is there before the store is opened again, listed in the staging table: kvtool's
        // check warns of it, and finds no damage...
        let staged = try StoreInspection.check(path: directory.path).problems.map(\.description)
        #expect(
            staged.contains { $0.hasPrefix("warning: ") && $0.contains("staged chunks") && $0.contains("stopped") },
            Comment(rawValue: staged.joined(separator: "\n")))
        #expect(!staged.contains { $0.hasPrefix("error: ") }, Comment(rawValue: staged.joined(separator: "\n")))

        // ...and gone once it is.
        let container = try Self.open(directory.path)
        #expect(try container.stagedCount(of: PhotoE.self) == 0)
        #expect(try container.chunkCount(of: PhotoE.self) == 1)
        let stored = try #require(try await container.read { txn in try txn.model(for: photo.id, as: PhotoE.self) })
        #expect(try container.data(for: \.image, of: stored) == patternBytes(10))
        try container.close()
        #expect(try Self.problems(at: directory.path) == [])
    }
}

/// Chunks that open a second container on the store half-way, as another part of the program might.
struct ReopeningChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let path: String
    let total: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: ReopeningChunks
        var offset = 0

        mutating func next() async throws -> Data? {
            guard offset < source.total else { return nil }
            if offset == source.total / 2 {
                // The second container shares the environment; opening it runs the clean-up of abandoned writes.
                let second = try ExternalCrashTests.open(source.path)
                #expect(try second.stagedCount(of: PhotoE.self) == 1)
            }
            let count = Swift.min(source.total / 4, source.total - offset)
            defer { offset += count }
            return patternBytes(offset..<offset + count)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }
}

@Suite struct ExternalStagingTests {
    @Test func openingTheStoreMidWriteKeepsTheWriteOfThisProcess() async throws {
        let directory = StoreDirectory()
        let container = try ExternalCrashTests.open(directory.path)
        defer { try? container.close() }
        let photo = PhotoE(title: "Streamed")
        try await container.write { txn in try txn.insert(photo) }
        let total = 4 * StreamedValueWriter<PhotoE>.batchSize
        let saved = try await container.setData(
            for: \.image, of: photo, from: ReopeningChunks(path: directory.path, total: total))
        #expect(saved.image.byteCount == total)
        #expect(try container.data(for: \.image, of: saved) == patternBytes(total))
        #expect(try container.stagedCount(of: PhotoE.self) == 0)
    }

    @Test func openingDeletesOnlyTheStagedValuesOfDeadWriters() throws {
        let directory = StoreDirectory()
        let photo = PhotoE(title: "Owner")
        var container = try ExternalCrashTests.open(directory.path)
        try container.write { txn in try txn.insert(photo) }
        let store = try container.store(for: PhotoE.self)
        let table = try #require(store.externalTable)
        let field = try #require(store.externalAttributes.first?.id)
        // Process 1 is alive; a process ID above the kernel's largest is not.
        let writers: [(value: UUID, pid: Int32)] = [(UUID.timeOrdered(), 1), (UUID.timeOrdered(), Int32.max - 1)]
        try container.environment.write { txn in
            for writer in writers {
                let key = ExternalValueTable.key(owner: photo.id, field: field, value: writer.value)
                try txn.put(
                    withUnsafeBytes(of: UInt32(bitPattern: writer.pid).bigEndian, Array.init), forKey: key,
                    in: table.staging)
                try txn.put(
                    [7], forKey: ExternalValueTable.key(owner: photo.id, field: field, value: writer.value, chunk: 0),
                    in: table.chunks)
            }
        }
        try container.close()
        container = try ExternalCrashTests.open(directory.path)
        defer { try? container.close() }
        #expect(try container.stagedCount(of: PhotoE.self) == 1)
        #expect(try container.chunkCount(of: PhotoE.self) == 1)
        let reopened = try #require(try container.store(for: PhotoE.self).externalTable)
        let kept = try container.environment.read { txn in
            try txn.containsKey(
                ExternalValueTable.key(owner: photo.id, field: field, value: writers[0].value, chunk: 0),
                in: reopened.chunks)
        }
        #expect(kept)
    }

    @Test func openingKeepsTheStagedValuesWhoseLockIsHeldAndDeletesTheOthers() throws {
        let directory = StoreDirectory()
        let photo = PhotoE(title: "Owner")
        var container = try ExternalCrashTests.open(directory.path)
        try container.write { txn in try txn.insert(photo) }
        let store = try container.store(for: PhotoE.self)
        let table = try #require(store.externalTable)
        let field = try #require(store.externalAttributes.first?.id)
        // A writer alive somewhere holds its lock; one killed lost it, whatever its process ID became since.
        let live = (value: UUID.timeOrdered(), token: UInt32(7))
        let dead = (value: UUID.timeOrdered(), token: UInt32(8))
        let held = try #require(try StoreLock.streamedValue(live.token).tryAcquire(in: directory.path))
        try container.environment.write { txn in
            for writer in [live, dead] {
                try table.beginStaging(
                    owner: photo.id, field: field, value: writer.value, lockToken: writer.token, in: txn)
                try txn.put(
                    [7], forKey: ExternalValueTable.key(owner: photo.id, field: field, value: writer.value, chunk: 0),
                    in: table.chunks)
            }
        }
        try container.close()
        container = try ExternalCrashTests.open(directory.path)
        #expect(try container.stagedCount(of: PhotoE.self) == 1)
        #expect(try container.chunkCount(of: PhotoE.self) == 1)
        try container.close()
        // Once the live writer lets go, the next open deletes its chunks too.
        withExtendedLifetime(held) {}
        _ = consume held
        container = try ExternalCrashTests.open(directory.path)
        defer { try? container.close() }
        #expect(try container.stagedCount(of: PhotoE.self) == 0)
        #expect(try container.chunkCount(of: PhotoE.self) == 0)
    }
}
