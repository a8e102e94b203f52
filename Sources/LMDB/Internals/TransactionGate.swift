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
final class TransactionGate: Sendable {
    private struct State {
        /// Nesting count of the transactions each thread holds.
        var holders: [UInt: Int] = [:]
        var active = 0
        var exclusiveWaiters = 0
        var exclusive = false
        var closed = false
    }

    private enum Admission {
        case entered, wait, closed
    }

    private let state = Locked(State())

    /// Whether the gate was closed for good.
    var isClosed: Bool {
        state.withLock { $0.closed }
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
        let me = UInt(pthread_self())
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
                return .entered
            }
            switch admission {
            case .entered: return
            case .closed: throw LMDBError.environmentClosed
            case .wait: usleep(50)
            }
        }
    }

    /// Lets out one transaction of the calling thread.
    func leave() {
        let me = UInt(pthread_self())
        state.withLock { state in
            let depth = state.holders[me] ?? 1
            state.holders[me] = depth > 1 ? depth - 1 : nil
            state.active -= 1
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
        defer {
            state.withLock { state in
                state.exclusive = false
                if closing { state.closed = true }
            }
        }
        return try body()
    }
}
