import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// A store's persistent change history as kvtool reads it: the catalog's `history` entry and the history table,
/// read through the library's package API (``HistoryCatalog``, ``HistoryTable``), without a container.
///
/// The table is opened once, before any transaction (LMDB wants tables opened outside them); everything else is read
/// in the caller's transaction, so that an export reads its records and the history's last token in the same snapshot.
///
/// ```swift
/// let history = try StoreHistory(store: store)
/// let state = try store.environment.read { txn in try history.requiredState(in: txn) }
/// print(state.lastToken)
/// ```
struct StoreHistory {
    /// A history that is on, as one transaction sees it.
    struct State {
        /// The catalog's entry: the store ID, the retention, when it was switched on.
        let catalog: HistoryCatalog
        /// The table.
        let table: HistoryTable
        /// The last position given and the last one pruned.
        let counter: HistoryTable.Counter

        /// The token of the last commit recorded (position 0 before the first).
        var lastToken: HistoryToken {
            HistoryToken(storeID: catalog.storeID, position: counter.last)
        }

        /// How many entries the store keeps: every position after the last pruned one has its entry.
        var entryCount: UInt64 {
            counter.last - counter.prunedThrough
        }
    }

    /// The store.
    let store: InspectedStore
    /// The history table, or `nil` when the file has none (history was never switched on).
    private let table: HistoryTable?

    /// Opens the store's history table, when the file has one.
    ///
    /// - Throws: What LMDB throws, but for a missing table.
    init(store: InspectedStore) throws {
        self.store = store
        do {
            table = HistoryTable(table: try store.environment.openTable(named: Catalog.historyTableName))
        } catch LMDBError.notFound {
            table = nil
        }
    }

    /// The history as `txn` sees it, or `nil` when the store records none.
    ///
    /// - Throws: ``ToolError`` when the catalog's entry or the counter is damaged, or the catalog says history is on
    ///   and the file has no table; what LMDB throws.
    func state(in txn: borrowing Transaction) throws -> State? {
        let catalog: HistoryCatalog?
        do {
            catalog = try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: store.catalog)
        } catch let error as KVStoreError {
            throw ToolError("The catalog's history entry of '\(store.path)' does not decode (\(error.message))")
        }
        guard let catalog else { return nil }
        guard let table else {
            throw ToolError(
                "The catalog of '\(store.path)' says its history is on, but the file has no history table: the store "
                    + "is damaged. Run 'kvtool check \(store.path)'")
        }
        let counter: HistoryTable.Counter
        do {
            counter = try table.counter(in: txn)
        } catch let error as KVStoreError {
            throw ToolError(error.message)
        }
        return State(catalog: catalog, table: table, counter: counter)
    }

    /// The history as `txn` sees it.
    ///
    /// - Throws: ``ToolError`` when the store records no history, and what ``state(in:)`` throws.
    func requiredState(in txn: borrowing Transaction) throws -> State {
        guard let state = try state(in: txn) else {
            throw ToolError(
                "'\(store.path)' records no change history: a program switches it on with "
                    + "ModelContainer.enableHistory(retention:), and it starts then")
        }
        return state
    }

    /// The entries after `token` (after the last pruned one when `nil`), oldest first, for which `include` holds, up
    /// to `limit` of them.
    ///
    /// - Parameters:
    ///   - token: The last entry already read, or `nil`.
    ///   - state: The history, read in `txn`.
    ///   - limit: The most entries to return.
    ///   - advice: What to do instead when the token cannot be read from, ending the error's message.
    ///   - txn: The read transaction.
    ///   - include: Which entries to return.
    /// - Throws: ``ToolError`` for a token of another store's history, past the last commit, or after which entries
    ///   were pruned, and for a damaged entry; what LMDB throws.
    func entries(
        after token: HistoryToken?, state: State, limit: Int?, advice: String, in txn: borrowing Transaction,
        including include: (HistoryEntry) -> Bool = { _ in true }
    ) throws -> [HistoryEntry] {
        if let token { try check(token, state: state, advice: advice) }
        do {
            return try state.table.entries(
                after: token?.position, storeID: state.catalog.storeID, limit: limit, in: txn, including: include)
        } catch let error as KVStoreError {
            // A damaged entry (the library's message names it and suggests 'kvtool check'); the token was checked.
            throw ToolError(error.message)
        }
    }

    /// Checks that `token` is of this history, not pruned, and not past its last commit.
    ///
    /// - Throws: ``ToolError`` saying which, ending with `advice`.
    func check(_ token: HistoryToken, state: State, advice: String) throws(ToolError) {
        let path = store.path
        guard token.storeID == state.catalog.storeID else {
            throw ToolError(
                "The token \(token) is of the history \(token.storeID), and the history of '\(path)' is "
                    + "\(state.catalog.storeID): the token is another store's, or of a history switched off since. "
                    + advice)
        }
        guard token.position >= state.counter.prunedThrough else {
            throw ToolError(
                "The history of '\(path)' after the token \(token) was pruned: the store keeps the entries after "
                    + "position \(state.counter.prunedThrough) (its retention, "
                    + "\(Self.describe(state.catalog.retention)), or a program's deleteHistory(before:) deleted the "
                    + "others), so the changes since the token cannot be read. " + advice)
        }
        guard token.position <= state.counter.last else {
            throw ToolError(
                "The token \(token) is past the last commit of the history of '\(path)' (position "
                    + "\(state.counter.last)): the store was restored from a copy older than the token, or the token "
                    + "was made up. " + advice)
        }
    }

    /// A retention as people read it: `the entries of the last 7 days`, `the last 100 entries`, `every entry`.
    static func describe(_ retention: HistoryRetention) -> String {
        switch (retention.maximumAge, retention.maximumCount) {
        case (nil, nil): "every entry"
        case (let age?, nil): "the entries of the last \(duration(age))"
        case (nil, let count?): "the last \(Formatting.count(count, "entry", plural: "entries"))"
        case (let age?, let count?):
            "the last \(Formatting.count(count, "entry", plural: "entries")) of the last \(duration(age))"
        }
    }

    /// `7 days`, `12 hours`, `90 seconds`: the largest unit that divides the interval, or seconds.
    static func duration(_ seconds: TimeInterval) -> String {
        for (unit, length) in [("day", 86_400.0), ("hour", 3_600.0), ("minute", 60.0)] {
            let count = seconds / length
            if count >= 1, count == count.rounded(), count <= Double(Int.max) {
                return Formatting.count(Int(count), unit)
            }
        }
        if seconds == seconds.rounded(), seconds < Double(Int.max) {
            return Formatting.count(Int(seconds), "second")
        }
        return "\(seconds) seconds"
    }
}
