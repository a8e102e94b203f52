import Foundation
import LMDB

/// An estimate of the pages a write transaction has changed so far in an entity's tables, each of which LMDB keeps as
/// a copy in the process's heap until the commit. LMDB 0.9 does not say how many there are (its transaction is
/// opaque), so the chunked inserts (``ModelContext/insert(contentsOf:chunkSize:progress:)-9rlr0``) bound their
/// transactions by this estimate instead, against ``ModelConfiguration/chunkMemoryBudget``.
///
/// A write changes the leaf it lands in and the branch pages above it, and a split adds pages. Per table, from
/// `mdb_stat` at the start and now:
/// - leaves: at most one per write, plus those added, and never more than the table has; for records appended after
///   the table's last key (time-ordered IDs), the leaves added and the last one, since appends fill one page after
///   another;
/// - branch pages: at most `depth - 1` per changed leaf, and never more than the table has;
/// - overflow pages (values too large for a leaf): those added.
///
/// For random keys in a large tree this is close: each write lands in another leaf. Index entries whose keys arrive
/// in order change fewer leaves than they write entries, and the estimate is high for them, so such a transaction
/// commits earlier than it needs to, never later.
struct WriteFootprint {
    /// Each table with its statistics when the estimate began, and whether the writes append to it.
    private let start: [(table: Table, statistics: Environment.Statistics, appends: Bool)]

    /// Begins an estimate of the pages `transaction` changes in `store`'s records and indexes from now on, for writes of
    /// models from `firstID` up in key order (`nil` when not known): when the records table holds nothing after
    /// `firstID`, its writes are appends.
    ///
    /// - Throws: The ``LMDBError`` of `mdb_stat` or of the read of the records table's last key.
    init(store: any AnyEntityStore, firstID: UUID?, in transaction: borrowing Transaction) throws {
        let tables = store.modelTables
        var appends = false
        if let firstID, let records = tables.first {
            appends = try transaction.withCursor(on: records) { cursor in
                guard try cursor.last() else { return true }
                // A copy of one key per transaction, which keeps this file free of unsafe code.
                guard let key = try cursor.current()?.key, key.count == 16 else { return false }
                return key.withBorrowedBytes { UUID(bytes: $0) }.isOrdered(before: firstID)
            }
        }
        start = try tables.enumerated().map { position, table in
            (table, try transaction.statistics(of: table), position == 0 && appends)
        }
    }

    /// The estimated number of bytes of pages changed in the tables since the estimate began, after `writes` writes
    /// to each (a model's insert writes its record and an entry in each index).
    ///
    /// - Throws: The ``LMDBError`` of `mdb_stat`.
    func changedBytes(afterWriting writes: Int, in transaction: borrowing Transaction) throws -> Int {
        var bytes = 0
        for (table, before, appends) in start {
            let now = try transaction.statistics(of: table)
            // Every new entry was a write, whatever the caller counted.
            let writes = Swift.max(writes, abs(now.entries - before.entries))
            let addedLeaves = Swift.max(0, now.leafPages - before.leafPages)
            let leaves =
                writes == 0
                ? 0 : Swift.min(appends ? addedLeaves + 1 : writes + addedLeaves, now.leafPages)
            let branches = Swift.min(leaves * Swift.max(0, now.depth - 1), now.branchPages)
            let overflow = Swift.max(0, now.overflowPages - before.overflowPages)
            bytes += (leaves + branches + overflow) * now.pageSize
        }
        return bytes
    }
}
