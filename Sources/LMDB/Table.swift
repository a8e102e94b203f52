import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A handle on one table (an LMDB named database) of an environment.
///
/// Open tables once, early, with ``Environment/openTable(named:options:create:)`` and keep the handle: it is a small
/// `Sendable` value, valid in every later transaction of its environment until the table is dropped or the
/// environment closes. Using it after that, or in a transaction of another environment, throws
/// ``LMDBError/badTable`` instead of reaching another table.
public struct Table: Hashable, Sendable {
    /// The table's name, or `nil` for the environment's main table.
    public let name: String?

    /// How keys and values are ordered and stored.
    public let options: Options

    /// Where the table's `MDB_dbi` is read from: shared by every copy of the handle, so that a drop, or a reopen of
    /// the environment with more table slots, reaches them all.
    let slot: TableSlot

    /// Handles are equal when they are copies of one opening of a table.
    public static func == (lhs: Table, rhs: Table) -> Bool {
        lhs.slot === rhs.slot
    }

    /// Hashes the opening, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(slot))
    }

    /// A name for messages: the table's name, or `(main)`.
    var displayName: String {
        name ?? "(main)"
    }

    /// How a table orders and stores its entries. These are fixed when the table is created.
    public struct Options: OptionSet, Hashable, Sendable {
        /// The raw `MDB_*` table flags.
        public let rawValue: UInt32

        /// Creates options from raw `MDB_*` table flags.
        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// Keys compare from their last byte to their first (`MDB_REVERSEKEY`).
        public static let reverseKey = Options(rawValue: UInt32(MDB_REVERSEKEY))
        /// A key may hold several values, kept sorted; values are limited to the maximum key size (`MDB_DUPSORT`).
        public static let dupSort = Options(rawValue: UInt32(MDB_DUPSORT))
        /// Keys are native unsigned integers of 4 or 8 bytes, compared as numbers (`MDB_INTEGERKEY`).
        public static let integerKey = Options(rawValue: UInt32(MDB_INTEGERKEY))
        /// With ``dupSort``: all values of a key have the same size, which allows reading them a page at a time
        /// (`MDB_DUPFIXED`).
        public static let dupFixed = Options(rawValue: UInt32(MDB_DUPFIXED))
        /// With ``dupSort``: values are native unsigned integers of 4 or 8 bytes (`MDB_INTEGERDUP`).
        public static let integerDup = Options(rawValue: UInt32(MDB_INTEGERDUP))
        /// With ``dupSort``: values compare from their last byte to their first (`MDB_REVERSEDUP`).
        public static let reverseDup = Options(rawValue: UInt32(MDB_REVERSEDUP))

        /// The flags LMDB stores with a table.
        static let persistent: Options = [.reverseKey, .dupSort, .integerKey, .dupFixed, .integerDup, .reverseDup]
    }
}

/// The `MDB_dbi` of an open table, shared by every copy of its handle.
///
/// `0` (LMDB's free-page table, never a named table's) marks a handle that is no longer valid: the table was dropped,
/// or deleted by another process before the environment reopened.
final class TableSlot: Sendable {
    /// The ``EnvironmentCore/id`` of the environment the handle belongs to.
    let environmentID: UInt64
    private let storage: Atomic<MDB_dbi>

    init(environmentID: UInt64, dbi: MDB_dbi) {
        self.environmentID = environmentID
        self.storage = Atomic(dbi)
    }

    /// The table's `MDB_dbi`, or `0` when the handle is no longer valid.
    var dbi: MDB_dbi {
        storage.load(ordering: .relaxed)
    }

    func set(_ dbi: MDB_dbi) {
        storage.store(dbi, ordering: .relaxed)
    }
}

extension Environment {
    /// Opens a table, creating it if asked, and returns its handle.
    ///
    /// Handles are cached, so opening a table again is cheap. Open tables before beginning transactions: LMDB lets
    /// only one transaction at a time open tables, so opening a table that is not open yet from inside a transaction
    /// throws instead of risking a deadlock. When every table slot of the environment is taken
    /// (``Configuration/maxTables``), the environment reopens with twice as many while no transaction of the process
    /// is alive; the handles already open stay valid.
    ///
    /// - Parameters:
    ///   - name: The table's name, or `nil` for the main table (which holds the names of the others).
    ///   - options: How the table orders and stores entries; they must match those it was created with.
    ///   - create: Whether to create the table when it does not exist. Creating fails in a read-only environment.
    /// - Returns: The table's handle.
    /// - Throws: ``LMDBError/notFound`` when the table does not exist and `create` is false,
    ///   ``LMDBError/incompatible`` when `options` differ from the table's, ``LMDBError/busy`` when called inside a
    ///   transaction for a table not open yet, ``LMDBError/environmentClosed`` after ``close()``.
    ///
    /// The corresponding LMDB function is `mdb_dbi_open`.
    public func openTable(named name: String?, options: Table.Options = [], create: Bool = false) throws -> Table {
        if isClosed {
            throw LMDBError(code: LMDBError.environmentClosed.code, operation: "mdb_dbi_open", path: path)
        }
        let key = Self.cacheKey(name)
        let wanted = options.intersection(.persistent)
        if let table = try cachedTable(key, name: name, wanted: wanted) { return table }
        if gate.callerIsInside {
            throw LMDBError(
                code: LMDBError.busy.code, operation: "mdb_dbi_open", path: path, table: name ?? "(main)",
                detail: "Open tables before beginning a transaction: LMDB lets one transaction at a time open tables")
        }
        return try core.tableOpening.withLock { opened in
            opened += 1
            if let table = try cachedTable(key, name: name, wanted: wanted) { return table }
            let table: Table
            do {
                table = try openUncached(name, wanted: wanted, create: create)
            } catch LMDBError.tablesFull {
                try core.growTables(atLeast: core.tableSlots.load(ordering: .relaxed) + 1)
                table = try openUncached(name, wanted: wanted, create: create)
            }
            core.tableCache.withLock { $0[key] = table }
            // LMDB opens an existing table with the options it was created with, whatever is asked for.
            return try compatible(table, wanted: wanted)
        }
    }

    /// Opens an existing table in a read transaction, so that read-only environments and concurrent writers are no
    /// obstacle, and creates it in a write transaction only when it is missing. The caller holds `tableOpening`.
    private func openUncached(_ name: String?, wanted: Table.Options, create: Bool) throws -> Table {
        if let existing = try readOpeningTables({ txn in try txn.openDatabase(name, options: wanted, create: false) }) {
            return existing
        }
        guard create else {
            throw LMDBError(
                code: MDB_NOTFOUND, operation: "mdb_dbi_open", path: path, table: name ?? "(main)",
                detail: "No such table")
        }
        guard let created = try write({ txn in try txn.openDatabase(name, options: wanted, create: true) }) else {
            throw LMDBError(code: MDB_NOTFOUND, operation: "mdb_dbi_open", path: path, table: name)
        }
        return created
    }

    /// Deletes a table and everything in it, and closes its handle.
    ///
    /// Any copy of the handle becomes invalid. Make sure no other thread uses the table meanwhile: lmdb.h warns that
    /// closing a handle "is not mutex protected".
    ///
    /// - Parameter table: The table to delete. The main table cannot be deleted, only emptied.
    /// - Throws: ``LMDBError/invalidArgument`` for the main table, ``LMDBError/busy`` when called inside a
    ///   transaction, ``LMDBError/badTable`` for a handle dropped already or of another environment, or what
    ///   ``write(_:)`` throws (``LMDBError/accessDenied`` in a read-only environment, ``LMDBError/mapFull``).
    ///
    /// The corresponding LMDB function is `mdb_drop`.
    public func dropTable(_ table: Table) throws {
        guard table.name != nil else {
            throw LMDBError(
                code: EINVAL, operation: "mdb_drop", path: path, table: "(main)",
                detail: "The main table cannot be dropped; empty it instead")
        }
        if gate.callerIsInside {
            throw LMDBError(
                code: LMDBError.busy.code, operation: "mdb_drop", path: path, table: table.displayName,
                detail: "Drop tables outside transactions")
        }
        try core.tableOpening.withLock { opened in
            opened -= 1
            // mdb_drop with del 1 closes the handle at once, not at the commit: if the commit then fails with
            // MDB_MAP_FULL, the retry after the map grew would drop a closed handle (EINVAL). Emptying a large table
            // is what fills the map, and it can be retried; deleting the empty table then needs almost no pages.
            try write { txn in
                try unsafe txn.check(mdb_drop(txn.handle, try txn.dbi(of: table, "mdb_drop"), 0), "mdb_drop", table)
            }
            try write { txn in
                try unsafe txn.check(mdb_drop(txn.handle, try txn.dbi(of: table, "mdb_drop"), 1), "mdb_drop", table)
            }
            // LMDB gives the freed MDB_dbi to the next table opened: every copy of this handle must stop using it.
            table.slot.set(0)
            core.tableCache.withLock { $0[Self.cacheKey(table.name)] = nil }
        }
    }

    private static func cacheKey(_ name: String?) -> String {
        // "\0" cannot be part of a C string, so it never collides with a table's name.
        name ?? "\0"
    }

    private func cachedTable(_ key: String, name: String?, wanted: Table.Options) throws(LMDBError) -> Table? {
        guard let table = core.tableCache.withLock({ $0[key] }), table.slot.dbi != 0 else { return nil }
        return try compatible(table, wanted: wanted)
    }

    private func compatible(_ table: Table, wanted: Table.Options) throws(LMDBError) -> Table {
        guard table.options == wanted else {
            throw LMDBError(
                code: MDB_INCOMPATIBLE, operation: "mdb_dbi_open", path: path, table: table.displayName,
                detail: "The table was created with other options (\(table.options.rawValue), not \(wanted.rawValue))")
        }
        return table
    }
}

extension Transaction {
    /// Opens a database handle in this transaction; `nil` when it does not exist and `create` is false.
    func openDatabase(_ name: String?, options: Table.Options, create: Bool) throws(LMDBError) -> Table? {
        var dbi: MDB_dbi = 0
        let flags = options.rawValue | (create ? UInt32(MDB_CREATE) : 0)
        let code = unsafe mdb_dbi_open(handle, name, flags, &dbi)
        if code == MDB_NOTFOUND && !create { return nil }
        if code == MDB_INCOMPATIBLE {
            throw LMDBError(
                code: code, operation: "mdb_dbi_open", path: environment.path, table: name ?? "(main)",
                detail: "The table was created with other options, or the name is not a table")
        }
        if code != 0 {
            throw LMDBError(code: code, operation: "mdb_dbi_open", path: environment.path, table: name ?? "(main)")
        }
        var actual: UInt32 = 0
        let flagsCode = unsafe mdb_dbi_flags(handle, dbi, &actual)
        if flagsCode != 0 {
            throw LMDBError(
                code: flagsCode, operation: "mdb_dbi_flags", path: environment.path, table: name ?? "(main)")
        }
        return Table(
            name: name, options: Table.Options(rawValue: actual).intersection(.persistent),
            slot: TableSlot(environmentID: environment.core.id, dbi: dbi))
    }
}
