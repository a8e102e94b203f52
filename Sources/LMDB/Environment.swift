import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An LMDB environment: one data file (and its lock file) holding any number of named tables.
///
/// Open an environment with ``open(path:configuration:)``, open its tables once with
/// ``openTable(named:options:create:)``, then read and write in transactions:
///
/// ```swift
/// let environment = try Environment.open(path: directory)
/// let users = try environment.openTable(named: "users")
/// try environment.write { txn in
///     try txn.put(Array("Ada".utf8), forKey: Array("u1".utf8), in: users)
/// }
/// let name = try environment.read { txn in try txn.value(forKey: Array("u1".utf8), in: users) }
/// ```
///
/// An environment is `Sendable`: any thread may begin transactions, and read transactions run in parallel. LMDB
/// forbids opening one file twice in a process, so an instance is a handle: opening a path that is already open
/// (whatever spelling of the path is used) returns a new handle on the same open environment, which shares its
/// tables, transactions and map with every other handle. Closing a handle, or dropping its last reference, leaves
/// the other handles working; the environment itself closes with its last handle.
///
/// The map grows by itself: when a write transaction fills it, the transaction is aborted, the map is doubled (up to
/// ``Configuration/maxMapSize``) while no transaction of the process is alive, and the transaction's body runs again.
public final class Environment: Sendable {
    /// The open environment this handle shares with the other handles of its path.
    let core: EnvironmentCore

    /// Whether ``close()`` was called on this handle.
    private let closed = Atomic<Bool>(false)

    /// The canonical path of the environment: absolute, with symbolic links resolved.
    public var path: String { core.path }

    /// The configuration the environment was opened with: that of the first handle of its path.
    public var configuration: Configuration { core.configuration }

    /// The largest key, and the largest value of a `dupSort` table, in bytes (511 for Debian's LMDB).
    ///
    /// The corresponding LMDB function is `mdb_env_get_maxkeysize`.
    public var maxKeySize: Int { core.maxKeySize }

    /// The size of a database page in bytes.
    public var pageSize: Int { core.pageSize }

    var handle: OpaquePointer { unsafe core.handle }
    /// The core's gate and identity, kept here as well: every transaction reaches them, and a stored reference is
    /// read without the retain and release a reference through the core costs.
    let gate: TransactionGate
    let coreID: UInt64

    init(core: EnvironmentCore) {
        self.core = core
        self.gate = core.gate
        self.coreID = core.id
    }

    deinit {
        // No transaction of this handle can be alive here: each holds a strong reference to its handle.
        if !closed.load(ordering: .relaxed) {
            EnvironmentRegistry.release(core)
        }
    }

    /// Opens the environment at `path`, or returns a new handle on the one this process already has open there.
    ///
    /// Without ``Options/noSubdirectory`` the path is a directory that must exist; LMDB creates `data.mdb` and
    /// `lock.mdb` inside it. With it, the path is the data file itself and the lock file is the path plus `-lock`.
    /// When the environment is already open, `configuration` is ignored, except that a writable open of an
    /// environment open read-only fails, and that commits become at least as durable as its ``Options/noSync`` and
    /// ``Options/noMetaSync`` ask (for every handle: see ``syncOptions``; the open then waits for the transactions
    /// of other threads to end); table slots are added when a table needs one (see
    /// ``openTable(named:options:create:)``).
    ///
    /// - Parameters:
    ///   - path: The directory, or with ``Options/noSubdirectory`` the file.
    ///   - configuration: Map size, limits, file mode and flags.
    /// - Returns: The open environment.
    /// - Throws: ``LMDBError`` naming the path: ``LMDBError/noSuchFile`` when the directory does not exist,
    ///   ``LMDBError/notDirectory`` when it is a file, ``LMDBError/accessDenied`` without permission,
    ///   ``LMDBError/invalid`` when the file is not an LMDB environment, ``LMDBError/invalidArgument`` for a bad
    ///   configuration, ``LMDBError/busy`` when the calling thread is inside a transaction of an environment this
    ///   open must make more durable.
    ///
    /// The corresponding LMDB functions are `mdb_env_create`, `mdb_env_open` and `mdb_env_set_flags`.
    public static func open(path: String, configuration: Configuration = Configuration()) throws -> Environment {
        guard !path.isEmpty else {
            throw LMDBError(code: EINVAL, operation: "open", detail: "The path is empty")
        }
        try validate(configuration, path: path)
        let canonical = Path.canonical(path)
        return try unsafe EnvironmentRegistry.environment(at: canonical, configuration: configuration) {
            path throws(LMDBError) in try unsafe openHandle(at: path, configuration: configuration)
        }
    }

    /// Whether `other` is a handle on the same open environment as this one.
    public func sharesEnvironment(with other: Environment) -> Bool {
        core === other.core
    }

    private static func validate(_ configuration: Configuration, path: String) throws(LMDBError) {
        func invalid(_ detail: String) -> LMDBError {
            LMDBError(code: EINVAL, operation: "open", path: path, detail: detail)
        }
        if configuration.mapSize <= 0 { throw invalid("The map size must be positive") }
        if configuration.maxMapSize < configuration.mapSize {
            throw invalid("The maximum map size is smaller than the map size")
        }
        if configuration.maxTables < 0 { throw invalid("The number of tables cannot be negative") }
        if configuration.maxReaders <= 0 { throw invalid("The number of readers must be positive") }
        if configuration.fileMode > 0o777 { throw invalid("The file mode has bits beyond 0o777") }
    }

    static func openHandle(at path: String, configuration: Configuration) throws(LMDBError) -> OpaquePointer {
        var created: OpaquePointer?
        try unsafe check(mdb_env_create(&created), "mdb_env_create", path: path)
        guard let handle = unsafe created else {
            throw LMDBError(code: ENOMEM, operation: "mdb_env_create", path: path)
        }
        do throws(LMDBError) {
            try unsafe check(mdb_env_set_mapsize(handle, configuration.mapSize), "mdb_env_set_mapsize", path: path)
            try unsafe check(
                mdb_env_set_maxdbs(handle, MDB_dbi(configuration.maxTables)), "mdb_env_set_maxdbs", path: path)
            try unsafe check(
                mdb_env_set_maxreaders(handle, UInt32(configuration.maxReaders)), "mdb_env_set_maxreaders",
                path: path)
            let flags = configuration.options.rawValue | UInt32(MDB_NOTLS)
            try checkMetaPages(at: path, options: configuration.options)
            let code = unsafe mdb_env_open(handle, path, flags, mdb_mode_t(configuration.fileMode))
            // LMDB takes an empty data file for a new environment, which a read-only open cannot write: it fails with
            // EBADF. There is no environment to read, as when the file is missing.
            let dataFile = configuration.options.contains(.noSubdirectory) ? path : path + "/data.mdb"
            var status = stat()
            if unsafe code == EBADF && configuration.options.contains(.readOnly) && stat(dataFile, &status) == 0
                && status.st_size == 0
            {
                throw LMDBError(
                    code: ENOENT, operation: "mdb_env_open", path: path,
                    detail: "The data file is empty: it holds no LMDB environment")
            }
            if code != 0 {
                throw LMDBError(
                    code: code, operation: "mdb_env_open", path: path,
                    detail: openFailureDetail(code, path: path, options: configuration.options))
            }
            try unsafe checkDataFileLength(handle, path: path)
        } catch {
            // lmdb.h: "If this function fails, mdb_env_close() must be called to discard the MDB_env handle."
            unsafe mdb_env_close(handle)
            throw error
        }
        return unsafe handle
    }

    private static func openFailureDetail(_ code: Int32, path: String, options: Options) -> String? {
        let single = options.contains(.noSubdirectory)
        switch code {
        case ENOENT:
            if single { return "No such file, or its directory does not exist" }
            return Path.fileType(path) == nil
                ? "The directory does not exist; create it first"
                : "The directory holds no LMDB environment"
        case ENOTDIR:
            return "The path is a file, not a directory; open a single-file store with the noSubdirectory option"
        case EISDIR:
            return "The path is a directory; open it without the noSubdirectory option"
        case EACCES, EPERM:
            return "Permission denied"
        case EROFS:
            return "The file system is read-only; open with the readOnly option"
        case MDB_INVALID:
            return "The file is not an LMDB environment"
        case MDB_VERSION_MISMATCH:
            return "The environment was written by an incompatible LMDB version"
        case EAGAIN:
            return "The lock file is locked by another process"
        default:
            return nil
        }
    }

    /// Whether the environment was opened read-only.
    public var isReadOnly: Bool {
        configuration.options.contains(.readOnly)
    }

    /// How much the environment's commits wait for the disk now: ``Options/noSync``, ``Options/noMetaSync`` or
    /// neither (a flush of the data and of the metadata at every commit).
    ///
    /// They are the options the environment was first opened with in the process, unless a later open asked for
    /// more durability, which then applies to every handle (see ``open(path:configuration:)``).
    public var syncOptions: Options {
        // LMDB's own flags, which commits read; the core's record of them after a close.
        let flags = try? withOpenEnvironment("mdb_env_get_flags") { () -> UInt32? in
            var flags: UInt32 = 0
            return unsafe mdb_env_get_flags(handle, &flags) == 0 ? flags : nil
        }
        guard let flags = flags ?? nil else { return core.syncOptions }
        return Options(rawValue: flags).intersection(.syncing)
    }

    /// Whether ``close()`` was called on this handle, or the environment was closed under it.
    public var isClosed: Bool {
        closed.load(ordering: .relaxed) || gate.isClosed
    }

    /// Closes this handle. The environment itself closes with the last handle of its path, after waiting for the
    /// transactions of other threads to end.
    ///
    /// Every later use of this handle, or of a table opened through it, throws ``LMDBError/environmentClosed``; other
    /// handles of the path go on working. Opening the path again returns a new handle. Closing twice does nothing.
    ///
    /// - Throws: ``LMDBError/busy`` when this is the last handle and the calling thread itself is inside a
    ///   transaction of the environment; the handle then stays open.
    ///
    /// The corresponding LMDB function is `mdb_env_close`.
    public func close() throws {
        guard !closed.load(ordering: .relaxed) else { return }
        do {
            try EnvironmentRegistry.close(core) {
                closed.store(true, ordering: .relaxed)
            }
        } catch {
            throw error.adding(operation: "close", path: path)
        }
    }

    /// Runs `body` with the environment admitted through the gate, so that it is neither closed nor remapped meanwhile.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` when this handle, or the environment, is closed, or what `body`
    ///   throws.
    func withOpenEnvironment<R>(_ operation: String, _ body: () throws -> R) throws -> R {
        do throws(LMDBError) {
            try enterGate()
        } catch {
            throw error.adding(operation: operation, path: path)
        }
        defer { gate.leave() }
        return try body()
    }

    /// Enters the gate for a transaction or an environment call of this handle.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` when this handle, or the environment, is closed.
    func enterGate() throws(LMDBError) {
        if closed.load(ordering: .relaxed) { throw LMDBError.environmentClosed }
        try gate.enter()
    }

    /// Enters the gate for a read transaction of this handle, and takes a reset read transaction the gate kept, if
    /// there is one (``TransactionGate/enter(takingIdleReader:)``).
    ///
    /// - Throws: ``LMDBError/environmentClosed`` when this handle, or the environment, is closed.
    func enterGateTakingIdleReader() throws(LMDBError) -> OpaquePointer? {
        if closed.load(ordering: .relaxed) { throw LMDBError.environmentClosed }
        return unsafe try gate.enter(takingIdleReader: true)
    }

    /// Flushes the data buffers to disk.
    ///
    /// Commits do this already unless the environment has ``Options/noSync`` or ``Options/mapAsync``; a read-only
    /// environment has nothing to flush.
    ///
    /// - Parameter force: Whether to flush synchronously even when the environment was opened with
    ///   ``Options/noSync`` (or asynchronously with ``Options/mapAsync``).
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``, or the ``LMDBError`` of a failed flush (such as
    ///   ``LMDBError/ioError``).
    ///
    /// The corresponding LMDB function is `mdb_env_sync`.
    public func sync(force: Bool = true) throws {
        guard !isReadOnly else { return }
        try withOpenEnvironment("mdb_env_sync") {
            try unsafe check(mdb_env_sync(handle, force ? 1 : 0), "mdb_env_sync", path: path)
        }
    }
}
