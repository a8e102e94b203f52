import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// Why an import stopped writing: another writer changed the store since the validation, in a way the import cannot
/// go on from. Nothing of the chunk under way was written.
struct ImportStop: Error {
    /// The line the import stopped at.
    let line: Int
    /// What happened.
    let message: String
}

/// Writes an import's records inside a write transaction as the library writes them, from the catalog: every index
/// of the entity kept in step through the library's derivation (``DerivedIndexChanges``, which checks unique values
/// before anything is written), new field names interned in the entity's field table (which the caller writes back
/// to the catalog in the same transaction), and external values stored in the library's chunk layout, the replaced
/// ones deleted.
///
/// Everything the validation checked that another writer may have changed since is checked again here, in the
/// transaction: the policy for a stored ID, that referenced records still exist, unique values; a change throws
/// ``ImportStop`` and the transaction is abandoned.
///
/// ```swift
/// let outcome = try RecordWriter(tables: tables, policy: .fail).write(
///     work, entry: &entry, scratch: scratch, scratchTxn: scratchTxn, targets: targets, txn: txn)
/// ```
struct RecordWriter {
    /// The tables of one entity, opened before transactions begin.
    struct Tables {
        /// The record table.
        let records: Table
        /// The index tables, by index name.
        var indexes: [String: Table]
        /// The external values, when the entity has external fields.
        let values: CatalogExternalValues?
    }

    /// A record of the input and the chunks of its values that this transaction writes.
    struct Work {
        /// The record's entity.
        let entity: ImportEntity
        /// Its ID.
        let id: UUID
        /// Its line.
        let line: Int
        /// The record.
        let record: RecordValue
        /// The chunks of its values this transaction writes, by field, in order.
        var chunks: [(field: String, index: Int, data: Data)] = []
        /// The fields whose values earlier transactions staged chunks of.
        var staged: Set<String> = []
    }

    /// What writing a record did.
    enum Outcome: Equatable {
        /// A new record.
        case written
        /// A record in place of the stored one.
        case replaced
        /// Nothing: the stored record with the ID stays (`--on-conflict skip`).
        case keptStored
    }

    /// The tables of the record's entity.
    let tables: Tables
    /// What to do with a stored record of the same ID.
    let policy: ConflictPolicy
    /// How the store completes index keys that LMDB's limit cuts.
    var longKeyHash = LongKeyHash.standard

    /// Writes a record whose chunks are all in hand, replacing the stored record with its ID as the policy says.
    ///
    /// - Parameters:
    ///   - work: The record and the chunks this transaction writes.
    ///   - entry: The entity's catalog entry as the transaction sees it; new field names are interned in it.
    ///   - scratch: The validation's scratch store, which tells the records the input has.
    ///   - scratchTxn: A read transaction of the scratch store.
    ///   - targets: The record tables of the entities references point to.
    ///   - txn: The write transaction.
    /// - Throws: ``ImportStop`` when another writer changed the store in a way the validation did not see;
    ///   ``KVStoreError`` from the index derivation (a unique value another writer took meanwhile, an index only its
    ///   program can compute); what LMDB throws.
    func write(
        _ work: Work, entry: inout EntityCatalog, scratch: ImportScratch, scratchTxn: borrowing Transaction,
        targets: [String: Target], txn: borrowing Transaction
    ) throws -> Outcome {
        let name = work.entity.name
        let key = RecordKey.bytes(work.id)
        let old = try RecordKey.record(work.id, of: entry, in: tables.records, txn: txn)
        if old != nil {
            switch policy {
            case .fail:
                throw ImportStop(
                    line: work.line, message: "another writer stored \(name) \(work.id) after the input was checked")
            case .skip:
                try abandonStaged(work, entry: entry, txn: txn)
                return .keptStored
            case .replace:
                break
            }
        }
        try checkReferences(work, scratch: scratch, scratchTxn: scratchTxn, targets: targets, txn: txn)
        let indexes = try entry.indexes.map { index in
            guard let table = tables.indexes[index.name] else { throw MissingTables() }
            return DerivedIndex(catalog: index, table: table)
        }
        let derived = try key.withBorrowedBytes { key in
            try DerivedIndexChanges(
                indexes, entity: name, id: work.id, old: old, new: work.record, key: key, records: tables.records,
                fields: entry.fields, hash: longKeyHash, in: txn)
        }
        if let values = tables.values {
            for field in entry.external {
                let new = ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: work.record))
                let stored = old.flatMap { ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: $0)) }
                if let stored, stored.valueID != new?.valueID {
                    try values.deleteValue(owner: work.id, field: field.fieldID, value: stored.valueID, in: txn)
                }
                guard let new else { continue }
                // The same value ID as the stored value's: the validation found the same bytes, which stay.
                if stored?.valueID == new.valueID { continue }
                try writeChunks(work, field: field, descriptor: new, values: values, txn: txn)
                if work.staged.contains(field.name) {
                    try verify(new, of: work, field: field, values: values, txn: txn)
                    try values.finishStaging(owner: work.id, field: field.fieldID, value: new.valueID, in: txn)
                }
            }
        }
        try txn.put(work.record.encode(fields: &entry.fields), forKey: key, in: tables.records)
        try key.withBorrowedBytes { key in try derived.apply(key: key, in: txn) }
        return old == nil ? .written : .replaced
    }

    /// Deletes the stored record `id`, as the library deletes a model of an entity it knows from the catalog alone
    /// (`CatalogEntityStore.deleteModels`): its entries in every index through ``DerivedIndexChanges`` (unique ones
    /// included), the record, and every external value of it, staged ones included. No delete rule is applied: an
    /// incremental export carries the source's cascades and nullifications as changes of their own.
    ///
    /// - Parameters:
    ///   - id: The record's ID.
    ///   - entry: The entity's catalog entry as the transaction sees it.
    ///   - txn: The write transaction.
    /// - Returns: The values the entity keeps on deletion, for the history's tombstone (none when it keeps none), or
    ///   `nil` when the store has no record with the ID, and nothing was done.
    /// - Throws: ``InspectionError/damaged`` for a stored record that does not decode; ``KVStoreError`` from the index
    ///   derivation (an index only its program can compute); `MissingTables` for an index whose table is not open;
    ///   what LMDB throws.
    func delete(
        _ id: UUID, entry: EntityCatalog, txn: borrowing Transaction
    ) throws -> [(name: String, value: RecordValue)]? {
        guard let old = try RecordKey.record(id, of: entry, in: tables.records, txn: txn) else { return nil }
        let indexes = try entry.indexes.map { index in
            guard let table = tables.indexes[index.name] else { throw MissingTables() }
            return DerivedIndex(catalog: index, table: table)
        }
        try RecordKey.bytes(id).withBorrowedBytes { key in
            try DerivedIndexChanges(
                indexes, entity: entry.name, id: id, old: old, new: nil, key: key, records: tables.records,
                fields: entry.fields, hash: longKeyHash, in: txn
            ).apply(key: key, in: txn)
            _ = try txn.delete(forKey: key, in: tables.records)
        }
        try tables.values?.deleteAll(owner: id, in: txn)
        return old.fields(named: entry.preservedOnDeletion)
    }

    /// Writes chunks of a record whose other chunks come in later transactions, staging their values, and returns
    /// the fields staged by this transaction.
    ///
    /// - Throws: What LMDB throws.
    func stage(
        _ work: Work, entry: EntityCatalog, lock: ExternalWriteLock, txn: borrowing Transaction
    ) throws -> Set<String> {
        guard let values = tables.values else { return [] }
        let old = try RecordKey.record(work.id, of: entry, in: tables.records, txn: txn)
        var staged: Set<String> = []
        for field in entry.external where work.chunks.contains(where: { $0.field == field.name }) {
            guard let new = ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: work.record)) else { continue }
            let stored = old.flatMap { ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: $0)) }
            if stored?.valueID == new.valueID { continue }
            if !work.staged.contains(field.name) {
                try values.beginStaging(owner: work.id, field: field.fieldID, value: new.valueID, lock: lock, in: txn)
                staged.insert(field.name)
            }
            try writeChunks(work, field: field, descriptor: new, values: values, txn: txn)
        }
        return staged
    }

    private func writeChunks(
        _ work: Work, field: ExternalFieldCatalog, descriptor: ExternalDescriptor, values: CatalogExternalValues,
        txn: borrowing Transaction
    ) throws {
        for chunk in work.chunks where chunk.field == field.name {
            try chunk.data.withBorrowedBytes { bytes in
                try values.writeChunk(
                    bytes, owner: work.id, field: field.fieldID, value: descriptor.valueID, index: chunk.index, in: txn)
            }
        }
    }

    /// Deletes the staged chunks of a record that is not written after all.
    private func abandonStaged(_ work: Work, entry: EntityCatalog, txn: borrowing Transaction) throws {
        guard let values = tables.values else { return }
        for field in entry.external where work.staged.contains(field.name) {
            guard let new = ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: work.record)) else { continue }
            try values.deleteValue(owner: work.id, field: field.fieldID, value: new.valueID, in: txn)
            try values.finishStaging(owner: work.id, field: field.fieldID, value: new.valueID, in: txn)
        }
    }

    /// Checks that every chunk of a value written over several transactions is stored, with its size.
    private func verify(
        _ descriptor: ExternalDescriptor, of work: Work, field: ExternalFieldCatalog, values: CatalogExternalValues,
        txn: borrowing Transaction
    ) throws {
        var count = 0
        var isWhole = true
        let prefix = CatalogExternalValues.valueKey(owner: work.id, field: field.fieldID, value: descriptor.valueID)
        try txn.scan(values.chunks, in: .prefix(prefix)) { _, chunk in
            isWhole = count < descriptor.chunkCount && chunk.count == descriptor.size(ofChunk: count)
            count += 1
            return isWhole
        }
        guard isWhole && count == descriptor.chunkCount else {
            throw ImportStop(
                line: work.line,
                message: "the chunks of \(work.entity.name).\(field.name) of \(work.id) written so far are no longer "
                    + "all stored (another writer changed the record meanwhile)")
        }
    }

    /// Checks that each referenced record is stored, or comes later in the input.
    private func checkReferences(
        _ work: Work, scratch: ImportScratch, scratchTxn: borrowing Transaction, targets: [String: Target],
        txn: borrowing Transaction
    ) throws {
        for reference in work.entity.references {
            guard let target = targets[reference.target] else { continue }
            let (ids, _) = RelationshipPath.storedIDs(RecordIndexKeys.value(of: reference.field, in: work.record))
            for id in ids where try !txn.containsKey(RecordKey.bytes(id), in: target.records) {
                if let later = try scratch.record(target.ordinal, id, in: scratchTxn), later.line > work.line,
                    later.1.isWritten
                {
                    continue
                }
                throw ImportStop(
                    line: work.line,
                    message: "\(work.entity.name) \(work.id) references \(reference.target) \(id), which another "
                        + "writer deleted after the input was checked")
            }
        }
    }

    /// An entity that references point to: its record table and its ordinal in the schema.
    struct Target {
        /// The record table.
        let records: Table
        /// The entity's ordinal.
        let ordinal: UInt16
    }
}

/// Thrown inside a write transaction that needs a table not open yet (an index a program added meanwhile): the
/// transaction is abandoned, the tables are opened, and it runs again.
struct MissingTables: Error {}
