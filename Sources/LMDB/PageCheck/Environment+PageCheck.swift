import CLMDB

extension Environment {
    /// Checks the pages of the snapshot a read transaction sees, while other threads and processes go on writing.
    ///
    /// The check begins a read transaction and holds it for the whole walk, so LMDB reuses none of the snapshot's
    /// pages meanwhile; it finds the meta page that records the transaction's ID, and reads that snapshot's pages
    /// from the data file with `pread`, never through LMDB's map. A long ``PageCheck/Scope/full`` walk of a large
    /// store therefore holds back page reuse, and the file grows with the updates committed meanwhile, as with any
    /// long read transaction. A ``PageCheck/Scope/roots`` check reads a few pages and is cheap enough to run at every
    /// open.
    ///
    /// ```swift
    /// let report = try environment.checkPages(scope: .roots)
    /// guard report.isClean else { throw StoreError.damaged(report.problems) }
    /// ```
    ///
    /// - Parameters:
    ///   - scope: How much of the snapshot to read.
    ///   - maxProblems: The most problems the report lists.
    /// - Returns: The report. Damage is reported, never thrown. When a meta page was damaged after LMDB read it, so
    ///   that neither records the transaction, the report says so and checks nothing else.
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``, ``LMDBError/readersFull`` when no reader slot is
    ///   free, or ``LMDBError`` when the data file cannot be read at all.
    ///
    /// The corresponding LMDB functions are `mdb_txn_begin`, `mdb_txn_id`, `mdb_stat` and `mdb_env_get_fd`; the
    /// pages themselves are read without LMDB.
    public func checkPages(scope: PageCheck.Scope = .full, maxProblems: Int = 1000) throws -> PageCheck.Report {
        let options = PageCheck.Options(scope: scope, maxProblems: maxProblems)
        let dataFile = configuration.options.contains(.noSubdirectory) ? path : path + "/data.mdb"
        // The transaction's meta page is overwritten two commits later; the walk only starts once two reads of it
        // agree with each other and with LMDB's own copy. A fast writer may make attempts fail: when the meta page
        // of the transaction's parity still records it or a later one, writers moved on, which is no damage, and the
        // check tries the newer snapshot at once, for up to two seconds. Other misses get a few attempts.
        let attempts = 8
        var attempt = 0
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            attempt += 1
            let outcome = try read { txn throws -> SnapshotAttempt in
                var descriptor: mdb_filehandle_t = -1
                try unsafe txn.check(mdb_env_get_fd(handle, &descriptor), "mdb_env_get_fd")
                let file = try DataFile(borrowing: descriptor, path: dataFile)
                // FREE_DBI is 0 and MAIN_DBI 1. mdb_stat reads neither's pages: a read transaction copies both
                // records from its meta page when it begins.
                var free = MDB_stat()
                var main = MDB_stat()
                try unsafe txn.check(mdb_stat(txn.handle, 0, &free), "mdb_stat")
                try unsafe txn.check(mdb_stat(txn.handle, 1, &main), "mdb_stat")
                // `mdb_txn_id` returns a `size_t`, which Swift imports as `Int`: a damaged meta page's ID past
                // `Int.max` reads as negative, and must not trap (found by FuzzStoreCheck).
                let transaction = UInt64(UInt(bitPattern: txn.id))
                let reading = try MetaReading.read(file)
                guard
                    let meta = reading.metas.compactMap({ $0 }).first(where: { meta in
                        meta.isUsable && meta.pageSize == reading.pageSize && meta.transactionID == transaction
                            && meta.freeList.matches(free) && meta.main.matches(main)
                    })
                else {
                    return .missed(file, reading, transaction)
                }
                let again = try MetaReading.read(file)
                guard again.metas[meta.slot]?.bytes == meta.bytes else {
                    return .missed(file, again, transaction)
                }
                return .checked(PageChecker.report(file, reading: reading, chosen: meta, options: options))
            }
            switch outcome {
            case .checked(let report): return report
            case .missed(let file, let reading, let transaction) where reading.replaced(transaction):
                if ContinuousClock.now < deadline { continue }
                return PageChecker.report(
                    file, reading: reading, chosen: nil, options: options,
                    missing: "Writers replaced every snapshot before its meta page could be read, for two seconds: "
                        + "the pages were not checked. This is no damage; check again when the store is quieter.",
                    severity: .note)
            case .missed(let file, let reading, let transaction) where attempt >= attempts:
                return PageChecker.report(
                    file, reading: reading, chosen: nil, options: options,
                    missing: "Neither meta page records transaction \(transaction), the snapshot LMDB reads: a meta "
                        + "page was damaged after the environment read it.")
            case .missed:
                continue
            }
        }
    }
}

extension MetaReading {
    /// Whether a miss of `transaction`'s snapshot is what writers do rather than damage: the meta page LMDB wrote the
    /// transaction to (the one of its parity, as LMDB alternates them) is usable and records it or a later one. A
    /// later one replaced it, two commits on; the same one was read while a commit rewrote a page beside it, or the
    /// two pages were read one after the other, across commits.
    func replaced(_ transaction: UInt64) -> Bool {
        let slot = Int(transaction & 1)
        guard metas.indices.contains(slot), let meta = metas[slot] else { return false }
        return meta.isUsable && meta.transactionID >= transaction
    }
}

/// One attempt to find and check a read transaction's snapshot.
private enum SnapshotAttempt {
    case checked(PageCheck.Report)
    /// No meta page that two reads agree on records the transaction; what was read instead.
    case missed(DataFile, MetaReading, UInt64)
}

extension TableRecord {
    /// Whether the record has the depth and counts LMDB's `mdb_stat` gives for it.
    ///
    /// `size_t` comes into Swift as `Int`; a damaged count past `Int.max` reads as negative, and is compared as the
    /// same bits.
    func matches(_ stat: MDB_stat) -> Bool {
        func bits(_ count: Int) -> UInt64 { UInt64(UInt(bitPattern: count)) }
        return UInt32(depth) == stat.ms_depth && branchPages == bits(stat.ms_branch_pages)
            && leafPages == bits(stat.ms_leaf_pages) && overflowPages == bits(stat.ms_overflow_pages)
            && entries == bits(stat.ms_entries)
    }
}
