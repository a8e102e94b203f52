import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension Environment {
    /// Runs `body` in a read transaction: a consistent snapshot of the last commit, unaffected by writes that commit
    /// while it runs.
    ///
    /// Read transactions run in parallel on any threads, beside the writer. Keep them short: while one is alive,
    /// LMDB cannot reuse the pages its snapshot sees, and the file grows with every update.
    ///
    /// - Parameter body: The work to do. It receives the transaction borrowed, so the transaction, and any memory it
    ///   hands out, cannot outlive it. The body must not `await`.
    /// - Returns: What `body` returns.
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``, ``LMDBError/readersFull`` when every reader slot
    ///   is taken, or what `body` throws.
    ///
    /// The corresponding LMDB functions are `mdb_txn_renew` of a transaction kept from an earlier read, or
    /// `mdb_txn_begin` with `MDB_RDONLY`, and `mdb_txn_reset` (see ``keptReadTransactions()``).
    public func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        let txn = try beginReadTransaction()
        defer {
            // Reset rather than committed, for the gate to keep and a later read to renew (or aborted when the gate
            // keeps enough): a read transaction commits nothing but the table handles it opens, and the one that
            // opens tables is `readOpeningTables`'s.
            unsafe mdb_txn_reset(txn.handle)
            if unsafe !gate.leave(keeping: txn.handle) {
                unsafe mdb_txn_abort(txn.handle)
                gate.leave()
            }
        }
        return try body(txn)
    }

    /// Runs `body` in a read transaction that is committed, not reset, so that the table handles it opens stay open
    /// in the environment.
    func readOpeningTables<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        let txn = try beginTransaction(readOnly: true)
        defer {
            unsafe mdb_txn_commit(txn.handle)
            gate.leave()
        }
        return try body(txn)
    }

    /// Runs `body` in the write transaction and commits it when `body` returns, or aborts it when `body` throws.
    ///
    /// One write transaction runs at a time; others wait for it. When the memory map fills up, the transaction is
    /// aborted, the map grows (doubling, up to ``Configuration/maxMapSize``) and `body` runs again from the start, so
    /// `body` must have no effects outside the transaction that cannot be repeated.
    ///
    /// - Parameter body: The work to do. It receives the transaction borrowed, so neither the transaction nor memory
    ///   it hands out can outlive it. The body must not `await`.
    /// - Returns: What `body` returns.
    /// - Throws: ``LMDBError/accessDenied`` in a read-only environment, ``LMDBError/mapFull`` once the map reached
    ///   ``Configuration/maxMapSize``, ``LMDBError/environmentClosed`` after ``close()``, or what `body` throws;
    ///   nothing is written then.
    ///
    /// The corresponding LMDB functions are `mdb_txn_begin`, `mdb_txn_commit` and `mdb_txn_abort`.
    public func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        if isReadOnly {
            throw LMDBError(
                code: EACCES, operation: "mdb_txn_begin", path: path,
                detail: "The environment was opened read-only")
        }
        while true {
            let txn = try beginTransaction(readOnly: false)
            let sizeAtBegin = core.currentMapSize.load(ordering: .relaxed)
            core.mapFullSeen.store(false, ordering: .relaxed)
            let result: R
            do {
                result = try body(txn)
            } catch {
                unsafe mdb_txn_abort(txn.handle)
                gate.leave()
                // The body may have turned MDB_MAP_FULL into an error of its own: the flag tells.
                if core.mapFullSeen.load(ordering: .relaxed) {
                    try grow(from: sizeAtBegin)
                    continue
                }
                throw error
            }
            if core.mapFullSeen.load(ordering: .relaxed) {
                // The body caught MDB_MAP_FULL and went on; the transaction is poisoned, so start again.
                unsafe mdb_txn_abort(txn.handle)
                gate.leave()
                try grow(from: sizeAtBegin)
                continue
            }
            // lmdb.h: the transaction handle is freed even when the commit fails, so it must not be aborted then.
            let code = unsafe mdb_txn_commit(txn.handle)
            gate.leave()
            if code == MDB_MAP_FULL {
                try grow(from: sizeAtBegin)
                continue
            }
            try check(code, "mdb_txn_commit", path: path)
            return result
        }
    }

    /// Enters the gate and renews a read transaction the gate kept, or begins one.
    private func beginReadTransaction() throws -> Transaction {
        let idle: OpaquePointer?
        do throws(LMDBError) {
            unsafe idle = try enterGateTakingIdleReader()
        } catch {
            throw error.adding(operation: "mdb_txn_begin", path: path)
        }
        if let idle = unsafe idle {
            if unsafe mdb_txn_renew(idle) == 0 {
                return unsafe Transaction(handle: idle, environment: self, isReadOnly: true)
            }
            // Renewing failed (another process grew the map, say): a new transaction tells what to do.
            unsafe mdb_txn_abort(idle)
        }
        gate.leave()
        return try beginTransaction(readOnly: true)
    }

    /// Enters the gate and begins a transaction, adopting a map that another process grew.
    private func beginTransaction(readOnly: Bool) throws -> Transaction {
        while true {
            do throws(LMDBError) {
                try enterGate()
            } catch {
                throw error.adding(operation: "mdb_txn_begin", path: path)
            }
            var txn: OpaquePointer?
            let code = unsafe mdb_txn_begin(handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
            if code == 0, let txn = unsafe txn {
                return unsafe Transaction(handle: txn, environment: self, isReadOnly: readOnly)
            }
            gate.leave()
            if code == MDB_MAP_RESIZED {
                try adoptResizedMap()
                continue
            }
            throw LMDBError(
                code: code, operation: "mdb_txn_begin", path: path,
                detail: code == MDB_READERS_FULL
                    ? "All \(configuration.maxReaders) reader slots are in use; end read transactions sooner, "
                        + "clear stale readers, or raise maxReaders"
                    : nil)
        }
    }

    /// Doubles the map, unless another writer grew it since `previousSize` was read.
    private func grow(from previousSize: Int) throws {
        do {
            try gate.withExclusiveAccess {
                let current = core.currentMapSize.load(ordering: .relaxed)
                if current > previousSize { return }
                guard current < configuration.maxMapSize else {
                    throw LMDBError(
                        code: MDB_MAP_FULL, operation: "mdb_env_set_mapsize", path: path,
                        detail: "The map reached its maximum size of \(configuration.maxMapSize) bytes; "
                            + "raise Configuration.maxMapSize")
                }
                try setMapSize(current > configuration.maxMapSize / 2 ? configuration.maxMapSize : current * 2)
            }
        } catch let error as LMDBError where error.code == LMDBError.busy.code {
            throw LMDBError(
                code: MDB_MAP_FULL, operation: "mdb_env_set_mapsize", path: path,
                detail: "The map is full and cannot grow while this thread holds another transaction")
        }
    }

    /// Adopts the larger map another process set, after `mdb_txn_begin` returned `MDB_MAP_RESIZED`.
    private func adoptResizedMap() throws {
        try gate.withExclusiveAccess {
            try setMapSize(0)
        }
    }

    /// Sets the map size (0 adopts the size in the file) and records the size LMDB settled on. The caller holds the
    /// gate exclusively.
    private func setMapSize(_ size: Int) throws(LMDBError) {
        try unsafe check(mdb_env_set_mapsize(handle, size), "mdb_env_set_mapsize", path: path)
        var info = unsafe MDB_envinfo()
        try unsafe check(mdb_env_info(handle, &info), "mdb_env_info", path: path)
        unsafe core.currentMapSize.store(info.me_mapsize, ordering: .relaxed)
    }
}
