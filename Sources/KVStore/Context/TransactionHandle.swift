import LMDB

/// The LMDB transaction a ``ModelTransaction`` works in, held by address.
///
/// A `Transaction` is noncopyable and lent to the body of `Environment.read(_:)` or `write(_:)`; the model
/// transaction that the container lends in turn to its caller's body must reach it without owning it, so it holds
/// its address. One of the module's few places with unsafe code (ARCHITECTURE.md lists them). Its invariant:
///
/// - **Lifetime.** A handle is valid only inside the ``withTransactionHandle(_:_:)`` call that lends it, which is the
///   only way to make one, and the container creates its model transaction there. The model transaction is
///   noncopyable and lent to the caller's body as `borrowing`, so it can't outlive the call either. In debug builds
///   every use checks that the lending call has not returned.
@safe
struct TransactionHandle {
    /// The lent transaction.
    fileprivate let pointer: UnsafePointer<Transaction>
    #if DEBUG
        /// Whether the lending call is still running; checked by every use in debug builds.
        fileprivate let lease: Lease
    #endif

    /// The transaction, borrowed for the access.
    var pointee: Transaction {
        _read {
            #if DEBUG
                assert(lease.isOpen, "a model transaction was used after its transaction ended")
            #endif
            yield unsafe pointer.pointee
        }
    }
}

#if DEBUG
    /// Whether a transaction handle's lending call is still running.
    final class Lease {
        /// Set to `false` when the call returns.
        var isOpen = true
    }
#endif

/// Lends `txn` to `body` as a handle that must not outlive the call.
@inline(__always)
func withTransactionHandle<R>(_ txn: borrowing Transaction, _ body: (TransactionHandle) throws -> R) rethrows -> R {
    try unsafe withUnsafePointer(to: txn) { pointer in
        #if DEBUG
            let lease = Lease()
            defer { lease.isOpen = false }
            return try body(unsafe TransactionHandle(pointer: pointer, lease: lease))
        #else
            return try body(unsafe TransactionHandle(pointer: pointer))
        #endif
    }
}
