import Foundation
import LMDB

/// An entity's external values for a writer that works from the catalog alone (`kvtool import` and `export`): the
/// chunk layout, staging entries and stream locks of ``ExternalValueTable`` and ``StreamedValueWriter``, so that such a
/// writer stores values exactly as the library does and its interrupted writes are cleaned up the same way.
///
/// A value written in one transaction with its record needs no staging. A value larger than a transaction should
/// hold is written over several: the first of them records the value in the staging table under the writer's
/// ``ExternalWriteLock``, the last one gives the value to its record and removes the entry. If the writer dies
/// part-way, its lock goes with it, and ``deleteAbandonedValues(probe:in:)`` (which every container also runs when it
/// opens the entity) deletes the chunks.
///
/// ```swift
/// let values = CatalogExternalValues(entity: "Photo", chunks: chunks, staging: staging, checksums: checksums)
/// try values.writeChunk(bytes, owner: id, field: 3, value: valueID, index: 0, in: txn)
/// ```
package struct CatalogExternalValues: Sendable {
    private let table: ExternalValueTable

    /// The size of the chunks the library writes (every chunk of a value but its last); a descriptor may name another.
    package static var chunkSize: Int { ExternalValueTable.chunkSize }

    /// Works on the entity's chunk, staging and checksum tables, `external/<Entity>`, `staging/<Entity>` and
    /// `checksums/<Entity>`.
    ///
    /// - Parameter checksums: The checksum table; `nil` only for a store of the previous format, whose chunks have
    ///   none.
    package init(entity: String, chunks: Table, staging: Table, checksums: Table?) {
        table = ExternalValueTable(
            entity: entity, chunks: chunks, staging: staging, checksums: checksums,
            requiresChecksums: checksums != nil)
    }

    /// Opens the entity's tables in `environment`, which the catalog says it has.
    ///
    /// - Parameter isChecked: Whether the store's format has checksums (2 and later).
    /// - Throws: ``KVStoreError/damaged`` naming a table the file lacks.
    package static func open(entity: String, environment: Environment, isChecked: Bool) throws -> CatalogExternalValues
    {
        let table = try ExternalValueTable.open(
            entity: entity, environment: environment, exists: true, isChecked: isChecked)
        return CatalogExternalValues(
            entity: entity, chunks: table.chunks, staging: table.staging, checksums: table.checksums)
    }

    /// The table names a new entity with external values needs created, the checksum table among them.
    package static func tableNames(entity: String) -> [String] {
        [Catalog.externalTableName(entity), Catalog.stagingTableName(entity), Catalog.checksumTableName(entity)]
    }

    /// Calls `body` with chunk `index` of a value of `size` bytes in chunks of `chunkSize`, once its size and
    /// checksum are checked.
    ///
    /// - Throws: ``KVStoreError/missingExternalData`` for a missing chunk or one of the wrong size,
    ///   ``KVStoreError/damaged`` for one whose checksum does not match.
    package func withChunk<R>(
        _ index: Int, owner: UUID, field: (id: UInt32, name: String), value: UUID, size: Int, chunkSize: Int,
        in txn: borrowing Transaction, _ body: (BorrowedBytes) throws -> R
    ) throws -> R {
        let descriptor = ExternalValueDescriptor(valueID: value, byteCount: size, chunkSize: chunkSize)
        return try table.withChunk(index, of: descriptor, owner: owner, field: field, in: txn, body)
    }

    /// The chunk table.
    package var chunks: Table { table.chunks }

    /// The staging table.
    package var staging: Table { table.staging }

    /// The key of chunk `chunk` of a value: owner, field id, value ID and chunk number, big-endian.
    package static func chunkKey(owner: UUID, field: UInt32, value: UUID, chunk: Int) -> [UInt8] {
        ExternalValueTable.key(owner: owner, field: field, value: value, chunk: chunk)
    }

    /// The key prefix of a value's chunks, which is also the key of its staging entry.
    package static func valueKey(owner: UUID, field: UInt32, value: UUID) -> [UInt8] {
        ExternalValueTable.key(owner: owner, field: field, value: value)
    }

    /// Writes `bytes` as chunk `index` of a value, whole: a descriptor's chunk size is whatever it says.
    ///
    /// - Throws: What LMDB throws.
    package func writeChunk(
        _ bytes: BorrowedBytes, owner: UUID, field: UInt32, value: UUID, index: Int,
        in txn: borrowing Transaction
    ) throws {
        try table.putChunk(bytes, owner: owner, field: field, value: value, index: index, in: txn)
    }

    /// Deletes the chunks of one value.
    ///
    /// - Throws: What LMDB throws.
    package func deleteValue(owner: UUID, field: UInt32, value: UUID, in txn: borrowing Transaction) throws {
        try table.deleteValue(owner: owner, field: field, value: value, in: txn)
    }

    /// Deletes every external value of a record, staged ones included, as the library does when it deletes a model:
    /// for a writer that deletes records from the catalog alone (`kvtool import` applying an export's delete lines).
    ///
    /// - Throws: What LMDB throws.
    package func deleteAll(owner: UUID, in txn: borrowing Transaction) throws {
        try table.deleteAll(owner: owner, in: txn)
    }

    /// Records that a value is written over several transactions by the holder of `lock`, in the transaction of its
    /// first chunks.
    ///
    /// - Throws: What LMDB throws.
    package func beginStaging(
        owner: UUID, field: UInt32, value: UUID, lock: ExternalWriteLock, in txn: borrowing Transaction
    ) throws {
        try table.beginStaging(owner: owner, field: field, value: value, lockToken: lock.token, in: txn)
    }

    /// Removes a staged value's entry, in the transaction that gives the value to its record.
    ///
    /// - Throws: What LMDB throws.
    package func finishStaging(owner: UUID, field: UInt32, value: UUID, in txn: borrowing Transaction) throws {
        try table.finishStaging(owner: owner, field: field, value: value, in: txn)
    }

    /// The writer of a staged value: `nil` when the value is not staged, `.some(nil)` when its entry does not read.
    ///
    /// - Throws: What LMDB throws.
    package func stagingWriter(
        owner: UUID, field: UInt32, value: UUID, in txn: borrowing Transaction
    ) throws -> StagingWriter?? {
        try Self.valueKey(owner: owner, field: field, value: value).withBorrowedBytes { key in
            guard let bytes = try txn.bytes(forKey: key, in: staging) else { return nil }
            return .some(StagingWriter(bytes))
        }
    }

    /// Deletes the chunks of staged values whose writer is gone (its lock is free), as a container does when it opens
    /// the entity.
    ///
    /// - Returns: How many values were deleted.
    /// - Throws: ``KVStoreError/storage`` when a lock cannot be tested; what LMDB throws.
    @discardableResult
    package func deleteAbandonedValues(probe: StoreLockProbe, in txn: borrowing Transaction) throws -> Int {
        try table.deleteAbandonedValues(in: txn) { writer in try writer?.isInFlight(probe: probe) ?? false }
    }
}

/// The lock a writer holds while it writes external values over several transactions: its staging entries name the
/// lock's token, and the kernel releases the lock when the process dies, however it dies (see ``StoreLock``).
package final class ExternalWriteLock: Sendable {
    /// The token staging entries name.
    package let token: UInt32
    private let held: HeldStoreLock

    /// Takes a lock under a fresh token in the store at `directory`.
    ///
    /// - Throws: ``KVStoreError/storage`` when the data file cannot be opened for writing or locked.
    package init(directory: String) throws {
        while true {
            let token = StoreLock.newStreamToken()
            if let held = try StoreLock.streamedValue(token).tryAcquire(in: directory) {
                self.token = token
                self.held = held
                return
            }
        }
    }
}
