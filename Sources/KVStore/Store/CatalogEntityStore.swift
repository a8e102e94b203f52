import Foundation
import LMDB

/// An entity of the store that the container's program does not declare, worked on from its catalog entry alone.
///
/// A delete rule that reaches such an entity (a script that declares projects but not their tasks deletes a project
/// whose tasks cascade) applies as the catalog says: the related records are found through the catalog's indexes,
/// read and rewritten as value trees (``RecordValue``), and every index of the entity is kept in step with keys
/// computed from the records.
final class CatalogEntityStore: AnyEntityStore {
    let name: String
    let records: Table
    let allRelationships: [RelationshipInfo]
    private let fields: FieldTable
    private let indexes: [DerivedIndex]
    /// The fields a deleted model's history tombstone keeps.
    private let preservedOnDeletion: [String]
    private let externalTable: ExternalValueTable?
    private let longKeyHash: LongKeyHash

    /// Opens the tables of `entry`'s entity.
    ///
    /// - Parameters:
    ///   - longKeyHash: How the store completes index keys that LMDB's limit cuts.
    ///   - hasChecksums: Whether the store's format has checksums for every external chunk.
    /// - Throws: ``KVStoreError/damaged`` when a table the entry names is missing from the file.
    init(entry: EntityCatalog, environment: Environment, longKeyHash: LongKeyHash, hasChecksums: Bool) throws {
        self.longKeyHash = longKeyHash
        name = entry.name
        fields = entry.fields
        preservedOnDeletion = entry.preservedOnDeletion
        allRelationships = entry.relationships.map(RelationshipInfo.init(catalog:))
        records = try SchemaLoader.existingTable(
            Catalog.recordTableName(entry.name), options: [], entity: entry.name, environment: environment)
        indexes = try entry.indexes.map { index in
            DerivedIndex(
                catalog: index,
                table: try SchemaLoader.existingTable(
                    Catalog.indexTableName(entry.name, index.name),
                    options: Catalog.indexTableOptions(unique: index.isUnique), entity: entry.name,
                    environment: environment))
        }
        if entry.external.isEmpty {
            externalTable = nil
        } else {
            externalTable = try ExternalValueTable.open(
                entity: entry.name, environment: environment, exists: true, isChecked: hasChecksums)
        }
    }

    var modelTables: [Table] {
        [records] + indexes.map(\.table)
    }

    func exists(_ id: UUID, in txn: borrowing Transaction) throws -> Bool {
        try withKey(id) { key in try txn.containsKey(key, in: records) }
    }

    func missing(_ ids: [UUID], in txn: borrowing Transaction) throws -> [Int] {
        var missing: [Int] = []
        for (position, id) in ids.enumerated() where try !exists(id, in: txn) { missing.append(position) }
        return missing
    }

    func referrers(to ids: [UUID], field: String, in txn: borrowing Transaction) throws -> [UUID: [UUID]] {
        guard let index = indexes.first(where: { $0.catalog.fields == [field] }) else {
            throw KVStoreError(
                .invalidRelationship, entity: name, field: field,
                message: "The store's \(name) has no index on \(field), which its relationship needs")
        }
        var found: [UUID: [UUID]] = [:]
        var key: [UInt8] = []
        try txn.withCursor(on: index.table) { cursor in
            for id in ids {
                key.removeAll(keepingCapacity: true)
                Optional(id).appendIndexKey(to: &key)
                var referring: [UUID] = []
                if index.catalog.isUnique {
                    if try cursor.seek(to: key) {
                        _ = try cursor.withCurrentEntry { _, value in referring.append(UUID(bytes: value)) }
                    }
                } else {
                    try cursor.forEachValuePage(ofKey: key) { page in
                        for offset in stride(from: 0, to: page.count - 15, by: 16) {
                            referring.append(UUID(bytes: page.extracting(offset..<offset + 16)))
                        }
                    }
                }
                if !referring.isEmpty { found[id] = referring }
            }
        }
        return found
    }

    func storedReferences(of ids: [UUID], relationship name: String, in txn: borrowing Transaction) throws -> [UUID] {
        guard let field = allRelationships.first(where: { $0.name == name })?.field else { return [] }
        var related: [UUID] = []
        for id in ids {
            guard let record = try record(id, in: txn) else { continue }
            switch RecordIndexKeys.value(of: field, in: record) {
            case .uuid(let target): related.append(target)
            case .array(let elements):
                for case .uuid(let target) in elements { related.append(target) }
            default: break
            }
        }
        return related
    }

    func rewriteReferences(
        in field: String,
        of referrers: [UUID],
        through rewrittenID: (UUID) -> UUID?,
        in txn: borrowing Transaction,
        changes: ChangeCollector?
    ) throws {
        var fields = self.fields
        for id in referrers {
            guard let old = try record(id, in: txn), case .object(var entries) = old,
                let position = entries.firstIndex(where: { $0.name == field })
            else { continue }
            switch entries[position].value {
            case .uuid(let target):
                guard let new = rewrittenID(target) else {
                    // A to-one set to nil is stored as an absent field, as `Codable` writes it.
                    entries.remove(at: position)
                    break
                }
                guard new != target else { continue }
                entries[position].value = .uuid(new)
            case .array(let elements):
                let rewritten = elements.compactMap { element -> RecordValue? in
                    guard case .uuid(let target) = element else { return element }
                    return rewrittenID(target).map(RecordValue.uuid)
                }
                guard rewritten != elements else { continue }
                entries[position].value = .array(rewritten)
            default:
                continue
            }
            let new = RecordValue.object(entries)
            try withKey(id) { key in
                let derived = try DerivedIndexChanges(
                    indexes, entity: name, id: id, old: old, new: new, key: key, records: records, fields: fields,
                    hash: longKeyHash, in: txn)
                try txn.put(new.encode(fields: &fields), forKey: key, in: records)
                try derived.apply(key: key, in: txn)
            }
            changes?.saved(id, in: name, replacing: true)
        }
    }

    func deleteModels(_ ids: [UUID], in txn: borrowing Transaction, changes: ChangeCollector?) throws {
        // In key order, as a declared entity's store deletes, which the change log's order relies on.
        for id in ids.sorted(by: { $0.isOrdered(before: $1) }) {
            guard let old = try record(id, in: txn) else { continue }
            try withKey(id) { key in
                try DerivedIndexChanges(
                    indexes, entity: name, id: id, old: old, new: nil, key: key, records: records, fields: fields,
                    hash: longKeyHash, in: txn
                ).apply(key: key, in: txn)
                _ = try txn.delete(forKey: key, in: records)
            }
            try externalTable?.deleteAll(owner: id, in: txn)
            if let changes, changes.keepsDeletedValues, !preservedOnDeletion.isEmpty {
                changes.keep(old.fields(named: preservedOnDeletion), of: id, in: name)
            }
            changes?.deleted(id, in: name)
        }
    }

    func anyModels(for ids: [UUID], in txn: borrowing Transaction) throws -> [any StoredModel] {
        throw KVStoreError(
            .unknownEntity, entity: name,
            message: "The entity \(name) is not part of this container; pass its model type to ModelContainer(for:) "
                + "to read its models")
    }

    /// The stored record `id` as a value tree, or `nil`.
    private func record(_ id: UUID, in txn: borrowing Transaction) throws -> RecordValue? {
        try withKey(id) { key in
            try txn.withBytes(forKey: key, in: records) { bytes -> RecordValue? in
                guard let bytes else { return nil }
                do {
                    return try RecordValue.decode(from: bytes, fields: fields)
                } catch {
                    throw KVStoreError.undecodable(error, entity: name, id: id, table: Catalog.recordTableName(name))
                }
            }
        }
    }
}
