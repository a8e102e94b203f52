import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
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
    /// The corresponding LMDB functions are `mdb_txn_begin` with `MDB_RDONLY`, and `mdb_txn_commit`.
    public func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        try runRead(body, failing: { $0 })
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
        try runWrite(body, failing: { $0 })
    }

    /// ``read(_:)`` for the binding's own calls whose body throws only ``LMDBError``, so that they throw it typed.
    ///
    /// - Throws: What ``read(_:)`` throws.
    func readTransaction<R>(_ body: (borrowing Transaction) throws(LMDBError) -> R) throws(LMDBError) -> R {
        try runRead(body, failing: { $0 })
    }

    /// ``write(_:)`` for the binding's own calls whose body throws only ``LMDBError``, so that they throw it typed.
    ///
    /// - Throws: What ``write(_:)`` throws.
    func writeTransaction<R>(_ body: (borrowing Transaction) throws(LMDBError) -> R) throws(LMDBError) -> R {
        try runWrite(body, failing: { $0 })
    }

    /// The read transaction of ``read(_:)``, for a body that throws `Failure`; `failing` turns the binding's own
    /// errors into one. Always inlined, so neither entry point pays for the generic error.
    @inline(__always)
    private func runRead<R, Failure: Error>(
        _ body: (borrowing Transaction) throws(Failure) -> R,
        failing: (LMDBError) -> Failure
    ) throws(Failure) -> R {
        let txn = try beginTransaction(readOnly: true, failing: failing)
        defer {
            // Committing a read transaction keeps the table handles it opened; there is nothing else to commit, so
            // it ends the transaction whether or not the body threw.
            mdb_txn_commit(txn.handle)
            gate.leave()
        }
        return try body(txn)
    }

    /// The write loop of ``write(_:)``, for a body that throws `Failure`; `failing` turns the binding's own errors
    /// into one. Always inlined, so neither entry point pays for the generic error.
    @inline(__always)
    private func runWrite<R, Failure: Error>(
        _ body: (borrowing Transaction) throws(Failure) -> R,
        failing: (LMDBError) -> Failure
    ) throws(Failure) -> R {
        if isReadOnly {
            throw failing(
                LMDBError(
                    code: EACCES, operation: "mdb_txn_begin", path: path,
                    detail: "The environment was opened read-only"))
        }
        while true {
            let txn = try beginTransaction(readOnly: false, failing: failing)
            let sizeAtBegin = core.currentMapSize.load(ordering: .relaxed)
            core.mapFullSeen.store(false, ordering: .relaxed)
            let result: R
            do {
                result = try body(txn)
            } catch {
                mdb_txn_abort(txn.handle)
                gate.leave()
                // The body may have turned MDB_MAP_FULL into an error of its own: the flag tells.
                if core.mapFullSeen.load(ordering: .relaxed) {
                    do {
                        try grow(from: sizeAtBegin)
                    } catch {
                        throw failing(error)
                    }
                    continue
                }
                throw error
            }
            do throws(LMDBError) {
                if core.mapFullSeen.load(ordering: .relaxed) {
                    // The body caught MDB_MAP_FULL and went on; the transaction is poisoned, so start again.
                    mdb_txn_abort(txn.handle)
                    gate.leave()
                    try grow(from: sizeAtBegin)
                    continue
                }
                // lmdb.h: the transaction handle is freed even when the commit fails, so it must not be aborted then.
                let code = mdb_txn_commit(txn.handle)
                gate.leave()
                if code == MDB_MAP_FULL {
                    try grow(from: sizeAtBegin)
                    continue
                }
                try check(code, "mdb_txn_commit", path: path)
            } catch {
                throw failing(error)
            }
            return result
        }
    }

    /// ``beginTransaction(readOnly:)`` for a caller that throws `Failure`.
    @inline(__always)
    private func beginTransaction<Failure: Error>(
        readOnly: Bool, failing: (LMDBError) -> Failure
    ) throws(Failure) -> Transaction {
        do {
            return try beginTransaction(readOnly: readOnly)
        } catch {
            throw failing(error)
        }
    }

    /// Enters the gate and begins a transaction, adopting a map that another process grew.
    private func beginTransaction(readOnly: Bool) throws(LMDBError) -> Transaction {
        while true {
            do throws(LMDBError) {
                try enterGate()
            } catch {
                throw error.adding(operation: "mdb_txn_begin", path: path)
            }
            var txn: OpaquePointer?
            let code = mdb_txn_begin(handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
            if code == 0, let txn {
                return Transaction(handle: txn, environment: self, isReadOnly: readOnly)
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
    private func grow(from previousSize: Int) throws(LMDBError) {
        do {
            try gate.withExclusiveAccess { () throws(LMDBError) in
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
        } catch LMDBError.busy {
            throw LMDBError(
                code: MDB_MAP_FULL, operation: "mdb_env_set_mapsize", path: path,
                detail: "The map is full and cannot grow while this thread holds another transaction")
        }
    }

    /// Adopts the larger map another process set, after `mdb_txn_begin` returned `MDB_MAP_RESIZED`.
    private func adoptResizedMap() throws(LMDBError) {
        try gate.withExclusiveAccess { () throws(LMDBError) in
            try setMapSize(0)
        }
    }

    /// Sets the map size (0 adopts the size in the file) and records the size LMDB settled on. The caller holds the
    /// gate exclusively.
    private func setMapSize(_ size: Int) throws(LMDBError) {
        try check(mdb_env_set_mapsize(handle, size), "mdb_env_set_mapsize", path: path)
        var info = MDB_envinfo()
        try check(mdb_env_info(handle, &info), "mdb_env_info", path: path)
        core.currentMapSize.store(info.me_mapsize, ordering: .relaxed)
    }
}
