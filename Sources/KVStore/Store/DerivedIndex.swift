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
    private var changes: [(index: DerivedIndex, removed: [[UInt8]], added: [[UInt8]])] = []

    /// Computes the entries to remove and add for the record under `key` going from `old` to `new` (`nil` for no
    /// record), and checks the unique ones.
    ///
    /// - Throws: ``KVStoreError/schemaChanged`` for an index whose keys only a program declaring it can compute,
    ///   ``KVStoreError/uniqueViolation`` when a unique index holds a new value for another model, and
    ///   ``KVStoreError/encodingFailed`` when a value cannot be part of a key; nothing is written then.
    package init(
        _ indexes: [DerivedIndex],
        entity: String,
        id: UUID,
        old: RecordValue?,
        new: RecordValue?,
        key: UnsafeRawBufferPointer,
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
            let oldKeys = try old.map { try keys(of: $0, index, entity: entity, id: id) } ?? []
            let newKeys = try new.map { try keys(of: $0, index, entity: entity, id: id) } ?? []
            let added = newKeys.filter { !oldKeys.contains($0) }
            if index.catalog.isUnique {
                for indexKey in added {
                    guard let owner = try txn.value(forKey: indexKey, in: index.table), !owner.elementsEqual(key) else {
                        continue
                    }
                    let holder = owner.count == 16 ? owner.withUnsafeBytes { UUID(bytes: $0).uuidString } : "another"
                    let values = index.catalog.fields.map { field in
                        new.map { "\(RecordIndexKeys.value(of: field, in: $0))" } ?? "nil"
                    }
                    throw KVStoreError(
                        .uniqueViolation, entity: entity, id: id, field: index.catalog.fields.joined(separator: ", "),
                        message: "\(entity) \(id): \(index.catalog.fields.joined(separator: ", ")) "
                            + "\(values.joined(separator: ", ")) is already used by \(entity) \(holder) (the store's "
                            + "unique index \(index.catalog.name)); nothing of this save was written")
                }
            }
            changes.append((index, oldKeys.filter { !newKeys.contains($0) }, added))
        }
    }

    /// Removes and adds the entries, for the record under `key`.
    package func apply(key: UnsafeRawBufferPointer, in txn: borrowing Transaction) throws {
        for change in changes {
            for indexKey in change.removed {
                if change.index.catalog.isUnique {
                    let isOwn = try txn.withUnsafeBytes(forKey: indexKey, in: change.index.table) {
                        $0?.elementsEqual(key)
                    }
                    if isOwn == true { try txn.delete(forKey: indexKey, in: change.index.table) }
                } else {
                    _ = try txn.delete(key, forKey: indexKey, in: change.index.table)
                }
            }
            for indexKey in change.added { try txn.put(key, forKey: indexKey, in: change.index.table) }
        }
    }

    private func keys(of value: RecordValue, _ index: DerivedIndex, entity: String, id: UUID) throws -> [[UInt8]] {
        do {
            return try RecordIndexKeys.keys(of: value, in: index.catalog)
        } catch {
            throw KVStoreError(
                .encodingFailed, entity: entity, id: id, field: error.field,
                message: "Cannot write \(entity) \(id): \(error), but the store's index \(index.catalog.name) indexes "
                    + "it; nothing was written")
        }
    }
}
