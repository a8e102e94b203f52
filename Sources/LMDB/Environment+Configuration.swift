import CLMDB

extension Environment {
    /// Flags that change how an environment is opened and how it writes.
    ///
    /// Every environment is also opened with `MDB_NOTLS`, so a read transaction is not tied to the thread that began
    /// it; that flag is not an option.
    public struct Options: OptionSet, Hashable, Sendable {
        /// The raw `MDB_*` flags.
        public let rawValue: UInt32

        /// Creates options from raw `MDB_*` environment flags.
        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// The path names a single data file rather than a directory; the lock file is the path plus `-lock`
        /// (`MDB_NOSUBDIR`).
        public static let noSubdirectory = Options(rawValue: UInt32(MDB_NOSUBDIR))
        /// Opens the environment for reading only: write transactions fail with ``LMDBError/accessDenied``
        /// (`MDB_RDONLY`).
        public static let readOnly = Options(rawValue: UInt32(MDB_RDONLY))
        /// Does not flush system buffers to disk when committing. A crash of the system (not of the process) may
        /// lose or damage the last transactions (`MDB_NOSYNC`).
        public static let noSync = Options(rawValue: UInt32(MDB_NOSYNC))
        /// Flushes system buffers on commit but omits the metadata flush, which the next commit's flush (or
        /// ``Environment/sync(force:)``) makes: a crash of the system may undo the last transaction, never damage the
        /// environment (`MDB_NOMETASYNC`).
        public static let noMetaSync = Options(rawValue: UInt32(MDB_NOMETASYNC))
        /// Uses asynchronous flushes when ``writeMap`` is set (`MDB_MAPASYNC`).
        public static let mapAsync = Options(rawValue: UInt32(MDB_MAPASYNC))
        /// Writes through a writable memory map instead of `write` calls. Faster, but stray writes through pointers
        /// can corrupt the file, and child transactions are unavailable (`MDB_WRITEMAP`).
        public static let writeMap = Options(rawValue: UInt32(MDB_WRITEMAP))
        /// Turns off the operating system's read-ahead, which helps random reads on stores larger than memory
        /// (`MDB_NORDAHEAD`).
        public static let noReadAhead = Options(rawValue: UInt32(MDB_NORDAHEAD))
        /// Uses no lock file: LMDB neither creates nor opens one, and keeps no reader table (`MDB_NOLOCK`).
        ///
        /// Nothing then tells other processes about this one's transactions: a writer elsewhere may reuse the pages
        /// a read transaction here still reads. It is safe only when no other process writes the environment
        /// meanwhile, such as for reading a copy, or a store whose programs are stopped, without leaving a lock file.
        public static let noLock = Options(rawValue: UInt32(MDB_NOLOCK))
        /// Does not zero memory before writing it to disk (`MDB_NOMEMINIT`).
        public static let noMemInit = Options(rawValue: UInt32(MDB_NOMEMINIT))

        /// The options that say how much a commit waits for the disk.
        static let syncing: Options = [.noSync, .noMetaSync]

        /// How much a commit waits for the disk under these options: 2 when it flushes its data and the metadata, 1
        /// when it flushes only its data (``noMetaSync``), 0 when it flushes nothing (``noSync``, which overrides
        /// ``noMetaSync``).
        var syncStrength: Int {
            contains(.noSync) ? 0 : contains(.noMetaSync) ? 1 : 2
        }
    }

    /// The settings an environment is opened with.
    ///
    /// ```swift
    /// var configuration = Environment.Configuration()
    /// configuration.mapSize = 64 << 20
    /// configuration.maxTables = 32
    /// let environment = try Environment.open(path: "/var/lib/app/store", configuration: configuration)
    /// ```
    public struct Configuration: Hashable, Sendable {
        /// The initial size of the memory map in bytes, rounded up to a multiple of the page size. The map grows by
        /// doubling when a write transaction fills it, up to ``maxMapSize``. The default is 16 MiB.
        public var mapSize: Int = 16 << 20

        /// The largest size the map may grow to, in bytes. A write transaction that would need more fails with
        /// ``LMDBError/mapFull``. Set it equal to ``mapSize`` to turn growth off. The default is 64 TiB, which costs
        /// address space only: the file grows with the data.
        public var maxMapSize: Int = 1 << 46

        /// The number of named tables the environment can hold. The default is 128.
        public var maxTables: Int = 128

        /// The number of reader slots, that is of read transactions alive at once across all processes. The default
        /// is 126, LMDB's own.
        public var maxReaders: Int = 126

        /// The permissions of files the environment creates. The default is `0o600`: owner only.
        public var fileMode: UInt32 = 0o600

        /// Flags for the environment.
        public var options: Options = []

        /// Creates a configuration.
        public init(
            mapSize: Int = 16 << 20,
            maxMapSize: Int = 1 << 46,
            maxTables: Int = 128,
            maxReaders: Int = 126,
            fileMode: UInt32 = 0o600,
            options: Options = []
        ) {
            self.mapSize = mapSize
            self.maxMapSize = maxMapSize
            self.maxTables = maxTables
            self.maxReaders = maxReaders
            self.fileMode = fileMode
            self.options = options
        }
    }
}
