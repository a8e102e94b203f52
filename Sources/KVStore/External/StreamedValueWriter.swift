import Foundation
import LMDB

/// Writes a streamed external value in batches of chunks, one write transaction per batch, then gives it to its
/// model in a last transaction.
///
/// A write transaction keeps the pages it dirties in memory until it commits, so one transaction per batch is what
/// bounds the memory a value larger than memory needs. Until the last transaction, the value's chunks belong to no
/// record: the staging table lists the value, and a later open of the store deletes it if this process died.
final class StreamedValueWriter<M: Model> {
    /// How many bytes one write transaction stores: as many whole chunks as fit in 16 MiB (64), as a copy of a value
    /// does (``ExternalValueCopies``).
    static var batchSize: Int {
        ExternalValueCopies.batchBytes / ExternalValueTable.chunkSize * ExternalValueTable.chunkSize
    }

    let container: ModelContainer
    let store: EntityStore<M>
    let attribute: EntityStore<M>.StoredExternalAttribute
    let table: ExternalValueTable
    let owner: UUID
    let valueID = UUID.timeOrdered()
    /// Held while the value is written, so that a container opening the store meanwhile, in this process or another
    /// one, keeps its staged chunks; the kernel lets go of it if the process dies.
    private let lock: HeldStoreLock
    private let lockToken: UInt32
    private var buffer = Data()
    private var chunkCount = 0
    private var byteCount = 0
    private var isStaged = false

    /// Prepares to write the value of `keyPath` of the stored model `owner`.
    ///
    /// - Throws: ``KVStoreError/invalidModel`` when the attribute is not external, ``KVStoreError/modelNotFound``
    ///   when no model has the ID.
    init(container: ModelContainer, keyPath: AnyKeyPath, owner: UUID) throws {
        self.container = container
        self.owner = owner
        store = try container.store(for: M.self)
        (attribute, table) = try store.externalAttribute(keyPath)
        let store = self.store
        let exists = try container.performRead { txn in try store.exists(owner, in: txn.transaction.pointee) }
        guard exists else {
            throw KVStoreError(
                .modelNotFound, entity: store.name, id: owner, field: attribute.name,
                message: "Cannot write \(store.name).\(attribute.name) of \(owner): no \(store.name) has this ID; "
                    + "save the model first")
        }
        (lock, lockToken) = try Self.takeLock(in: container.path)
    }

    /// Takes a streamed-value lock under a fresh token; another writer holding the same token is a 1 in 2^32 chance,
    /// met by drawing again.
    private static func takeLock(in directory: String) throws -> (HeldStoreLock, UInt32) {
        while true {
            let token = StoreLock.newStreamToken()
            if let held = try StoreLock.streamedValue(token).tryAcquire(in: directory) { return (held, token) }
        }
    }

    /// Adds bytes to the value, writing a batch of chunks whenever one is full.
    func append(_ bytes: Data) throws {
        buffer.append(bytes)
        if buffer.count >= Self.batchSize { try write(final: false) }
    }

    /// Adds bytes to the value, from async code: a full batch is written on the container's writer queue.
    func append(_ bytes: Data) async throws {
        buffer.append(bytes)
        if buffer.count >= Self.batchSize { try await write(final: false) }
    }

    /// Writes the buffered whole chunks, or every buffered byte when `final`.
    private func write(final: Bool) throws {
        guard let batch = nextBatch(final: final) else { return }
        try container.performWrite { txn in try batch.write(in: txn) }
        didWrite(batch)
    }

    private func write(final: Bool) async throws {
        guard let batch = nextBatch(final: final) else { return }
        try await container.write { txn in try batch.write(in: txn) }
        didWrite(batch)
    }

    private func nextBatch(final: Bool) -> Batch? {
        let count = final ? buffer.count : buffer.count / ExternalValueTable.chunkSize * ExternalValueTable.chunkSize
        guard count > 0 else { return nil }
        return Batch(
            table: table, owner: owner, field: attribute.id, valueID: valueID, lockToken: lockToken,
            firstChunk: chunkCount, isFirst: !isStaged, bytes: buffer.prefix(count))
    }

    private func didWrite(_ batch: Batch) {
        isStaged = true
        chunkCount += (batch.bytes.count + ExternalValueTable.chunkSize - 1) / ExternalValueTable.chunkSize
        byteCount += batch.bytes.count
        buffer = Data(buffer.dropFirst(batch.bytes.count))
    }

    /// Writes what is left and gives the value to its model, deleting the value it replaces.
    ///
    /// - Returns: The model as saved, with the new value.
    /// - Throws: ``KVStoreError/modelNotFound`` when the model was deleted meanwhile; nothing of the value remains.
    func finish() throws -> M {
        try write(final: true)
        let attach = attachment()
        return try container.performWrite { txn in try attach(txn) }
    }

    /// Writes what is left and gives the value to its model, from async code.
    func finish() async throws -> M {
        try await write(final: true)
        let attach = attachment()
        return try await container.write { txn in try attach(txn) }
    }

    private func attachment() -> @Sendable (borrowing ModelTransaction) throws -> M {
        let descriptor = ExternalValueDescriptor(
            valueID: valueID, byteCount: byteCount, chunkSize: ExternalValueTable.chunkSize)
        let (store, attribute, table, owner, isStaged) = (store, attribute, table, owner, isStaged)
        return { txn in
            guard var model = try store.model(for: owner, in: txn.transaction.pointee, reader: store.reader) else {
                throw KVStoreError(
                    .modelNotFound, entity: store.name, id: owner, field: attribute.name,
                    message: "\(store.name) \(owner) was deleted while its \(attribute.name) was written; the value "
                        + "was not kept")
            }
            if isStaged {
                try table.finishStaging(
                    owner: owner, field: attribute.id, value: descriptor.valueID, in: txn.transaction.pointee)
            }
            attribute.set(ExternalData(stored: descriptor), in: &model)
            try txn.insert(model)
            return store.withOrigins(model)
        }
    }

    /// Deletes the chunks written so far, after the source or a write failed.
    func abandon() throws {
        guard isStaged else { return }
        let (table, owner, field, valueID) = (table, owner, attribute.id, valueID)
        try container.performWrite { txn in
            try table.deleteValue(owner: owner, field: field, value: valueID, in: txn.transaction.pointee)
            try table.finishStaging(owner: owner, field: field, value: valueID, in: txn.transaction.pointee)
        }
    }

    /// Runs `body`, which feeds the writer, then finishes the value; when anything fails, deletes what was written
    /// and throws the failure.
    func run(_ body: () throws -> Void) throws -> M {
        do {
            try body()
            return try finish()
        } catch {
            try abandon(after: error)
        }
    }

    /// Runs `body`, which feeds the writer from async code, then finishes the value, or deletes what was written.
    func run(_ body: () async throws -> Void) async throws -> M {
        do {
            try await body()
            return try await finish()
        } catch {
            try abandon(after: error)
        }
    }

    private func abandon(after error: any Error) throws -> Never {
        do {
            try abandon()
        } catch let cleanup {
            // The staging table still lists the value, so the next open of the store deletes its chunks.
            throw KVStoreError(
                .storage, entity: store.name, id: owner, field: attribute.name,
                message: "Writing \(store.name).\(attribute.name) of \(owner) failed (\(error)), and so did deleting "
                    + "the chunks written so far; the next open of the store deletes them", cause: cleanup)
        }
        throw error
    }
}

/// One batch of a streamed value's chunks and what writing it needs, to hand to a write transaction.
private struct Batch: Sendable {
    let table: ExternalValueTable
    let owner: UUID
    let field: UInt32
    let valueID: UUID
    let lockToken: UInt32
    let firstChunk: Int
    let isFirst: Bool
    let bytes: Data

    func write(in txn: borrowing ModelTransaction) throws {
        // The body may run again after the map grew: every put here replaces the same key with the same bytes.
        if isFirst {
            try table.beginStaging(
                owner: owner, field: field, value: valueID, lockToken: lockToken, in: txn.transaction.pointee)
        }
        try bytes.withBorrowedBytes { bytes in
            try table.writeChunks(
                bytes, owner: owner, field: field, value: valueID, firstChunk: firstChunk, in: txn.transaction.pointee)
        }
    }
}
