import Foundation
import LMDB

/// An entity's external values: the chunk table, the staging table of streamed writes under way, and the
/// operations on them, whatever the model type.
///
/// A chunk's key is the owner's 16-byte ID, the field's id (4 bytes), the value's 16-byte ID and the chunk's number
/// (4 bytes), all big-endian, so the chunks of a value, of a field and of a model are each one contiguous range.
final class ExternalValueTable: Sendable {
    /// The size of every chunk but a value's last.
    ///
    /// Each chunk is one overflow run of exactly 64 pages of 4 KiB: an overflow run has a 16-byte page header, so
    /// 256 KiB less 16 bytes fills it to the byte. Chunks below LMDB's 2 KB overflow threshold would need 130 times
    /// as many B-tree entries for a value; the README's "External storage" section has the measurements.
    static let chunkSize = 64 * 4096 - 16

    /// The length of a chunk key.
    static let keyLength = 40

    let entity: String
    let chunks: Table
    let staging: Table
    /// The CRC-32C of each chunk, under the chunk's key; `nil` only in a store of the previous format opened
    /// read-only, which has none.
    let checksums: Table?
    /// Whether every chunk must have a checksum: false only in a store written before checksums, until opening it
    /// gave its chunks theirs.
    let requiresChecksums: Bool
    /// The environment the tables are in, which tells the tables of one store from another's; `nil` for a writer
    /// that works from the catalog alone.
    let environment: Environment?

    init(
        entity: String, chunks: Table, staging: Table, checksums: Table?, requiresChecksums: Bool,
        environment: Environment? = nil
    ) {
        self.entity = entity
        self.chunks = chunks
        self.staging = staging
        self.checksums = checksums
        self.requiresChecksums = requiresChecksums
        self.environment = environment
    }

    /// Whether `other` holds its chunks in the same store as this table: the same container's, or another
    /// container's of the same store in this process.
    func isInSameStore(as other: ExternalValueTable) -> Bool {
        if self === other { return true }
        guard let environment, let otherEnvironment = other.environment else { return false }
        return environment.sharesEnvironment(with: otherEnvironment)
    }

    /// Opens the tables of an entity's external values.
    ///
    /// - Parameters:
    ///   - exists: Whether the catalog lists external fields of the entity, so that its tables must be in the file.
    ///   - isChecked: Whether the store's format has checksums for every chunk; a store written before them gets its
    ///     checksum table created.
    /// - Throws: ``KVStoreError/damaged`` naming a table the catalog implies and the file lacks.
    static func open(
        entity: String, environment: Environment, exists: Bool, isChecked: Bool
    ) throws -> ExternalValueTable {
        func table(_ name: String, mustExist: Bool) throws -> Table {
            mustExist
                ? try SchemaLoader.existingTable(name, options: [], entity: entity, environment: environment)
                : try environment.openTable(named: name, create: true)
        }
        let checksumName = Catalog.checksumTableName(entity)
        let checksums =
            environment.isReadOnly && !isChecked
            ? try SchemaLoader.presentTable(checksumName, options: [], entity: entity, environment: environment)
            : try table(checksumName, mustExist: exists && isChecked)
        return ExternalValueTable(
            entity: entity,
            chunks: try table(Catalog.externalTableName(entity), mustExist: exists),
            staging: try table(Catalog.stagingTableName(entity), mustExist: exists),
            checksums: checksums, requiresChecksums: isChecked, environment: environment)
    }

    /// The little-endian CRC-32C of a chunk, as its checksum entry holds it.
    static func checksum(of chunk: BorrowedBytes) -> [UInt8] {
        withBorrowedBytes(of: Checksum.crc32c(chunk).littleEndian, Array.init)
    }

    // MARK: - Keys

    /// The key of chunk `index` of a value, or the prefix of its value, field or owner when later parts are `nil`.
    static func key(owner: UUID, field: UInt32? = nil, value: UUID? = nil, chunk: Int? = nil) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(keyLength)
        key.appendBytes(of: owner.uuid)
        if let field { key.appendBytes(of: field.bigEndian) }
        if let value { key.appendBytes(of: value.uuid) }
        if let chunk { key.appendBytes(of: UInt32(truncatingIfNeeded: chunk).bigEndian) }
        return key
    }

    // MARK: - Writing

    /// Writes `bytes` as the chunks of a value, the first one numbered `firstChunk`.
    func writeChunks(
        _ bytes: BorrowedBytes,
        owner: UUID,
        field: UInt32,
        value: UUID,
        firstChunk: Int,
        in txn: borrowing Transaction
    ) throws {
        var offset = 0
        var index = firstChunk
        while offset < bytes.count {
            let end = min(offset + Self.chunkSize, bytes.count)
            let chunk = bytes.extracting(offset..<end)
            let key = Self.key(owner: owner, field: field, value: value, chunk: index)
            try txn.put(chunk, forKey: key, in: chunks)
            if let checksums { try txn.put(Self.checksum(of: chunk), forKey: key, in: checksums) }
            offset = end
            index += 1
        }
    }

    /// Writes `bytes` whole as chunk `index` of a value, with its checksum: a descriptor's chunk size is whatever it
    /// says.
    func putChunk(
        _ bytes: BorrowedBytes, owner: UUID, field: UInt32, value: UUID, index: Int, in txn: borrowing Transaction
    ) throws {
        let key = Self.key(owner: owner, field: field, value: value, chunk: index)
        try txn.put(bytes, forKey: key, in: chunks)
        if let checksums { try txn.put(Self.checksum(of: bytes), forKey: key, in: checksums) }
    }

    /// Writes a value held in memory and returns its descriptor.
    func write(
        _ data: Data, owner: UUID, field: UInt32, in txn: borrowing Transaction
    ) throws
        -> ExternalValueDescriptor
    {
        let descriptor = ExternalValueDescriptor(
            valueID: UUID.timeOrdered(), byteCount: data.count, chunkSize: Self.chunkSize)
        try data.withBorrowedBytes { bytes in
            try writeChunks(bytes, owner: owner, field: field, value: descriptor.valueID, firstChunk: 0, in: txn)
        }
        return descriptor
    }

    // MARK: - Deleting

    /// Deletes every entry of `table` whose key starts with `prefix`.
    ///
    /// The keys are collected first and then deleted, rather than deleted through the cursor that walks them.
    private func deleteRange(_ prefix: [UInt8], in table: Table, txn: borrowing Transaction) throws {
        var keys: [[UInt8]] = []
        try txn.scanEntries(table, in: .prefix(prefix)) { key, _ in
            keys.append(Array(key))
            return true
        }
        for key in keys { try txn.delete(forKey: key, in: table) }
    }

    /// Deletes the chunks of one value.
    func deleteValue(owner: UUID, field: UInt32, value: UUID, in txn: borrowing Transaction) throws {
        try deleteChunks(Self.key(owner: owner, field: field, value: value), txn: txn)
    }

    /// Deletes the chunks whose keys start with `prefix`, and their checksums.
    private func deleteChunks(_ prefix: [UInt8], txn: borrowing Transaction) throws {
        try deleteRange(prefix, in: chunks, txn: txn)
        if let checksums { try deleteRange(prefix, in: checksums, txn: txn) }
    }

    /// Deletes every external value of a model, and the staged ones of writes to it that never finished.
    func deleteAll(owner: UUID, in txn: borrowing Transaction) throws {
        try deleteChunks(Self.key(owner: owner), txn: txn)
        try deleteRange(Self.key(owner: owner), in: staging, txn: txn)
    }

    /// Deletes the values of one field of a model, finished or staged.
    func deleteField(owner: UUID, field: UInt32, in txn: borrowing Transaction) throws {
        try deleteChunks(Self.key(owner: owner, field: field), txn: txn)
        try deleteRange(Self.key(owner: owner, field: field), in: staging, txn: txn)
    }

    /// Whether the entity has no chunk at all.
    func isEmpty(in txn: borrowing Transaction) throws -> Bool {
        try txn.count(of: chunks) == 0
    }

    // MARK: - Staging

    /// Records that a streamed value is being written in several transactions: until ``finishStaging``, its chunks
    /// belong to no record, and a later open of the store deletes them once the writer let go of its lock.
    ///
    /// The entry's value is the writer's process ID (for display) and the token of the ``StoreLock`` it holds while
    /// it writes, each 4 bytes big-endian. Entries written before the lock existed hold the process ID alone.
    func beginStaging(
        owner: UUID, field: UInt32, value: UUID, lockToken: UInt32, in txn: borrowing Transaction
    ) throws {
        var writer: [UInt8] = []
        writer.appendBytes(of: UInt32(bitPattern: getpid()).bigEndian)
        writer.appendBytes(of: lockToken.bigEndian)
        try txn.put(writer, forKey: Self.key(owner: owner, field: field, value: value), in: staging)
    }

    /// Whether a streamed value is listed in the staging table: written, and not given to its record yet.
    func isStaged(owner: UUID, field: UInt32, value: UUID, in txn: borrowing Transaction) throws -> Bool {
        try txn.value(forKey: Self.key(owner: owner, field: field, value: value), in: staging) != nil
    }

    /// Removes a streamed value from the staging table, in the transaction that gives it to its record or abandons it.
    func finishStaging(owner: UUID, field: UInt32, value: UUID, in txn: borrowing Transaction) throws {
        try txn.delete(forKey: Self.key(owner: owner, field: field, value: value), in: staging)
    }

    /// Deletes the values of streamed writes that did not finish, except those `isInFlight` says are still being
    /// written, given the staging entry's writer.
    ///
    /// - Returns: How many values were deleted.
    @discardableResult
    func deleteAbandonedValues(
        in txn: borrowing Transaction, isInFlight: (StagingWriter?) throws -> Bool
    ) throws -> Int {
        var staged: [(owner: UUID, field: UInt32, value: UUID, writer: StagingWriter?)] = []
        try txn.scanEntries(staging) { key, value in
            guard key.count == 36 else { return true }
            let field = UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
            staged.append(
                (
                    UUID(bytes: key), field, UUID(bytes: key.extracting(20..<36)),
                    StagingWriter(value)
                ))
            return true
        }
        var deleted = 0
        for entry in staged where try !isInFlight(entry.writer) {
            try deleteValue(owner: entry.owner, field: entry.field, value: entry.value, in: txn)
            try finishStaging(owner: entry.owner, field: entry.field, value: entry.value, in: txn)
            deleted += 1
        }
        return deleted
    }

    // MARK: - Reading

    /// Calls `body` with the bytes of chunk `index` of a value, checking that it is there and of the right size.
    ///
    /// - Warning: The bytes are LMDB's memory map, valid only inside `body`.
    /// - Throws: ``KVStoreError/missingExternalData`` naming the entity, field and ID when the chunk is missing or
    ///   of the wrong size.
    func withChunk<R>(
        _ index: Int,
        of descriptor: ExternalValueDescriptor,
        owner: UUID,
        field: (id: UInt32, name: String),
        in txn: borrowing Transaction,
        _ body: (BorrowedBytes) throws -> R
    ) throws -> R {
        let key = Self.key(owner: owner, field: field.id, value: descriptor.valueID, chunk: index)
        let expected = descriptor.size(ofChunk: index)
        return try txn.withBytes(forKey: key, in: chunks) { bytes in
            guard let bytes else {
                throw KVStoreError(
                    .missingExternalData, entity: entity, id: owner, field: field.name,
                    message: "Chunk \(index) of \(descriptor.chunkCount) of \(entity).\(field.name) of \(owner) is "
                        + "missing: the value was replaced or deleted since it was read, or the store is damaged")
            }
            guard bytes.count == expected else {
                throw KVStoreError(
                    .missingExternalData, entity: entity, id: owner, field: field.name,
                    message: "Chunk \(index) of \(entity).\(field.name) of \(owner) holds \(bytes.count) bytes "
                        + "instead of \(expected): the store is damaged")
            }
            let stored = try checksums.flatMap { try txn.value(forKey: key, in: $0) }
            if stored.map({ !$0.elementsEqual(Self.checksum(of: bytes)) }) ?? requiresChecksums {
                throw KVStoreError(
                    .damaged, entity: entity, id: owner, field: field.name,
                    message: "Chunk \(index) of \(entity).\(field.name) of \(owner) (table '\(chunks.name ?? "")') is "
                        + "damaged: \(stored == nil ? "it has no checksum" : "its checksum does not match its bytes"). "
                        + "Nothing of it was read; run 'kvtool check' on the store, and restore it from a backup")
            }
            return try body(bytes)
        }
    }

    /// Checks that every chunk of a value is stored with the right size, and no other under its value ID.
    func verify(
        _ descriptor: ExternalValueDescriptor,
        owner: UUID,
        field: (id: UInt32, name: String),
        in txn: borrowing Transaction
    ) throws {
        var count = 0
        var damage: String?
        try txn.scanEntries(chunks, in: .prefix(Self.key(owner: owner, field: field.id, value: descriptor.valueID))) {
            key, value in
            let index =
                key.count == Self.keyLength
                ? Int(UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 36, as: UInt32.self))) : -1
            if index != count {
                damage = "chunk \(count) of \(descriptor.chunkCount) is missing"
                return false
            }
            if index >= descriptor.chunkCount || value.count != descriptor.size(ofChunk: index) {
                damage = "chunk \(index) does not fit a value of \(descriptor.byteCount) bytes"
                return false
            }
            count += 1
            return true
        }
        if damage == nil, count != descriptor.chunkCount {
            damage = "\(descriptor.chunkCount - count) of its \(descriptor.chunkCount) chunks are missing"
        }
        if let damage {
            throw KVStoreError(
                .missingExternalData, entity: entity, id: owner, field: field.name,
                message: "The value of \(entity).\(field.name) of \(owner) is not fully stored: \(damage)")
        }
    }
}

/// The writer a staging entry names: its process, and the token of the lock it holds while it writes.
package struct StagingWriter: Sendable, Equatable {
    /// The writing process's ID, for display: by the time it is read it may belong to another process.
    package var processID: pid_t
    /// The ``StoreLock/streamedValue(_:)`` token the writer holds, or `nil` for an entry written before these locks
    /// existed.
    package var lockToken: UInt32?

    /// Reads a staging entry's value: 8 bytes (process ID, lock token) or, from older versions, 4 (process ID);
    /// `nil` for anything else.
    package init?(_ value: BorrowedBytes) {
        guard value.count == 4 || value.count == 8 else { return nil }
        processID = pid_t(bitPattern: UInt32(bigEndian: value.loadUnaligned(as: UInt32.self)))
        lockToken = value.count == 8 ? UInt32(bigEndian: value.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) : nil
    }

    /// Whether the write may still be under way: its lock is held (by any process, this one included), or for an
    /// entry without a lock token, its process exists.
    ///
    /// - Parameter probe: A descriptor of the store's data file to test the lock with.
    /// - Throws: ``KVStoreError/storage`` when the lock cannot be tested.
    package func isInFlight(probe: StoreLockProbe) throws -> Bool {
        guard let lockToken else {
            // kill(2) with signal 0 only checks that the process exists; EPERM means it exists under another user.
            return kill(processID, 0) == 0 || errno == EPERM
        }
        return try probe.isHeld(.streamedValue(lockToken))
    }
}
