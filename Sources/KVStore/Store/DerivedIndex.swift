import Foundation
import LMDB

/// An index of the store that a writer maintains from the catalog's description rather than from a declaration: its
/// keys are computed from the records by field name (``RecordIndexKeys``).
///
/// Every writer keeps every index of the store in step, whatever its Swift declarations say: a container maintains
/// the indexes its models declare through their key paths, and these through the records.
package struct DerivedIndex: Sendable {
    /// The index as the catalog describes it.
    package let catalog: IndexCatalog
    /// Its table.
    package let table: Table

    package init(catalog: IndexCatalog, table: Table) {
        self.catalog = catalog
        self.table = table
    }
}

/// The entry changes one write makes in derived indexes, computed and checked before anything is written.
package struct DerivedIndexChanges {
    /// One index's change: the entries to remove and add, as (stored key, whole key).
    private struct Change {
        let index: DerivedIndex
        let removed: [(key: [UInt8], whole: [UInt8])]
        let added: [(key: [UInt8], whole: [UInt8])]
    }

    private var changes: [Change] = []

    /// Computes the entries to remove and add for the record under `key` going from `old` to `new` (`nil` for no
    /// record), and checks the unique ones.
    ///
    /// - Parameters:
    ///   - records: The entity's record table, where the holder of a unique value is read to tell values apart that
    ///     share a cut key.
    ///   - fields: The entity's field table, to read those records.
    ///   - hash: How the store completes keys that LMDB's limit cuts.
    ///   - mergesNewModels: Whether a new model (no `old`) whose value another model holds under a unique index that
    ///     merges on conflict is a `UniqueMerge` for the caller to carry out (a model's save), rather than a
    ///     violation (an import of records by ID).
    /// - Throws: ``KVStoreError/schemaChanged`` for an index whose keys only a program declaring it can compute,
    ///   `UniqueMerge` when a new model's value is held by another under a unique index that merges on conflict,
    ///   ``KVStoreError/uniqueViolation`` when a unique index holds a new value for another model otherwise, and
    ///   ``KVStoreError/encodingFailed`` when a value cannot be part of a key; nothing is written then.
    package init(
        _ indexes: [DerivedIndex],
        entity: String,
        id: UUID,
        old: RecordValue?,
        new: RecordValue?,
        key: BorrowedBytes,
        records: Table,
        fields: FieldTable,
        hash: LongKeyHash,
        mergesNewModels: Bool = false,
        in txn: borrowing Transaction
    ) throws {
        for index in indexes {
            guard index.catalog.isDerivable else {
                throw KVStoreError(
                    .schemaChanged, entity: entity, id: id, field: index.catalog.name,
                    message: "Cannot write \(entity) \(id): the store's index \(index.catalog.name) has a key encoding "
                        + "of its own that only a program declaring it can compute, and this program does not declare "
                        + "it; declare the index in \(entity)'s entity, or write through the program that does. "
                        + "Nothing was written")
            }
            let oldKeys = try old.map { try Self.keys(of: $0, index, hash: hash, entity: entity, id: id) } ?? []
            let newKeys = try new.map { try Self.keys(of: $0, index, hash: hash, entity: entity, id: id) } ?? []
            let added = newKeys.filter { new in !oldKeys.contains { $0.whole == new.whole } }
            let removed = oldKeys.filter { old in !newKeys.contains { $0.whole == old.whole } }
            if index.catalog.isUnique {
                for entry in added {
                    let holder = try entry.key.withBorrowedBytes { storedKey in
                        try UniqueIndexEntries.holder(of: storedKey, other: key, in: index.table, txn: txn) { holder in
                            try Self.holds(
                                holder, whole: entry.whole, index: index, records: records, fields: fields, txn: txn)
                        }
                    }
                    guard let holder else { continue }
                    // A new model merges into the holder, as in a program that declares the index.
                    if mergesNewModels, index.catalog.onConflict == .update, old == nil,
                        let merge = UniqueMerge(owner: holder, index: index.catalog.name)
                    {
                        throw merge
                    }
                    let owner = holder.count == 16 ? holder.withBorrowedBytes { UUID(bytes: $0).uuidString } : "another"
                    let values = index.catalog.fields.map { field in
                        new.map { "\(RecordIndexKeys.value(of: field, in: $0))" } ?? "nil"
                    }
                    throw KVStoreError(
                        .uniqueViolation, entity: entity, id: id, field: index.catalog.fields.joined(separator: ", "),
                        message: "\(entity) \(id): \(index.catalog.fields.joined(separator: ", ")) "
                            + "\(values.joined(separator: ", ")) is already used by \(entity) \(owner) (the store's "
                            + "unique index \(index.catalog.name)); nothing of this save was written")
                }
            }
            changes.append(Change(index: index, removed: removed, added: added))
        }
    }

    /// Removes and adds the entries, for the record under `key`.
    package func apply(key: BorrowedBytes, in txn: borrowing Transaction) throws {
        for change in changes {
            let table = change.index.table
            for entry in change.removed {
                try entry.key.withBorrowedBytes { storedKey in
                    if change.index.catalog.isUnique {
                        try UniqueIndexEntries.remove(storedKey, owner: key, in: table, txn: txn)
                    } else {
                        _ = try txn.delete(key, forKey: storedKey, in: table)
                    }
                }
            }
            for entry in change.added {
                try entry.key.withBorrowedBytes { storedKey in
                    if change.index.catalog.isUnique {
                        try UniqueIndexEntries.place(storedKey, owner: key, in: table, txn: txn)
                    } else {
                        try txn.put(key, forKey: storedKey, in: table)
                    }
                }
            }
        }
    }

    private static func keys(
        of value: RecordValue, _ index: DerivedIndex, hash: LongKeyHash, entity: String, id: UUID
    ) throws -> [(key: [UInt8], whole: [UInt8])] {
        do {
            return try RecordIndexKeys.wholeKeys(of: value, in: index.catalog).map {
                (IndexKey.finalized($0, hash: hash), $0)
            }
        } catch {
            throw KVStoreError(
                .encodingFailed, entity: entity, id: id, field: error.field,
                message: "Cannot write \(entity) \(id): \(error), but the store's index \(index.catalog.name) indexes "
                    + "it; nothing was written")
        }
    }

    /// Whether the stored record whose ID is `holder` has the whole key `whole` in `index`.
    private static func holds(
        _ holder: [UInt8], whole: [UInt8], index: DerivedIndex, records: Table, fields: FieldTable,
        txn: borrowing Transaction
    ) throws -> Bool {
        guard holder.count == 16 else { return false }
        return try holder.withBorrowedBytes { holderKey in
            try txn.withBytes(forKey: holderKey, in: records) { bytes in
                // An entry whose record is gone holds nothing (kvtool check reports it).
                guard let bytes, let record = try? RecordValue.decode(from: bytes, fields: fields) else { return false }
                return (try? RecordIndexKeys.wholeKeys(of: record, in: index.catalog))?.contains(whole) ?? false
            }
        }
    }
}
