import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What every ``Environment`` handle on one data file shares: the `MDB_env`, the gate its transactions pass, and
/// its tables.
///
/// LMDB forbids opening one environment twice in a process (POSIX file locks belong to the process, so closing the
/// second `MDB_env` would release the first one's locks), so each open of a path that is already open gets a new
/// handle on the same core. The core is closed when its last handle is.
///
/// `@safe`: the `MDB_env` pointer is used only while the gate admits a transaction or holds it exclusively, and is
/// freed only under exclusive access once, after which every use is refused.
@safe
final class EnvironmentCore: @unchecked Sendable {
    // @unchecked Sendable: the MDB_env is thread-safe with MDB_NOTLS; every mutable state below is atomic or sits
    // behind a lock, and the MDB_env pointer changes only while the gate is held exclusively.

    /// Unique in the process for its whole run: table handles carry it, so that a handle of a closed core is never
    /// taken for one of the core opened after it on the same path.
    let id: UInt64

    /// The canonical path.
    let path: String

    /// The configuration the first handle opened the environment with.
    let configuration: Environment.Configuration

    /// The options of ``Environment/Options/syncing`` that commits run with now: those of ``configuration`` until a
    /// handle asks for more durability (``strengthenSync(to:)``).
    private let syncOptionsStorage: Atomic<UInt32>

    /// The `MDB_env`. It changes only when ``growTables(atLeast:)`` reopens the environment with more table slots,
    /// which holds the gate exclusively, so every reader that passed the gate sees one value throughout.
    private let handleStorage: Atomic<OpaquePointer>

    /// The largest key, and the largest value of a `dupSort` table, in bytes.
    let maxKeySize: Int

    /// The size of a database page in bytes.
    let pageSize: Int

    let gate: TransactionGate
    let currentMapSize: Atomic<Int>
    /// The number of table slots the `MDB_env` was opened with.
    let tableSlots: Atomic<Int>
    /// Set when an operation of the current write transaction returned `MDB_MAP_FULL`; only one write transaction
    /// runs at a time in an environment, so one flag serves it.
    let mapFullSeen = Atomic<Bool>(false)
    /// The open tables by name, each with the slot that every copy of its handle reads its `MDB_dbi` from.
    let tableCache = Locked<[String: Table]>([:])
    /// Serializes the short transactions that call `mdb_dbi_open`, which lmdb.h allows in one transaction at a time:
    /// "A transaction that uses this function must finish (either commit or abort) before any other transaction in
    /// the process may use this function." Counts the tables opened, which makes it a lock with a value (see
    /// `Locked`).
    let tableOpening = Locked<Int>(0)

    private static let nextID = Atomic<UInt64>(1)

    init(handle: OpaquePointer, path: String, configuration: Environment.Configuration) {
        self.id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        unsafe self.handleStorage = unsafe Atomic(handle)
        self.path = path
        self.configuration = configuration
        self.syncOptionsStorage = Atomic(configuration.options.intersection(.syncing).rawValue)
        self.maxKeySize = unsafe Int(mdb_env_get_maxkeysize(handle))
        var stat = MDB_stat()
        self.pageSize = unsafe mdb_env_stat(handle, &stat) == 0 ? Int(stat.ms_psize) : Int(sysconf(Int32(_SC_PAGESIZE)))
        var info = unsafe MDB_envinfo()
        self.currentMapSize = unsafe Atomic(mdb_env_info(handle, &info) == 0 ? info.me_mapsize : configuration.mapSize)
        self.tableSlots = Atomic(configuration.maxTables)
        self.gate = TransactionGate(idleReaderLimit: Self.idleReaderLimit(maxReaders: configuration.maxReaders))
    }

    /// How many reset read transactions the gate keeps: up to 4, and no more than an eighth of the reader slots,
    /// which every process with the environment open shares (none with fewer than 8 slots).
    static func idleReaderLimit(maxReaders: Int) -> Int {
        min(4, maxReaders / 8)
    }

    /// The `MDB_env`.
    var handle: OpaquePointer {
        unsafe handleStorage.load(ordering: .acquiring)
    }

    /// The options of ``Environment/Options/syncing`` that commits run with now.
    var syncOptions: Environment.Options {
        Environment.Options(rawValue: syncOptionsStorage.load(ordering: .acquiring))
    }

    /// Makes commits wait for the disk at least as much as `requested` asks (see
    /// ``Environment/Options/syncStrength``), for every handle: a handle never commits with less durability than it
    /// was opened with. Nothing changes when the environment already waits as much or more, when it is read-only,
    /// or when `requested` is a read-only open's, which commits nothing.
    ///
    /// LMDB's flags are changed while no transaction of the process is alive (lmdb.h, `mdb_env_set_flags`: "If
    /// several threads change the flags at the same time, the result is undefined"), so that no commit reads them
    /// half changed.
    ///
    /// - Throws: ``LMDBError/busy`` when the calling thread is inside a transaction of the environment,
    ///   ``LMDBError/environmentClosed`` when it is closed, or the error of `mdb_env_set_flags`.
    func strengthenSync(to requested: Environment.Options) throws {
        guard !configuration.options.contains(.readOnly), !requested.contains(.readOnly),
            requested.syncStrength > syncOptions.syncStrength
        else { return }
        try gate.withExclusiveAccess {
            let current = syncOptions
            guard requested.syncStrength > current.syncStrength else { return }
            let target = requested.intersection(.syncing)
            let cleared = current.subtracting(target)
            let added = target.subtracting(current)
            if !cleared.isEmpty {
                try unsafe check(mdb_env_set_flags(handle, cleared.rawValue, 0), "mdb_env_set_flags", path: path)
            }
            if !added.isEmpty {
                try unsafe check(mdb_env_set_flags(handle, added.rawValue, 1), "mdb_env_set_flags", path: path)
            }
            syncOptionsStorage.store(target.rawValue, ordering: .releasing)
        }
    }

    /// Closes the `MDB_env` for good, once no transaction is alive, and turns every later transaction away.
    ///
    /// - Throws: ``LMDBError/busy`` when the calling thread is inside a transaction of the environment.
    func close() throws(LMDBError) {
        do {
            try gate.withExclusiveAccess(closing: true) {
                unsafe mdb_env_close(handle)
            }
        } catch let error as LMDBError {
            if error == .environmentClosed { return }
            throw error
        } catch {
            // withExclusiveAccess throws only LMDBError, and its body nothing.
            throw LMDBError(code: EINVAL, operation: "close", path: path, detail: "\(error)")
        }
    }

    /// Reopens the environment with at least `count` table slots (doubling), and points every open table's slot at
    /// its new `MDB_dbi`.
    ///
    /// LMDB fixes the number of named tables when an environment opens (`mdb_env_set_maxdbs`), so a container that
    /// needs more tables than the first opener of the path reserved would otherwise fail with `MDB_DBS_FULL`. No
    /// transaction of the process is alive meanwhile (the gate is held exclusively); the table handles everyone holds
    /// stay valid, since they read their `MDB_dbi` from slots this updates. The caller holds ``tableOpening``.
    ///
    /// - Throws: ``LMDBError/busy`` when the calling thread is inside a transaction, or what reopening throws; the
    ///   environment is then closed for good, and later use throws ``LMDBError/environmentClosed``.
    func growTables(atLeast count: Int) throws {
        try gate.withExclusiveAccess {
            var slots = max(tableSlots.load(ordering: .relaxed), 1)
            while slots < count { slots *= 2 }
            guard slots > tableSlots.load(ordering: .relaxed) else { return }
            var reopened = configuration
            reopened.options = configuration.options.subtracting(.syncing).union(syncOptions)
            reopened.maxTables = slots
            reopened.mapSize = currentMapSize.load(ordering: .relaxed)
            // lmdb.h on mdb_env_open: "Do not have open an LMDB database twice in the same process at the same
            // time": the old MDB_env closes first.
            unsafe mdb_env_close(handle)
            let handle: OpaquePointer
            do {
                unsafe handle = try unsafe Environment.openHandle(at: path, configuration: reopened)
            } catch {
                gate.closeWhileExclusive()
                throw error
            }
            unsafe handleStorage.store(handle, ordering: .releasing)
            tableSlots.store(slots, ordering: .relaxed)
            try unsafe reopenCachedTables(handle)
        }
    }

    /// Opens every cached table again in the new `MDB_env`, in one read transaction, in the order of their old
    /// handles.
    private func reopenCachedTables(_ handle: OpaquePointer) throws(LMDBError) {
        let tables = tableCache.withLock { Array($0.values) }.sorted { $0.slot.dbi < $1.slot.dbi }
        var txn: OpaquePointer?
        let begun = unsafe mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        guard begun == 0, let txn = unsafe txn else {
            throw LMDBError(code: begun, operation: "mdb_txn_begin", path: path)
        }
        defer { unsafe mdb_txn_commit(txn) }
        for table in tables where table.slot.dbi != 0 {
            var dbi: MDB_dbi = 0
            let code = unsafe mdb_dbi_open(txn, table.name, table.options.rawValue, &dbi)
            // A table that another process deleted meanwhile has no handle any more.
            table.slot.set(code == 0 ? dbi : 0)
        }
    }
}
