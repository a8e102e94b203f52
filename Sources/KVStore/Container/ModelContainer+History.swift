import Foundation
import LMDB

extension ModelContainer {
    /// Switches the store's persistent change history on, or changes its retention when it is on.
    ///
    /// From the next commit on, every commit to the store that changes models records a ``HistoryEntry`` in its own
    /// transaction: by this container, by every other container and process that writes the store (the catalog says
    /// so, and each writer reads it), and by `kvtool`. The store's format becomes 4, which versions of KVStore that do
    /// not record history refuse to open. Read the history with ``history(after:entities:author:limit:)``.
    ///
    /// ```swift
    /// try container.enableHistory(retention: HistoryRetention(maximumAge: 3 * 24 * 3600))
    /// ```
    ///
    /// - Parameter retention: How much history writers keep: each commit prunes the entries it no longer keeps.
    /// - Returns: The token of the last commit recorded so far: the history starts after it.
    /// - Throws: ``KVStoreError/readOnly`` for a read-only container, ``KVStoreError/invalidModel`` for a retention
    ///   that keeps nothing, ``KVStoreError/closed``, ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the
    ///   store cannot be written.
    @discardableResult
    public func enableHistory(retention: HistoryRetention = .default) throws -> HistoryToken {
        try refuseWritesIfReadOnly(to: "switch its history on")
        if let count = retention.maximumCount, count < 1 {
            throw KVStoreError(
                .invalidModel, message: "A history retention must keep at least one entry, not \(count)")
        }
        if let age = retention.maximumAge, !(age > 0) {
            throw KVStoreError(
                .invalidModel, message: "A history retention must keep entries for more than 0 seconds, not \(age)")
        }
        do {
            return try changingHistory { txn, table in
                var catalog =
                    try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalogTable)
                    ?? HistoryCatalog(storeID: UUID(), retention: retention, enabled: Date())
                catalog.retention = retention
                try Catalog.requireHistoryFormat(in: txn, table: catalogTable)
                try Catalog.write(catalog, key: Catalog.historyKey, in: txn, table: catalogTable)
                return HistoryToken(storeID: catalog.storeID, position: try table.counter(in: txn).last)
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Switches the store's change history off and deletes it: commits record nothing from then on, and every token
    /// of the history is refused, by a history switched on again too (it has another store ID).
    ///
    /// - Throws: ``KVStoreError/readOnly`` for a read-only container, ``KVStoreError/closed``,
    ///   ``KVStoreError/damaged`` or ``KVStoreError/storage`` when the store cannot be written.
    public func disableHistory() throws {
        try refuseWritesIfReadOnly(to: "switch its history off")
        do {
            try changingHistory { txn, table in
                try Catalog.delete(key: Catalog.historyKey, in: txn, table: catalogTable)
                try txn.empty(table.table)
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The store's history retention, or `nil` when the store records no history.
    ///
    /// - Throws: ``KVStoreError/closed``, ``KVStoreError/damaged`` for a catalog entry that does not check out.
    public func historyRetention() throws -> HistoryRetention? {
        do {
            return try environment.read { txn in
                try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalogTable)?.retention
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The token of the store's last recorded commit (position 0 before the first): a consumer that starts now reads
    /// the history after it.
    ///
    /// - Throws: ``KVStoreError/historyNotEnabled`` when the store records no history, ``KVStoreError/closed``,
    ///   ``KVStoreError/damaged`` for a history that does not check out.
    public func lastHistoryToken() throws -> HistoryToken {
        try readingHistory { txn, catalog, table in
            HistoryToken(storeID: catalog.storeID, position: try table.counter(in: txn).last)
        }
    }

    /// The store's history entries after `token`, oldest first: what every commit since changed, across processes.
    ///
    /// ```swift
    /// var token = try loadToken() ?? container.lastHistoryToken()
    /// for entry in try container.history(after: token) {
    ///     for id in entry.deleted["Task"] ?? [] { cache.remove(id) }
    ///     token = entry.token
    /// }
    /// try saveToken(token)
    /// ```
    ///
    /// - Parameters:
    ///   - token: The last entry already read; `nil` reads from the oldest entry the store keeps.
    ///   - entities: When given, only the entries that changed a model of one of these entities (the whole entry).
    ///   - author: When given, only the entries of commits with this author.
    ///   - limit: The most entries to return.
    /// - Returns: The entries, in commit order; go on from the last one's token.
    /// - Throws: ``KVStoreError/historyNotEnabled`` when the store records no history,
    ///   ``KVStoreError/invalidHistoryToken`` for a token of another store (or of a history switched off since), or
    ///   past the last commit, ``KVStoreError/historyExpired`` when entries after `token` were pruned,
    ///   ``KVStoreError/invalidModel`` for a negative limit, ``KVStoreError/damaged`` for an entry that does not check
    ///   out, ``KVStoreError/closed``.
    public func history(
        after token: HistoryToken? = nil, entities: [String]? = nil, author: String? = nil, limit: Int? = nil
    ) throws -> [HistoryEntry] {
        if let limit, limit < 0 {
            throw KVStoreError(.invalidModel, message: "A history read's limit must be 0 or more, not \(limit)")
        }
        let wanted = entities.map(Set.init)
        return try readingHistory { txn, catalog, table in
            if let token { try Self.check(token, against: catalog) }
            return try table.entries(after: token?.position, storeID: catalog.storeID, limit: limit, in: txn) {
                entry in
                if let author, entry.author != author { return false }
                if let wanted, !entry.changes.contains(where: { wanted.contains($0.entity) }) { return false }
                return true
            }
        }
    }

    /// Deletes the history entries before `token`; the entry of `token` and those after it stay, so a consumer at
    /// `token` reads on.
    ///
    /// - Returns: How many entries were deleted.
    /// - Throws: ``KVStoreError/historyNotEnabled`` when the store records no history,
    ///   ``KVStoreError/invalidHistoryToken`` for a token of another store, ``KVStoreError/readOnly`` for a read-only
    ///   container, ``KVStoreError/closed``, ``KVStoreError/damaged`` or ``KVStoreError/storage``.
    @discardableResult
    public func deleteHistory(before token: HistoryToken) throws -> Int {
        try refuseWritesIfReadOnly(to: "delete history")
        guard let table = try? historyTable() else { throw Self.historyNotEnabled(path) }
        do {
            return try writeOrder.withLock { _ in
                try environment.write { txn in
                    guard
                        let catalog = try Catalog.read(
                            HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalogTable)
                    else { throw Self.historyNotEnabled(path) }
                    try Self.check(token, against: catalog)
                    guard token.position > 0 else { return 0 }
                    return try table.delete(through: token.position - 1, bounded: false, in: txn)
                }
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    // MARK: - Helpers

    /// Runs `change` in a write transaction of its own, with the history table (created when the file lacks it), in
    /// this container's write order, and reads the catalog again after it commits.
    private func changingHistory<R>(_ change: (borrowing Transaction, HistoryTable) throws -> R) throws -> R {
        try writeOrder.withLock { _ in
            let table = HistoryTable(table: try environment.openTable(named: Catalog.historyTableName, create: true))
            let result = try environment.write { txn in try change(txn, table) }
            let deadline = ContinuousClock.now + configuration.migrationWaitTimeout
            while try !reloadSchema(waitingUntil: deadline) {}
            return result
        }
    }

    /// The history table when the file has one: the one the container follows, or the file's when another process
    /// switched history on since the container last read the catalog.
    ///
    /// - Throws: What opening a table throws, but its absence.
    func historyTableIfPresent() throws -> HistoryTable? {
        if let table = schema.withLock({ $0.history?.table }) { return table }
        return try environment.tableIfPresent(named: Catalog.historyTableName).map(HistoryTable.init(table:))
    }

    /// The history table: the one the container follows, or the file's when another process switched history on
    /// since the container last read the catalog.
    private func historyTable() throws -> HistoryTable {
        if let table = schema.withLock({ $0.history?.table }) { return table }
        guard let table = try environment.tableIfPresent(named: Catalog.historyTableName) else {
            throw Self.historyNotEnabled(path)
        }
        return HistoryTable(table: table)
    }

    /// Runs `body` in a read transaction with the store's history catalog and table.
    private func readingHistory<R>(
        _ body: (borrowing Transaction, HistoryCatalog, HistoryTable) throws -> R
    ) throws -> R {
        do {
            let table = try historyTable()
            return try environment.read { txn in
                guard
                    let catalog = try Catalog.read(
                        HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalogTable)
                else { throw Self.historyNotEnabled(path) }
                return try body(txn, catalog, table)
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    private static func check(_ token: HistoryToken, against catalog: HistoryCatalog) throws {
        guard token.storeID == catalog.storeID else {
            throw KVStoreError(
                .invalidHistoryToken,
                message: "The token \(token) names the history \(token.storeID), and this store's history is "
                    + "\(catalog.storeID): the token is another store's, or of a history switched off since. Read the "
                    + "models again, and go on from lastHistoryToken()")
        }
    }

    private static func historyNotEnabled(_ path: String) -> KVStoreError {
        KVStoreError(
            .historyNotEnabled,
            message: "The store at \(path) records no change history; switch it on with enableHistory(retention:) "
                + "(the history starts then)")
    }
}
