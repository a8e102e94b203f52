import Foundation
import KVStore
import LMDB

extension IntegrityChecker {
    /// Checks the store's change history, when its catalog says it records one: the table is there, its counter
    /// checks out, and its entries, read a chunk per read transaction, decode (their checksums match) and hold every
    /// position from the first one kept to the counter's last, once.
    ///
    /// - Throws: What LMDB throws; problems of the store are reported, not thrown.
    func checkHistory() throws {
        let catalog: HistoryCatalog?
        do {
            catalog = try store.environment.read { txn in
                try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: store.catalog)
            }
        } catch let error as KVStoreError {
            problem(.error, "history: \(error.message)", part: Catalog.historyTableName)
            return
        }
        guard let catalog else { return }
        guard isReadable(Catalog.historyTableName, of: "history") else { return }
        let table: Table
        do {
            table = try store.environment.openTable(named: Catalog.historyTableName)
        } catch LMDBError.notFound {
            problem(
                .error,
                "history: the catalog says the store records history, and the history table is missing; switch "
                    + "history off and on again to start a new one",
                part: Catalog.historyTableName)
            return
        }
        let history = HistoryTable(table: table)
        let counter: HistoryTable.Counter
        do {
            counter = try store.environment.read { txn in try history.counter(in: txn) }
        } catch let error as KVStoreError {
            problem(.error, "history: \(error.message)", part: Catalog.historyTableName)
            return
        }
        guard counter.prunedThrough <= counter.last else {
            problem(
                .error,
                "history: the counter says entries through \(counter.prunedThrough) were pruned, past the last "
                    + "position given, \(counter.last)",
                part: Catalog.historyTableName)
            return
        }
        var position = counter.prunedThrough
        while position < counter.last {
            let entries: [HistoryEntry]
            do {
                entries = try store.environment.read { txn in
                    try history.entries(after: position, storeID: catalog.storeID, limit: chunkSize, in: txn)
                }
            } catch let error as KVStoreError {
                problem(.error, "history: \(error.message)", part: Catalog.historyTableName)
                return
            }
            for entry in entries {
                if entry.token.position != position + 1 {
                    let missing =
                        entry.token.position == position + 2
                        ? "entry \(position + 1) is" : "entries \(position + 1) to \(entry.token.position - 1) are"
                    problem(
                        .error,
                        "history: \(missing) missing; the positions from the first kept to the last given must all "
                            + "be there",
                        part: Catalog.historyTableName)
                }
                position = entry.token.position
            }
            if entries.count < chunkSize { break }
        }
        if position != counter.last {
            problem(
                .error,
                "history: the last entry is \(position), and the counter gave positions through \(counter.last)",
                part: Catalog.historyTableName)
        }
    }
}
