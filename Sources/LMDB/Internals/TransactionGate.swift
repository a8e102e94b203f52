import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Admits transactions of one environment, and holds them all off while the map is resized or the environment
/// closes.
///
/// `mdb_env_set_mapsize` unmaps and remaps the data file, so pointers held by any live transaction of the process
/// would dangle, and `mdb_env_close` frees everything. Transactions therefore enter the gate shared, and a resize or a
/// close holds it exclusively. The gate knows which threads are inside, so that a thread may nest a transaction inside
/// another (LMDB allows this with `MDB_NOTLS`) even while an exclusive holder waits, and so that a thread that asks for
/// exclusive access while it holds a transaction gets an error instead of waiting on itself forever.
///
/// Entering is one uncontended lock; only the rare waits (a resize or a close in progress) sleep briefly in a loop.
///
/// The gate also keeps a few ended read transactions, reset (`mdb_txn_reset`), for the next reads to renew
/// (`mdb_txn_renew`): beginning one allocates and clears LMDB's transaction, about ten times the cost of a renewal,
/// which a short read pays in full. Each kept transaction holds its reader slot, with no snapshot. They belong to the
/// `MDB_env` they began in, so exclusive access, which a reopen or a close needs, aborts them first.
///
/// `@safe`: a kept handle is a reset read transaction of the environment's current `MDB_env`, owned by the gate
/// alone until ``enter(takingIdleReader:)`` hands it out; every one is aborted before an exclusive holder runs.
@safe
final class TransactionGate: Sendable {
    @safe private struct State {
        /// Nesting count of the transactions each thread holds.
        var holders: [UInt: Int] = [:]
        var active = 0
        var exclusiveWaiters = 0
        var exclusive = false
        var closed = false
        /// Reset read transactions, to renew.
        var idleReaders: [OpaquePointer] = unsafe []

        /// Lets out one transaction of the thread `holder`.
        mutating func release(_ holder: UInt) {
            let depth = holders[holder] ?? 1
            holders[holder] = depth > 1 ? depth - 1 : nil
            active -= 1
        }
    }

    /// The most reset read transactions kept.
    let idleReaderLimit: Int

    /// A gate that keeps up to `idleReaderLimit` reset read transactions.
    init(idleReaderLimit: Int) {
        self.idleReaderLimit = idleReaderLimit
    }

    private enum Admission {
        case entered, wait, closed
    }

    private let state = Locked(State())

    /// Whether the gate was closed for good.
    var isClosed: Bool {
        state.withLock { $0.closed }
    }

    /// How many reset read transactions the gate keeps.
    var idleReaderCount: Int {
        state.withLock { unsafe $0.idleReaders.count }
    }

    /// Whether the calling thread holds a transaction that entered this gate.
    var callerIsInside: Bool {
        let me = UInt(pthread_self())
        return state.withLock { $0.holders[me] != nil }
    }

    /// Admits one transaction of the calling thread, waiting while a resize is pending or running.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` once the gate is closed.
    func enter() throws(LMDBError) {
        _ = unsafe try enter(takingIdleReader: false)
    }

    /// Admits one transaction of the calling thread as ``enter()`` does and, when `takingIdleReader`, hands out a
    /// kept reset read transaction, if there is one, for the caller to renew or abort.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` once the gate is closed.
    func enter(takingIdleReader: Bool) throws(LMDBError) -> OpaquePointer? {
        let me = UInt(pthread_self())
        var idle: OpaquePointer?
        while true {
            let admission = state.withLock { state -> Admission in
                if state.closed { return .closed }
                if let depth = state.holders[me] {
                    // A nested transaction: the thread already holds the gate, so an exclusive holder cannot be
                    // inside, and making it wait would deadlock the waiter and this thread.
                    state.holders[me] = depth + 1
                } else if state.exclusive || state.exclusiveWaiters > 0 {
                    return .wait
                } else {
                    state.holders[me] = 1
                }
                state.active += 1
                if takingIdleReader { unsafe idle = unsafe state.idleReaders.popLast() }
                return .entered
            }
            switch admission {
            case .entered: return unsafe idle
            case .closed: throw LMDBError.environmentClosed
            case .wait: usleep(50)
            }
        }
    }

    /// Lets out one transaction of the calling thread.
    func leave() {
        let me = UInt(pthread_self())
        state.withLock { $0.release(me) }
    }

    /// Lets out one read transaction of the calling thread and keeps its handle, `reader`, reset already, for a later
    /// ``enter(takingIdleReader:)``; returns `false`, letting nothing out, when the gate keeps enough, or an
    /// exclusive holder waits or the gate is closed: the caller then aborts the handle and calls ``leave()``.
    func leave(keeping reader: OpaquePointer) -> Bool {
        let me = UInt(pthread_self())
        return state.withLock { state in
            guard unsafe state.idleReaders.count < idleReaderLimit, !state.closed, state.exclusiveWaiters == 0 else {
                return false
            }
            unsafe state.idleReaders.append(reader)
            state.release(me)
            return true
        }
    }

    /// Closes the gate for good from inside the body of ``withExclusiveAccess(closing:_:)``, for a resize or reopen
    /// that failed and left no environment behind.
    func closeWhileExclusive() {
        state.withLock { $0.closed = true }
    }

    /// Runs `body` while no transaction of the process is alive and none can begin.
    ///
    /// - Parameters:
    ///   - closing: Whether the gate stays closed afterwards, turning every later `enter()` away.
    ///   - body: The work that needs the process to itself, such as `mdb_env_set_mapsize`.
    /// - Throws: ``LMDBError/environmentClosed`` if the gate is closed, ``LMDBError/busy`` if the calling thread
    ///   itself holds a transaction (waiting would never end), or what `body` throws.
    func withExclusiveAccess<R>(closing: Bool = false, _ body: () throws -> R) throws -> R {
        let me = UInt(pthread_self())
        try state.withLock { state throws(LMDBError) in
            if state.closed { throw LMDBError.environmentClosed }
            if state.holders[me] != nil {
                throw LMDBError(
                    code: LMDBError.busy.code,
                    detail: "This thread holds a transaction of the environment; end it first"
                )
            }
            state.exclusiveWaiters += 1
        }
        while true {
            let acquired = state.withLock { state -> Bool in
                guard state.active == 0, !state.exclusive else { return false }
                state.exclusive = true
                state.exclusiveWaiters -= 1
                return true
            }
            if acquired { break }
            usleep(100)
        }
        // No transaction is alive: the kept ones go, before the body closes or replaces their MDB_env.
        var idle = unsafe state.withLock { state in
            defer { unsafe state.idleReaders.removeAll() }
            return unsafe state.idleReaders
        }
        while let reader = unsafe idle.popLast() { unsafe mdb_txn_abort(reader) }
        defer {
            state.withLock { state in
                state.exclusive = false
                if closing { state.closed = true }
            }
        }
        return try body()
    }
}
