import Foundation
import KVStore
import LMDB

/// A record that cannot be written as it is: a unique value already taken, a value no index key holds.
struct RejectedRecord: Error, Equatable {
    /// What is wrong.
    let message: String
}

/// Writes records inside a write transaction as the library's `EntityStore` does: upsert by ID, each index's
/// entries replaced (unique ones only when they are the record's), unique constraints enforced, new field names
/// interned in the entity's field table.
///
/// Everything that can reject a record is checked before anything of it is written, so a rejected record leaves
/// the transaction as it was and the rest of a chunk can go on.
///
/// ```swift
/// let writer = try RecordWriter(store: store)
/// try store.environment.write { txn in
///     var entities = try writer.entities(in: txn)
///     try writer.write(record, id: id, entity: &entities["Task"]!, txn: txn)
///     try writer.saveCatalog(entities["Task"]!, txn: txn)
/// }
/// ```
struct RecordWriter {
    /// The tables of one entity.
    struct Target {
        /// The record table.
        let records: Table
        /// The indexes with their tables, in catalog order.
        let indexes: [(catalog: IndexCatalog, table: Table)]
    }

    private let store: InspectedStore
    private let targets: [String: Target]

    /// Opens the tables of every entity, which LMDB wants done before transactions begin.
    ///
    /// - Throws: ``ToolError`` when a table is missing.
    init(store: InspectedStore) throws {
        self.store = store
        var targets: [String: Target] = [:]
        for entity in store.entities {
            targets[entity.name] = Target(
                records: try store.recordTable(of: entity),
                indexes: try entity.indexes.map { ($0, try store.indexTable(of: entity, $0)) })
        }
        self.targets = targets
    }

    /// The catalog entries as the transaction sees them, by name.
    ///
    /// - Throws: ``ToolError`` when the catalog changed since the store was opened (an index added or dropped).
    func entities(in txn: borrowing Transaction) throws -> [String: EntityCatalog] {
        let (entities, _) = try InspectedStore.readEntities(in: txn, catalog: store.catalog)
        var byName: [String: EntityCatalog] = [:]
        for entity in entities {
            guard let target = targets[entity.name], target.indexes.map(\.catalog.name) == entity.indexes.map(\.name)
            else { throw ToolError("The catalog of \(entity.name) changed during the import; run the import again") }
            byName[entity.name] = entity
        }
        return byName
    }

    /// Writes a record and its index entries, replacing the record with the same ID.
    ///
    /// - Parameters:
    ///   - value: The record.
    ///   - id: Its ID.
    ///   - entity: The entity's catalog entry; new field names are interned in its field table.
    ///   - txn: The write transaction.
    /// - Throws: ``RejectedRecord`` for a unique value held by another record, a value no index key holds, or a
    ///   stored record that does not decode, with nothing of the record written; what LMDB throws.
    func write(_ value: RecordValue, id: UUID, entity: inout EntityCatalog, txn: borrowing Transaction) throws {
        guard let target = targets[entity.name] else {
            throw RejectedRecord(message: "the store has no tables for \(entity.name)")
        }
        let key = RecordKey.bytes(id)
        let fields = entity.fields
        let old = try txn.withUnsafeBytes(forKey: key, in: target.records) { bytes -> RecordValue? in
            guard let bytes else { return nil }
            guard let old = try? RecordValue.decode(from: bytes, fields: fields) else {
                throw RejectedRecord(message: "the stored \(entity.name) \(id) does not decode; run 'kvtool check'")
            }
            return old
        }
        var changes: [(index: (catalog: IndexCatalog, table: Table), removed: [[UInt8]], added: [[UInt8]])] = []
        for index in target.indexes {
            let oldKeys = old.flatMap { try? IndexEntries.keys(of: $0, in: index.catalog) } ?? []
            let newKeys: [[UInt8]]
            do {
                newKeys = try IndexEntries.keys(of: value, in: index.catalog)
            } catch {
                throw RejectedRecord(message: "\(entity.name) \(id): \(error)")
            }
            let added = newKeys.filter { !oldKeys.contains($0) }
            if index.catalog.isUnique {
                for indexKey in added {
                    if let owner = try txn.value(forKey: indexKey, in: index.table), owner != key {
                        throw uniqueViolation(index.catalog, value: value, id: id, owner: owner, entity: entity.name)
                    }
                }
            }
            changes.append((index, oldKeys.filter { !newKeys.contains($0) }, added))
        }
        for change in changes {
            for indexKey in change.removed {
                if change.index.catalog.isUnique {
                    if try txn.value(forKey: indexKey, in: change.index.table) == key {
                        try txn.delete(forKey: indexKey, in: change.index.table)
                    }
                } else {
                    try txn.delete(key, forKey: indexKey, in: change.index.table)
                }
            }
            for indexKey in change.added { try txn.put(key, forKey: indexKey, in: change.index.table) }
        }
        try txn.put(value.encode(fields: &entity.fields), forKey: key, in: target.records)
    }

    /// Rewrites an entity's catalog entry, for a field table that interned new names.
    ///
    /// - Throws: What LMDB throws.
    func saveCatalog(_ entity: EntityCatalog, txn: borrowing Transaction) throws {
        try Catalog.write(entity, key: Catalog.entityKey(entity.name), in: txn, table: store.catalog)
    }

    private func uniqueViolation(
        _ index: IndexCatalog, value: RecordValue, id: UUID, owner: [UInt8], entity: String
    ) -> RejectedRecord {
        let values = index.fields.map { RecordJSON.defaultJSON(IndexEntries.value(of: $0, in: value)).serialized() }
        let holder = owner.withUnsafeBytes(RecordKey.uuid).map { "\(entity) \($0)" } ?? "another record"
        return RejectedRecord(
            message: "\(entity) \(id): \(index.fields.joined(separator: ", ")) \(values.joined(separator: ", ")) is "
                + "already used by \(holder) (unique index \(index.name))")
    }
}
