import Foundation
import KVStore
import LMDB

extension RecordQuery {
    /// The index whose first and last entries give the smallest and largest value of `field` over every record: a
    /// ready, derivable, single-field index on it that is not multi-entry, when the query has no condition and the
    /// catalog gives the field a kind with an order (``RecordOrder``), whose order the index's keys follow.
    package func extremeIndex(of field: String) -> IndexCatalog? {
        guard plan == .all,
            let kind = entity.fields.existingID(for: field, in: .topLevel).flatMap({ entity.fields.kind(of: $0) }),
            RecordOrder.isOrdered(kind)
        else { return nil }
        return entity.indexes.first { $0.fields == [field] && !$0.isMultiEntry && $0.isReady && $0.isDerivable }
    }

    /// The smallest (or, when `largest`, the largest) value of a field read from one entry of `index`
    /// (``extremeIndex(of:)``): the first entry after the null keys, or the first ID of the last key. `.null` when
    /// every record's value is null or absent. `nil` when the entry cannot tell: its key was cut (cut keys sharing a
    /// prefix sort by hash, not by value), its record is missing, or holds a value of another kind than the
    /// catalog's; the caller reads every record then.
    ///
    /// Of records that tie, the one with the smallest ID gives the value, as a walk in ID order that keeps the first
    /// extreme does.
    ///
    /// - Throws: ``InspectionError/damaged`` when the index's table is missing or the record does not decode; what
    ///   LMDB throws.
    package func indexedExtreme(of field: String, in index: IndexCatalog, largest: Bool) throws -> RecordValue? {
        let table = try store.indexTable(of: entity, index)
        let records = try store.recordTable(of: entity)
        let kind = entity.fields.existingID(for: field, in: .topLevel).flatMap { entity.fields.kind(of: $0) }
        let isDupSort = table.options.contains(.dupSort)
        return try store.environment.read { txn -> RecordValue? in
            let entry = try txn.withCursor(on: table) { cursor -> (isNull: Bool, isCut: Bool, id: UUID?)? in
                // Null keys are the single byte 0x00, before every value's (which begin with 0x01).
                if largest {
                    guard try cursor.last() else { return nil }
                    if isDupSort { _ = try cursor.firstDuplicate() }
                } else {
                    guard try cursor.seek(atOrAfter: [0x01]) else { return nil }
                }
                return try cursor.withCurrent { key, value in
                    (
                        key.first == 0x00,
                        key.count >= IndexKey.maximumLength && IndexKey.isGrouped(Array(key)),
                        RecordKey.uuid(value)
                    )
                }
            }
            guard let entry, !entry.isNull else { return .null }
            guard !entry.isCut, let id = entry.id,
                let record = try RecordKey.record(id, of: entity, in: records, txn: txn)
            else { return nil }
            let value = RecordIndexKeys.value(of: field, in: record)
            return value.kind == kind ? value : nil
        }
    }
}
