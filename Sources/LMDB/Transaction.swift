import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read or write transaction, lent to the body of ``Environment/read(_:)`` or ``Environment/write(_:)``.
///
/// A transaction is non-copyable and only ever borrowed, so it cannot outlive the call that began it, and the
/// compiler rejects any attempt to keep it. Memory it hands out (`withUnsafeBytes(forKey:in:_:)`, cursor entries)
/// is LMDB's memory map: it is valid only inside the closure that receives it.
///
/// ```swift
/// try environment.write { txn in
///     try txn.put(Array("1".utf8), forKey: Array("count".utf8), in: table)
///     try txn.delete(forKey: Array("stale".utf8), in: table)
/// }
/// ```
///
/// `@safe`: its `MDB_txn` handle is valid for as long as the transaction is, since the transaction is lent to a
/// closure and committed, aborted or (a read transaction) reset when the closure returns.
@safe
public struct Transaction: ~Copyable {
    let handle: OpaquePointer
    let environment: Environment

    /// Whether this is a read transaction, in which every write throws ``LMDBError/accessDenied``.
    public let isReadOnly: Bool

    init(handle: OpaquePointer, environment: Environment, isReadOnly: Bool) {
        unsafe self.handle = unsafe handle
        self.environment = environment
        self.isReadOnly = isReadOnly
    }

    /// The transaction's ID: for a write transaction the ID its commit will have, for a read transaction the ID of
    /// the snapshot it reads.
    ///
    /// The corresponding LMDB function is `mdb_txn_id`.
    public var id: Int {
        unsafe mdb_txn_id(handle)
    }

    /// Options for ``put(_:forKey:in:options:)-(_,Key,_,_)``.
    public struct PutOptions: OptionSet, Hashable, Sendable {
        /// The raw `MDB_*` write flags.
        public let rawValue: UInt32

        /// Creates options from raw `MDB_*` write flags.
        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// Fails with ``LMDBError/keyExists`` when the key is present, even in a `dupSort` table
        /// (`MDB_NOOVERWRITE`).
        public static let noOverwrite = PutOptions(rawValue: UInt32(MDB_NOOVERWRITE))
        /// In a `dupSort` table, fails with ``LMDBError/keyExists`` when the key already holds this value
        /// (`MDB_NODUPDATA`).
        public static let noDuplicateData = PutOptions(rawValue: UInt32(MDB_NODUPDATA))
        /// Appends at the end of the table, which is fast for keys written in order; fails with
        /// ``LMDBError/keyExists`` when the key is not greater than the last one (`MDB_APPEND`).
        public static let append = PutOptions(rawValue: UInt32(MDB_APPEND))
        /// In a `dupSort` table, appends the value after the key's last value (`MDB_APPENDDUP`).
        public static let appendDuplicate = PutOptions(rawValue: UInt32(MDB_APPENDDUP))
    }

    // MARK: - Child transactions

    /// Runs `body` in a child transaction of this write transaction, and commits it into this one when `body`
    /// returns, or discards its changes when `body` throws.
    ///
    /// Changes of a committed child become durable only when this transaction commits. While the child runs, this
    /// transaction must not be used.
    ///
    /// - Parameter body: The work to do in the child.
    /// - Returns: What `body` returns.
    /// - Throws: ``LMDBError/invalidArgument`` in a read transaction, ``LMDBError/badTransaction`` in an environment
    ///   with ``Environment/Options/writeMap`` (LMDB has no child transactions there), or what `body` throws.
    ///
    /// The corresponding LMDB function is `mdb_txn_begin` with a parent.
    public func withChildTransaction<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        if isReadOnly {
            throw failure(EINVAL, "mdb_txn_begin", detail: "Read transactions have no child transactions")
        }
        if environment.configuration.options.contains(.writeMap) {
            throw failure(
                MDB_BAD_TXN, "mdb_txn_begin", detail: "LMDB has no child transactions with the writeMap option")
        }
        var child: OpaquePointer?
        let code = unsafe mdb_txn_begin(environment.handle, handle, 0, &child)
        guard code == 0, let child = unsafe child else { throw failure(code, "mdb_txn_begin") }
        let result: R
        do {
            result = try unsafe body(Transaction(handle: child, environment: environment, isReadOnly: false))
        } catch {
            unsafe mdb_txn_abort(child)
            throw error
        }
        try unsafe check(mdb_txn_commit(child), "mdb_txn_commit")
        return result
    }

    // MARK: - Table operations

    /// The statistics of a table in this transaction's snapshot.
    ///
    /// - Parameter table: The table.
    /// - Returns: Its page and entry counts.
    /// - Throws: ``LMDBError/badTable`` for a handle dropped already or of another environment.
    ///
    /// The corresponding LMDB function is `mdb_stat`.
    public func statistics(of table: Table) throws -> Environment.Statistics {
        var stat = MDB_stat()
        try unsafe check(mdb_stat(handle, try dbi(of: table, "mdb_stat"), &stat), "mdb_stat", table)
        return Environment.Statistics(stat)
    }

    /// The number of entries in a table, counting each duplicate of a `dupSort` table.
    ///
    /// - Parameter table: The table.
    /// - Throws: ``LMDBError/badTable`` for a handle dropped already or of another environment.
    public func count(of table: Table) throws -> Int {
        try statistics(of: table).entries
    }

    /// Deletes every entry of a table, keeping the table.
    ///
    /// - Parameter table: The table to empty.
    /// - Throws: ``LMDBError/accessDenied`` in a read transaction, ``LMDBError/badTable`` for a handle dropped already
    ///   or of another environment.
    ///
    /// The corresponding LMDB function is `mdb_drop` with `del` 0.
    public func empty(_ table: Table) throws {
        try checkWritable("mdb_drop", table)
        try unsafe check(mdb_drop(handle, try dbi(of: table, "mdb_drop"), 0), "mdb_drop", table)
    }
}

/// What transactions and cursors share to report errors and validate input.
protocol TransactionContext: ~Copyable {
    var environment: Environment { get }
    var isReadOnly: Bool { get }
}

extension Transaction: TransactionContext {}

extension TransactionContext where Self: ~Copyable {

    /// Throws an error with this transaction's context for a non-zero return code.
    @inline(__always)
    func check(_ code: Int32, _ operation: StaticString, _ table: Table? = nil) throws(LMDBError) {
        if code != 0 { throw failure(code, operation, table) }
    }

    /// An error with this transaction's context. It records `MDB_MAP_FULL`, so that the write can grow the map and
    /// run again even when the body turned the error into one of its own.
    func failure(_ code: Int32, _ operation: StaticString, _ table: Table? = nil, detail: String? = nil) -> LMDBError {
        if code == MDB_MAP_FULL {
            environment.core.mapFullSeen.store(true, ordering: .relaxed)
        }
        var detail = detail
        if detail == nil && code == EACCES && isReadOnly {
            detail = "The transaction is read-only"
        }
        return LMDBError(
            code: code, operation: "\(operation)", path: environment.path, table: table?.displayName, detail: detail)
    }

    /// The `MDB_dbi` of `table`, once it is known to be a live handle of this transaction's environment.
    ///
    /// LMDB hands a dropped table's `MDB_dbi` to the next table opened, and numbers the tables of each environment
    /// from the same start, so a stale handle, or one of another environment, would silently reach another table.
    @inline(__always)
    func dbi(of table: Table, _ operation: StaticString) throws(LMDBError) -> MDB_dbi {
        let dbi = table.slot.dbi
        if dbi == 0 || table.slot.environmentID != environment.coreID {
            throw staleTable(table, operation)
        }
        return dbi
    }

    private func staleTable(_ table: Table, _ operation: StaticString) -> LMDBError {
        let detail =
            table.slot.dbi == 0
            ? "The table was dropped; open it again"
            : "The table handle belongs to another environment, or to one closed since; open the table again"
        return failure(MDB_BAD_DBI, operation, table, detail: detail)
    }

    func checkWritable(_ operation: StaticString, _ table: Table) throws(LMDBError) {
        if isReadOnly { throw failure(EACCES, operation, table) }
    }

    /// Rejects, before LMDB sees it, a key LMDB cannot store or look up.
    @inline(__always)
    func validateKey(_ key: UnsafeRawBufferPointer, _ table: Table, _ operation: StaticString) throws(LMDBError) {
        let count = key.count
        if count == 0 || count > environment.maxKeySize {
            throw failure(
                MDB_BAD_VALSIZE, operation, table,
                detail: "Keys must be 1 to \(environment.maxKeySize) bytes long; this one has \(count)")
        }
        if table.options.contains(.integerKey) && count != 4 && count != 8 {
            throw failure(
                MDB_BAD_VALSIZE, operation, table,
                detail: "Keys of an integerKey table are 4 or 8 bytes long; this one has \(count)")
        }
    }

    /// Rejects, before LMDB sees it, a value that a `dupSort` table cannot hold.
    @inline(__always)
    func validateValue(_ value: UnsafeRawBufferPointer, _ table: Table, _ operation: StaticString) throws(LMDBError) {
        guard table.options.contains(.dupSort) else { return }
        let count = value.count
        if count > environment.maxKeySize {
            throw failure(
                MDB_BAD_VALSIZE, operation, table,
                detail:
                    "Values of a dupSort table are limited to \(environment.maxKeySize) bytes; this one has \(count)"
            )
        }
        if table.options.contains(.integerDup) && count != 4 && count != 8 {
            throw failure(
                MDB_BAD_VALSIZE, operation, table,
                detail: "Values of an integerDup table are 4 or 8 bytes long; this one has \(count)")
        }
    }
}

@available(*, unavailable)
extension Transaction: Sendable {}

// MARK: - Bytes

/// An `MDB_val` that points at `bytes`, valid as long as `bytes` is.
@inline(__always)
func mdbValue(_ bytes: UnsafeRawBufferPointer) -> MDB_val {
    unsafe MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
}

/// The bytes an `MDB_val` from LMDB points at.
@inline(__always)
func buffer(_ value: MDB_val) -> UnsafeRawBufferPointer {
    unsafe UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
}

/// Runs `body` with the contiguous bytes of `bytes`, copying them only when the collection has no contiguous storage.
@inlinable
func withBytes<Bytes: Collection<UInt8>, R>(
    _ bytes: Bytes,
    _ body: (UnsafeRawBufferPointer) throws -> R
) throws -> R {
    if let result = try bytes.withContiguousStorageIfAvailable({ try unsafe body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    return try unsafe Array(bytes).withUnsafeBytes(body)
}
