import Foundation
import LMDB

/// A store of models: the LMDB environment, its catalog, and the tables of each entity.
///
/// ```swift
/// let container = try ModelContainer(
///     for: Project.self, Task.self,
///     configuration: ModelConfiguration(path: "/var/lib/app/store"))
/// let context = ModelContext(container)
/// ```
///
/// Opening checks the models against the store's catalog: new entities, new optional fields, removed fields and new
/// indexes (built on open) need nothing; a model that no longer reads the stored records throws
/// ``KVStoreError/incompatibleSchema`` naming the entity and field, and a store written by a newer format throws
/// ``KVStoreError/newerFormat``. Changes that need more (renames, new non-optional fields, transforms) are made by a
/// ``SchemaMigrationPlan`` given to ``init(for:migrationPlan:configuration:observer:migrationProgress:)``; a store
/// part-way through a migration opens only with its plan. Opening also clears the reader slots left by processes that died inside a read
/// transaction.
///
/// A container is `Sendable`: share one per store across the program, and give each unit of work its own
/// ``ModelContext``, or use `read(_:)` and `write(_:)` for explicit transactions.
public final class ModelContainer: Sendable {
    /// Where and how the store is kept.
    public let configuration: ModelConfiguration

    /// The directory of the store: the configured path, or the private temporary directory of an in-memory store.
    public let path: String

    package let environment: Environment
    package let catalogTable: Table
    private let stores: [ObjectIdentifier: any DeclaredEntityStore]
    /// The keys of `stores` and their stores, in the same order: a container has a few entities, and finding a
    /// type's identifier among them costs less than hashing it for every insert and fetch.
    private let storeTypes: [ObjectIdentifier]
    private let storeList: [any DeclaredEntityStore]
    let storesByName: [String: any AnyEntityStore]
    /// The entities the models declare.
    var declaredStores: [any DeclaredEntityStore] { storeList }
    /// What the container knows of the store's schema: see ``SchemaFollowing``; change it with ``updateSchema(_:)``.
    let schema: Locked<SchemaFollowing>
    /// The fast-path copies of parts of ``schema``.
    let schemaClock: SchemaClock
    /// A descriptor of the data file, to test the store's locks (a migration under way in another process).
    let lockProbe: StoreLockProbe
    /// How the store completes index keys that LMDB's key limit cuts, from its catalog's format entry.
    package let longKeyHash: LongKeyHash
    /// Whether every external chunk has a checksum: false only for a store of the previous format opened read-only.
    let hasChecksums: Bool
    /// The catalog's `replica` entry when the store is a replica: only its replication writes it, and this container
    /// reads it as if opened read-only.
    let replica: ReplicaCatalog?

    /// The hooks for logging and metrics, if any.
    public let observer: (any ModelContainerObserver)?
    let publisher = ChangePublisher()
    /// The random number this container's history entries carry, so that its observers tell its own commits from
    /// those of other containers and processes.
    let historyOrigin = UInt64.random(in: 1...UInt64.max)
    /// Held by each write from its begin to the hand-off of its changes, so subscribers see commits in order; it
    /// counts the commits of this container.
    let writeOrder = Locked<Int>(0)
    /// The serial queue async writes run on, off the cooperative thread pool.
    let writerQueue = DispatchQueue(label: "KVStore.ModelContainer.writer")
    /// The context of the main actor, once `mainContext` (a higher layer's) made it; ``close()`` drops it. `Locked` is
    /// `Sendable` whatever it holds: the context is made and used only on the main actor, and `close()` only lets it
    /// go, which runs no code of the context but its deinitializer.
    let mainContextSlot = Locked<AnyObject?>(nil)

    /// Whether anything watches the container's commits.
    var isObserved: Bool {
        observer != nil || publisher.hasSubscribers
    }

    /// Opens (or creates) the store for the given model types and those their relationships reach.
    ///
    /// - Parameters:
    ///   - types: The model types the program uses; the types their entities' relationships name, directly or
    ///     through others, are added, so `ModelContainer(for: Project.self)` holds the tasks its relationships name.
    ///   - configuration: Where and how to keep the store.
    ///   - observer: Hooks for logging and metrics.
    /// - Throws: ``KVStoreError/incompatibleSchema``, ``KVStoreError/newerFormat``, ``KVStoreError/invalidModel`` for
    ///   an invalid entity description, or ``KVStoreError/storage`` when the store cannot be opened.
    public convenience init(
        for types: any StoredModel.Type...,
        configuration: ModelConfiguration = ModelConfiguration(),
        observer: (any ModelContainerObserver)? = nil
    ) throws {
        try self.init(for: types, configuration: configuration, observer: observer)
    }

    /// Opens (or creates) the store for the given model types and those their relationships reach.
    ///
    /// - Parameters:
    ///   - types: The model types the program uses, with the types their relationships reach added.
    ///   - configuration: Where and how to keep the store.
    ///   - observer: Hooks for logging and metrics.
    /// - Throws: The errors of the variadic initializer.
    public convenience init(
        for types: [any StoredModel.Type],
        configuration: ModelConfiguration = ModelConfiguration(),
        observer: (any ModelContainerObserver)? = nil
    ) throws {
        try self.init(
            for: types, configuration: configuration, observer: observer, preparation: UnversionedOpening())
    }

    /// Opens (or creates) the store for the given model types and those their relationships reach: SwiftData's
    /// spelling, `ModelContainer(for: Project.self, configurations: configuration)`.
    ///
    /// A container keeps one store, so it takes one configuration; open a container for each store a program keeps.
    ///
    /// - Parameters:
    ///   - types: The model types the program uses, with the types their relationships reach added.
    ///   - configuration: Where and how to keep the store.
    /// - Throws: The errors of the variadic `init(for:configuration:observer:)`.
    public convenience init(
        for types: any StoredModel.Type..., configurations configuration: ModelConfiguration
    ) throws {
        try self.init(for: types, configuration: configuration, observer: nil)
    }

    /// Opens (or creates) the store for the given model types, after `preparation` brought it to the schema version
    /// the opener asks for.
    init(
        for types: [any StoredModel.Type],
        configuration: ModelConfiguration,
        observer: (any ModelContainerObserver)?,
        preparation: any SchemaPreparation
    ) throws {
        let types = Self.withRelatedTypes(types)
        self.configuration = configuration
        self.observer = observer
        let path = try Self.directory(for: configuration)
        self.path = path
        do {
            var options = configuration.durability.environmentOptions
            if configuration.isReadOnly { options.insert(.readOnly) }
            environment = try Environment.open(
                path: path,
                configuration: Environment.Configuration(
                    mapSize: configuration.initialMapSize,
                    maxMapSize: max(configuration.maximumMapSize, configuration.initialMapSize),
                    maxTables: Self.tableSlots(for: types + preparation.models), options: options))
            // lmdb.h: "Stale reader transactions left behind by an aborted program cause further writes to grow the
            // database quickly [...] Fix: Check for stale readers periodically, using the mdb_reader_check
            // function". The lock file is reset only when no process has the store open, so a reader killed while
            // another process keeps it open would otherwise pin its snapshot until someone clears it by hand.
            try environment.clearStaleReaders()
            try Self.checkPages(environment)
            catalogTable = try Self.openCatalog(environment)
            lockProbe = try StoreLockProbe(directory: path)
            let catalog = catalogTable
            let replica = try environment.read { txn in try ReplicaCatalog.read(in: txn, table: catalog) }
            self.replica = replica
            // A replica opens as if read-only: its replication alone writes it.
            let isReadOnly = configuration.isReadOnly || replica != nil
            // Schema work (a migration, index builds) runs under the store's migration lock, so that two processes
            // opening at once never build one index twice, and writers elsewhere wait for a migration to end. A
            // read-only open does no such work.
            let schemaLock =
                isReadOnly
                ? nil : try Self.takeSchemaLock(in: environment, configuration: configuration, catalog: catalogTable)
            let format = try Self.checkFormat(
                environment: environment, catalog: catalogTable, configuration: configuration, isReadOnly: isReadOnly)
            let longKeyHash = format.longKeyHash ?? .standard
            self.longKeyHash = longKeyHash
            let hasChecksums = format.formatVersion >= 2
            self.hasChecksums = hasChecksums
            let migrated = try preparation.prepare(
                environment: environment, catalog: catalogTable, isReadOnly: isReadOnly)
            var stores: [ObjectIdentifier: any DeclaredEntityStore] = [:]
            var names: Set<String> = []
            for type in types {
                var loader = SchemaLoader(environment: environment, catalog: catalogTable, longKeyHash: longKeyHash)
                loader.usesFieldCodable = configuration.usesFieldCodable
                loader.appliesSchemaChanges = migrated
                loader.isReadOnly = isReadOnly
                loader.hasChecksums = hasChecksums
                let store = try loader.open(declared: type)
                guard names.insert(store.name).inserted else {
                    throw KVStoreError(
                        .invalidModel, entity: store.name,
                        message: "Two model types use the entity name \(store.name); give one another name")
                }
                stores[ObjectIdentifier(type)] = store
            }
            self.stores = stores
            self.storeTypes = Array(stores.keys)
            self.storeList = Array(stores.values)
            let storesByName = Dictionary(
                uniqueKeysWithValues: stores.values.map { ($0.name, $0 as any AnyEntityStore) })
            self.storesByName = storesByName
            let (generation, transaction, state, entries, history) = try environment.read { txn in
                (
                    try Catalog.generation(in: txn, table: catalog), txn.id,
                    try Catalog.schemaState(in: txn, table: catalog),
                    try Catalog.entities(in: txn, table: catalog).entities,
                    try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalog)
                )
            }
            let opened = environment
            let historyState = try history.map { catalog in
                HistoryState(catalog: catalog, table: try Self.openHistoryTable(opened))
            }
            // Writers in other processes may have interned field names since the stores read the catalog: the
            // stores take this snapshot's tables, which the schema following below starts from.
            for store in stores.values {
                if let entry = entries.first(where: { $0.name == store.name }) {
                    store.refreshFields(from: entry.fields, isWriting: false)
                }
            }
            let catalogStores = try Self.catalogStores(
                entries, declared: storesByName, environment: environment, longKeyHash: longKeyHash,
                hasChecksums: hasChecksums)
            try Self.validateRelationships(
                Dictionary(uniqueKeysWithValues: stores.values.map { ($0.name, $0) }), catalogStores: catalogStores)
            schemaClock = SchemaClock(verified: transaction)
            schema = Locked(
                SchemaFollowing(
                    writeGeneration: generation, writeVerified: transaction, readGeneration: generation,
                    readVerified: transaction, openedHistory: state.history.count, openedVersion: state.version,
                    stale: replica?.refusal(path: path, action: "a write through a container of the replica"),
                    catalogStores: catalogStores, history: historyState))
            if replica != nil { schemaClock.staleness.store(1, ordering: .relaxed) }
            withExtendedLifetime(schemaLock) {}
        } catch {
            if configuration.isStoredInMemoryOnly { try? FileManager.default.removeItem(atPath: path) }
            throw Self.mapped(error)
        }
        observer?.containerDidOpen(self)
    }

    deinit {
        if configuration.isStoredInMemoryOnly {
            try? environment.close()
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Closes the container. Later use of it or of its contexts throws ``KVStoreError/closed``; an in-memory store is
    /// deleted, and the main context's pending changes are let go. Other containers of the same store in the process
    /// keep working: they share its LMDB environment, which closes with the last of them.
    ///
    /// - Throws: ``KVStoreError/storage`` when this is the store's last container in the process and the call is
    ///   made inside one of its transactions.
    public func close() throws {
        do {
            try environment.close()
        } catch {
            throw Self.mapped(error)
        }
        publisher.finishAll()
        // The main context holds the container: letting it go here ends that cycle.
        mainContextSlot.withLock { $0 = nil }
        if configuration.isStoredInMemoryOnly { try? FileManager.default.removeItem(atPath: path) }
        observer?.containerDidClose(self)
    }

    /// How long the store's commits in this process wait for the disk: the configuration's
    /// ``ModelConfiguration/durability``, or a stronger level that another container of the same store in this
    /// process asked for (one store commits at the strongest level any of its open containers asked for).
    public var durability: Durability {
        Durability(environmentOptions: environment.syncOptions)
    }

    /// Flushes the store's commits to disk, with the metadata that makes the last one current: once it returns, an
    /// OS crash or a power cut takes back none of them, whatever the ``durability``. A program that loads in bulk at
    /// ``Durability/off`` calls it at the end; at ``Durability/full`` every commit is on disk already.
    ///
    /// A read-only container has nothing to flush and returns at once.
    ///
    /// - Throws: ``KVStoreError/closed`` after ``close()``; ``KVStoreError/storage`` when the system fails to
    ///   flush (an I/O error of the disk), naming the store; the commits are then in the system's buffers, not known
    ///   to be on disk.
    public func sync() throws {
        do {
            try environment.sync(force: true)
        } catch let error as LMDBError where error.code != LMDBError.environmentClosed.code {
            throw KVStoreError(
                .storage,
                message: "Flushing the store at \(path) to disk failed: its commits are in the system's buffers but "
                    + "not known to be on disk, and an OS crash or power cut may lose them. Check the system's log "
                    + "and the disk, then call sync() again", cause: error)
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The number of table slots to reserve in the environment for `types`.
    ///
    /// Each entity needs one table for its records, one per index and three for external values (chunks, their
    /// checksums and staging)
    /// when it declares any, and the store one for its catalog; tables of entities and indexes other programs added
    /// come from the headroom, and a later container of the store in this process that needs more gets them (the
    /// environment reopens with more slots). LMDB allocates and clears a slot array of this size when each read
    /// transaction begins, so it is kept small instead of set to a generous constant: a read transaction costs about
    /// 0.25 ns more per slot (294 ns with 128, 546 ns with 1,024, measured with the C API). Fewer than 128 gains
    /// nothing measurable.
    static func tableSlots(for types: [any StoredModel.Type]) -> Int {
        func tables<M: StoredModel>(_ type: M.Type) -> Int {
            1 + M.entity.indexes.count + (M.entity.externalStorage.isEmpty ? 0 : 3)
        }
        let needed = types.reduce(1) { $0 + tables($1) }
        return max(128, 2 * needed)
    }

    /// The entity names of the container's model types.
    public var entityNames: [String] {
        stores.values.map(\.name).sorted()
    }

    /// The store of an entity, or ``KVStoreError/unknownEntity``.
    func store<M: StoredModel>(for type: M.Type) throws -> EntityStore<M> {
        // The store under a type's identifier was made for that type, so the unchecked cast holds; a checked one
        // would ask the runtime for `EntityStore<M>`'s metadata on every insert and fetch.
        let id = ObjectIdentifier(type)
        if storeTypes.count <= 16 {
            if let position = storeTypes.firstIndex(of: id) {
                return knownTypeDowncast(storeList[position], to: EntityStore<M>.self)
            }
        } else if let store = stores[id] {
            return knownTypeDowncast(store, to: EntityStore<M>.self)
        }
        throw KVStoreError(
            .unknownEntity, entity: String(describing: type),
            message: "\(type) is not part of this container; pass it to ModelContainer(for:)")
    }

    // MARK: - Opening

    private static func directory(for configuration: ModelConfiguration) throws -> String {
        let manager = FileManager.default
        if let problem = configuration.unresolvedLocation { throw KVStoreError(.storage, message: problem) }
        guard let path = configuration.path else {
            let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath()
            let directory = base.appendingPathComponent("kvstore-memory-\(UUID().uuidString)").path
            do {
                try manager.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw KVStoreError(
                    .storage, message: "Cannot create the in-memory store's directory \(directory)", cause: error)
            }
            return directory
        }
        if let isDirectory = FileSystemQueries.isDirectory(path) {
            guard isDirectory else {
                throw KVStoreError(.storage, message: "\(path) is a file; a store is a directory")
            }
            return path
        }
        if configuration.isReadOnly {
            throw KVStoreError(
                .readOnly, message: "There is no store at \(path) to open read-only; nothing was created")
        }
        do {
            try manager.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KVStoreError(.storage, message: "Cannot create the store's directory \(path)", cause: error)
        }
        return path
    }

    /// Reads the meta pages, the main table and the root page of every table with the binding's bounds-checked page
    /// parser before LMDB reads them: LMDB 0.9 trusts its pages, and a damaged root would crash the process.
    ///
    /// - Throws: ``KVStoreError/damaged`` naming the damaged pages and their tables.
    private static func checkPages(_ environment: Environment) throws {
        let report = try environment.checkPages(scope: .roots, maxProblems: 20)
        guard !report.isClean else { return }
        // A wrong map size in a meta page is harmless: LMDB maps what the data needs, and the next commit rewrites it.
        let damage = report.problems.filter { $0.severity == .damage && $0.kind != .mapSize }
        guard !damage.isEmpty else { return }
        let shown = damage.prefix(3).map(\.description).joined(separator: "; ")
        let more = damage.count > 3 ? " and \(damage.count - 3) more" : ""
        throw KVStoreError(
            .damaged,
            message: "The store at \(environment.path) is damaged: \(shown)\(more). Nothing was read or changed; run "
                + "'kvtool check \(environment.path)' to see all of it, and restore the store from a backup")
    }

    /// Opens the catalog table, creating it only in a new store: one whose file holds no table yet.
    ///
    /// - Throws: ``KVStoreError/storage`` for an LMDB environment of something else (naming its tables),
    ///   ``KVStoreError/damaged`` for a store whose catalog is missing while its other tables are there.
    private static func openCatalog(_ environment: Environment) throws -> Table {
        if let catalog = try environment.tableIfPresent(named: Catalog.tableName) { return catalog }
        if environment.isReadOnly {
            throw KVStoreError(
                .readOnly,
                message: "\(environment.path) holds no KVStore store (its data file has no catalog), and a read-only "
                    + "open creates none")
        }
        let main = try environment.openTable(named: nil)
        let tables = try environment.read { txn in
            try txn.entries(in: main, limit: 20).map { String(decoding: $0.key, as: UTF8.self) }
        }
        guard tables.isEmpty else {
            let listed = tables.prefix(5).map { "'\($0)'" }.joined(separator: ", ")
            let isKVStore = tables.contains { $0.hasPrefix("records/") || $0.hasPrefix("index/") }
            if isKVStore {
                throw KVStoreError(
                    .damaged,
                    message:
                        "The store at \(environment.path) is damaged: it has KVStore tables (\(listed)) but no "
                        + "catalog table. Nothing was changed; run 'kvtool check \(environment.path)' and restore "
                        + "the store from a backup")
            }
            throw KVStoreError(
                .storage,
                message: "\(environment.path) holds an LMDB environment that is not a KVStore store: it has the "
                    + "tables \(listed)\(tables.count > 5 ? " and more" : "") and no catalog. Nothing was changed; "
                    + "open a KVStore store, or an empty directory for a new one")
        }
        return try environment.openTable(named: Catalog.tableName, create: true)
    }

    /// Takes the store's migration lock for the schema work of an open, waiting while another process holds it (it
    /// migrates the store, or builds an index) up to the configuration's ``ModelConfiguration/migrationWaitTimeout``.
    ///
    /// - Throws: ``KVStoreError/migrationInProgress`` after the timeout.
    private static func takeSchemaLock(
        in environment: Environment, configuration: ModelConfiguration, catalog: Table
    ) throws -> HeldStoreLock {
        let path = environment.path
        let deadline = ContinuousClock.now + configuration.migrationWaitTimeout
        while true {
            if let held = try StoreLock.migration.tryAcquire(in: path) { return held }
            guard ContinuousClock.now < deadline else {
                let migration = try environment.read { txn in try Catalog.schemaState(in: txn, table: catalog).migration
                }
                let work =
                    migration.map { "migrating it from schema version \($0.from) to \($0.to)" }
                    ?? "changing its schema (building an index)"
                throw KVStoreError(
                    .migrationInProgress,
                    message: "Another process is \(work) in the store at \(path); this open waited "
                        + "\(configuration.migrationWaitTimeout) for it to end (ModelConfiguration.migrationWaitTimeout)"
                )
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Checks the store's format, upgrades a store of the previous one, or stamps a new store's.
    ///
    /// - Returns: The store's format entry as it is now.
    /// - Throws: ``KVStoreError/newerFormat`` for a store of a newer format.
    private static func checkFormat(
        environment: Environment, catalog: Table, configuration: ModelConfiguration, isReadOnly: Bool
    ) throws -> StoreFormat {
        let stored = try environment.read { txn in
            try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: catalog)
        }
        if let stored {
            guard stored.formatVersion <= Catalog.formatVersion else {
                throw KVStoreError(
                    .newerFormat,
                    message: "The store at \(environment.path) was written by KVStore format \(stored.formatVersion); "
                        + "this version reads format \(Catalog.formatVersion) and older. Upgrade KVStore to open it")
            }
            // A read-only open reads a store of the previous format as it is: its records read without checksums.
            if isReadOnly { return stored }
            return try FormatUpgrade(environment: environment, catalog: catalog).run(from: stored)
        }
        if isReadOnly {
            throw KVStoreError(
                .readOnly,
                message: "The store at \(environment.path) has no format entry yet, and a read-only open "
                    + "writes none")
        }
        let format = StoreFormat(
            formatVersion: Catalog.newStoreFormatVersion, created: Date(),
            longKeyHash: configuration.collidesLongKeysForTesting ? .collidingForTests : nil)
        try environment.write { txn in
            try Catalog.write(format, key: Catalog.formatKey, in: txn, table: catalog)
        }
        return format
    }

    /// Checks that every declared relationship's target is in the container or in the store, and that declared
    /// inverses fit together.
    private static func validateRelationships(
        _ stores: [String: any DeclaredEntityStore], catalogStores: [String: CatalogEntityStore]
    ) throws {
        func refuse(_ entity: String, _ relationship: String, _ message: String) -> KVStoreError {
            KVStoreError(.invalidRelationship, entity: entity, field: relationship, message: message)
        }
        for store in stores.values {
            for relationship in store.relationships {
                let side = "\(store.name).\(relationship.name)"
                guard let target: any AnyEntityStore = stores[relationship.target] ?? catalogStores[relationship.target]
                else {
                    throw refuse(
                        store.name, relationship.name,
                        "\(side) targets \(relationship.target), which is neither part of this container nor of the "
                            + "store")
                }
                if let inverseField = relationship.inverseField {
                    let stored = target.allRelationships.first {
                        $0.field == inverseField && $0.target == store.name
                    }
                    guard stored != nil else {
                        throw refuse(
                            store.name, relationship.name,
                            "\(side) is derived from \(target.name).\(inverseField), but \(target.name) declares no "
                                + "relationship to \(store.name) stored in \(inverseField)")
                    }
                }
                guard let inverseName = relationship.inverse else { continue }
                guard let inverse = target.relationship(named: inverseName), inverse.target == store.name else {
                    throw refuse(
                        store.name, relationship.name,
                        "\(side) names \(target.name).\(inverseName) as its inverse, but \(target.name) has no "
                            + "relationship \(inverseName) to \(store.name)")
                }
                let fits =
                    (relationship.field != nil && inverse.inverseField == relationship.field)
                    || (relationship.inverseField != nil && inverse.field == relationship.inverseField)
                guard fits else {
                    throw refuse(
                        store.name, relationship.name,
                        "\(side) and its inverse \(target.name).\(inverseName) do not match: exactly one side stores "
                            + "the IDs in a field, and the other derives from that field")
                }
            }
        }
    }

}
