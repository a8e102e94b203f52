import Foundation

/// Where and how a ``ModelContainer`` keeps its store.
///
/// ```swift
/// let onDisk = ModelConfiguration(path: "/var/lib/app/store")
/// let forTests = ModelConfiguration(isStoredInMemoryOnly: true)
/// let inTheUsersDataDirectory = ModelConfiguration()  // ~/.local/share/<program>/default.store
/// ```
public struct ModelConfiguration: Sendable, Hashable {
    /// The store's directory, created if missing; `nil` for a store that lives only as long as its container.
    public var path: String? {
        didSet { unresolvedLocation = nil }
    }

    /// Why the default on-disk location could not be found, when it could not: opening the container then throws
    /// ``KVStoreError/storage`` with this message.
    var unresolvedLocation: String?

    /// How long each commit waits for the disk: what a crash of the machine (not of the process, which loses
    /// nothing at any level) can take back. The default is ``Durability/full``; see ``Durability`` for what each level
    /// promises.
    ///
    /// One store open in several containers of one process commits at the strongest level any of them asked for, so
    /// that none commits with less durability than its configuration says.
    public var durability: Durability

    /// Whether commits wait for the data to reach the disk: `true` for ``Durability/full``, `false` for
    /// ``Durability/off``.
    @available(*, deprecated, renamed: "durability", message: "Use durability, which also offers the normal level")
    public var isDurable: Bool {
        get { durability == .full }
        set { durability = newValue ? .full : .off }
    }

    /// The initial size of the memory map in bytes; it grows by itself.
    public var initialMapSize: Int

    /// The largest size the store may grow to, in bytes. The default, 64 TiB, costs nothing until the store grows
    /// (the map grows by doubling), and opens any store this machine's address space can map.
    public var maximumMapSize: Int

    /// Whether the container only reads: it opens the store without writing anything to it (no format stamp, no index
    /// build, no clean-up of abandoned streamed values), and every write throws ``KVStoreError/readOnly``.
    ///
    /// The store must exist, and already hold what the models declare: an entity or an index it lacks, or a
    /// migration it needs, is refused with ``KVStoreError/readOnly`` at open. LMDB still takes a reader slot in the
    /// store's lock file (and creates the lock file when there is none, as any reader does). The default is `false`.
    public var isReadOnly = false

    /// How long a write, or an open, waits for another process's migration of the store to end before it fails with
    /// ``KVStoreError/migrationInProgress``. The default is 30 seconds.
    ///
    /// A migration holds the store's migration lock for its whole duration, across its chunked transactions, and the
    /// kernel releases the lock if the migrating process dies; other writers never interleave with a half-migrated
    /// store.
    public var migrationWaitTimeout: Duration = .seconds(30)

    /// The memory, in bytes, that one transaction of a chunked insert (`ModelContext.insert(contentsOf:chunkSize:)`)
    /// or chunked update (`ModelContext.update(_:chunkSize:progress:_:)`) may hold in changed pages before it commits.
    /// The default is 16 MiB.
    ///
    /// LMDB keeps a copy of every page a write transaction changes in the process's heap until the commit. A chunk of
    /// 10,000 models in a store of millions changes a leaf per model in each of its tables (random keys), about 40 MB
    /// per table, where the same chunk in a small store changes a few pages; a budget of pages keeps an importer's
    /// memory flat as its store grows, where a fixed count of models does not. The pages are estimated from each
    /// table's statistics (LMDB does not count them), on the high side for keys written in order; a transaction holds
    /// at least ``ModelContext/chunkBudgetInterval`` models (or the whole chunk when it is smaller), and at most the
    /// chunk size. Structs end a transaction once the estimate passes the budget and go on with the rest of the chunk
    /// in the next; ``PersistentModel`` classes, whose save is one transaction, size each chunk from the pages the
    /// last one changed. A budget of 0 or less commits every ``ModelContext/chunkBudgetInterval`` models; `Int.max`
    /// commits by the chunk size alone.
    public var chunkMemoryBudget = 16 << 20

    /// The author that the store's change history records for this container's commits (`"importer"`, `"sync"`),
    /// unless a context or transaction names another (``ModelContext/author``); `nil` records none. It only matters
    /// once the store records history (``ModelContainer/enableHistory(retention:)``).
    public var historyAuthor: String?

    /// Whether models that conform to ``FieldCodable`` are written and read through it, as they are by default;
    /// `false` codes them through `Codable`, for comparing the two (kvbench's `--coding codable`).
    @_spi(Benchmarking) public var usesFieldCodable = true

    /// Whether a new store completes the index keys that LMDB's limit cuts with a hash that makes every long value of
    /// a prefix collide, so that tests reach the code that tells such values apart. Recorded in the store; for tests
    /// only.
    @_spi(Testing) public var collidesLongKeysForTesting = false

    /// A configuration for a store in the directory at `url`, a file URL.
    ///
    /// - Parameters:
    ///   - url: The store's directory, created if it does not exist.
    ///   - durability: How long each commit waits for the disk.
    public init(url: URL, durability: Durability = .full) {
        self.init(path: url.path, durability: durability)
    }

    /// A configuration for a store in the directory at `path`.
    ///
    /// - Parameters:
    ///   - path: The store's directory, created if it does not exist.
    ///   - durability: How long each commit waits for the disk.
    ///   - initialMapSize: The initial size of the memory map.
    ///   - maximumMapSize: The largest size the store may grow to.
    public init(
        path: String, durability: Durability = .full, initialMapSize: Int = 64 << 20, maximumMapSize: Int = 1 << 46
    ) {
        self.path = path
        self.durability = durability
        self.initialMapSize = initialMapSize
        self.maximumMapSize = maximumMapSize
    }

    /// A configuration for a store in the directory at `url`, whose commits wait for the disk when `isDurable`.
    ///
    /// - Parameters:
    ///   - url: The store's directory, created if it does not exist.
    ///   - isDurable: `true` for ``Durability/full``, `false` for ``Durability/off``.
    @available(*, deprecated, renamed: "init(url:durability:)", message: "Use durability: .full or .off")
    public init(url: URL, isDurable: Bool) {
        self.init(path: url.path, durability: isDurable ? .full : .off)
    }

    /// A configuration for a store in the directory at `path`, whose commits wait for the disk when `isDurable`.
    ///
    /// - Parameters:
    ///   - path: The store's directory, created if it does not exist.
    ///   - isDurable: `true` for ``Durability/full``, `false` for ``Durability/off``.
    ///   - initialMapSize: The initial size of the memory map.
    ///   - maximumMapSize: The largest size the store may grow to.
    @available(
        *, deprecated, renamed: "init(path:durability:initialMapSize:maximumMapSize:)",
        message: "Use durability: .full or .off"
    )
    public init(path: String, isDurable: Bool, initialMapSize: Int = 64 << 20, maximumMapSize: Int = 1 << 46) {
        self.init(
            path: path, durability: isDurable ? .full : .off, initialMapSize: initialMapSize,
            maximumMapSize: maximumMapSize)
    }

    /// A configuration for a store in memory, or in the default on-disk location.
    ///
    /// An in-memory store is a real LMDB store in a private temporary directory, removed when the container closes,
    /// so tests see exactly the behaviour of production. Its durability is ``Durability/off``, since nothing of it
    /// outlives the process.
    ///
    /// The default on-disk location follows the XDG base directory specification, never the working directory:
    /// `$XDG_DATA_HOME/<program>/<name>.store`, or `$HOME/.local/share/<program>/<name>.store` when
    /// `XDG_DATA_HOME` is not set (or not an absolute path), `<program>` being the process's name. With neither set,
    /// opening a container throws ``KVStoreError/storage`` saying so.
    ///
    /// - Parameters:
    ///   - name: The store's name in the default location; `default` when `nil`. Ignored in memory.
    ///   - isStoredInMemoryOnly: `true` for an in-memory store; `false` for a store in the default location.
    public init(_ name: String? = nil, isStoredInMemoryOnly: Bool = false) {
        self.durability = isStoredInMemoryOnly ? .off : .full
        self.initialMapSize = isStoredInMemoryOnly ? 4 << 20 : 64 << 20
        self.maximumMapSize = 1 << 46
        self.path = nil
        if !isStoredInMemoryOnly {
            switch Self.defaultLocation(
                named: name ?? "default", environment: ProcessInfo.processInfo.environment,
                program: ProcessInfo.processInfo.processName)
            {
            case .success(let path): self.path = path
            case .failure(let problem): unresolvedLocation = problem.message
            }
        }
    }

    /// Whether the store lives only as long as its container.
    public var isStoredInMemoryOnly: Bool {
        path == nil && unresolvedLocation == nil
    }

    /// Why a default location cannot be found.
    struct LocationProblem: Error {
        var message: String
    }

    /// The default on-disk location of the store `name` of `program`, in `environment`'s `XDG_DATA_HOME` or `HOME`.
    static func defaultLocation(
        named name: String, environment: [String: String], program: String
    ) -> Result<String, LocationProblem> {
        let program = program.isEmpty ? "kvstore" : program.replacingOccurrences(of: "/", with: "_")
        let store = program + "/" + name.replacingOccurrences(of: "/", with: "_") + ".store"
        // The specification: a relative XDG_DATA_HOME is invalid and is ignored.
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return .success(data + "/" + store)
        }
        if let home = environment["HOME"], !home.isEmpty {
            return .success(home + "/.local/share/" + store)
        }
        return .failure(
            LocationProblem(
                message: "The store \(name) has no default location: neither XDG_DATA_HOME nor HOME is set. Set one, "
                    + "or give the store a place with ModelConfiguration(path:) or ModelConfiguration(url:)"))
    }
}
