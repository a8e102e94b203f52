import Foundation
import LMDB
import Synchronization

/// What a container knows of its store's schema, and up to which transaction it checked it.
///
/// The catalog carries a generation that every change to it advances (``Catalog/generationKey``). A transaction
/// whose snapshot no other writer touched since the container last checked needs no catalog read at all; any other
/// reads the 8-byte generation, and only a changed generation makes the container read the catalog again: before a
/// write (outside the transaction, since tables are opened then), the whole schema; before a read, the field tables.
struct SchemaFollowing: Sendable {
    /// The generation the write side was loaded at: the derived indexes, the catalog's relationships and the
    /// entities the program does not declare.
    var writeGeneration: UInt64
    /// The last committed transaction known to leave the catalog at ``writeGeneration``.
    var writeVerified: Int
    /// The generation the read side (the field tables) was brought to.
    var readGeneration: UInt64
    /// The latest snapshot known to have ``readGeneration``.
    var readVerified: Int
    /// How many migration stages the store had applied when the container opened, and its version then.
    let openedHistory: Int
    let openedVersion: SchemaVersion?
    /// Set once the store moved past the container's models: every later write throws it.
    var stale: KVStoreError?
    /// Whether reads throw ``stale`` too: when an index or entity the models declare was removed, a read through it
    /// would give wrong answers; after a migration, reads go on, and records that no longer decode throw.
    var staleForReads = false
    /// The migration the latest catalog read saw under way.
    var migration: MigrationState?
    /// The store's entities the program does not declare, for delete rules that reach them.
    var catalogStores: [String: CatalogEntityStore]
    /// The store's change history, while it records one: what the catalog says, and the table.
    var history: HistoryState?
}

/// A store's change history as a container follows it: the catalog's entry and the opened table.
struct HistoryState: Sendable {
    var catalog: HistoryCatalog
    var table: HistoryTable
}

/// The parts of ``SchemaFollowing`` every transaction reads, as atomics, so that the common case takes no lock: the
/// last transactions known to leave the catalog as the container knows it, and whether the container is stale.
final class SchemaClock: Sendable {
    let readVerified: Atomic<Int>
    let writeVerified: Atomic<Int>
    /// 0 while the models fit the store, 1 once writes are refused, 2 once reads are too.
    let staleness = Atomic<Int>(0)

    init(verified: Int) {
        readVerified = Atomic(verified)
        writeVerified = Atomic(verified)
    }
}

/// Thrown inside a write transaction whose snapshot has a schema generation the container has not loaded; the write
/// is retried after ``ModelContainer/reloadSchema(waitingUntil:)``.
struct SchemaReloadNeeded: Error {}

extension ModelContainer {
    /// Prepares the entities for a write transaction (each attempt of one), and checks that the container follows
    /// the catalog the transaction sees.
    ///
    /// - Throws: ``SchemaReloadNeeded`` when another process or container changed the schema since; the stale error
    ///   once the store moved past the models.
    func beginWrite(_ txn: borrowing Transaction) throws {
        for store in declaredStores { store.didBeginWrite() }
        // A write transaction's ID is the last committed one's plus one: when this container committed that one,
        // or checked it, the catalog is as it knows it. The check reads atomics, not the lock.
        let last = txn.id - 1
        if schemaClock.staleness.load(ordering: .relaxed) == 0,
            last == schemaClock.writeVerified.load(ordering: .relaxed)
        {
            return
        }
        let (generation, stale) = schema.withLock { ($0.writeGeneration, $0.stale) }
        if let stale { throw stale }
        guard try Catalog.generation(in: txn, table: catalogTable) == generation else { throw SchemaReloadNeeded() }
        updateSchema { $0.writeVerified = max($0.writeVerified, last) }
    }

    /// Changes what the container knows of the schema, and publishes the fast-path copies.
    func updateSchema(_ change: (inout SchemaFollowing) -> Void) {
        schema.withLock { following in
            change(&following)
            schemaClock.readVerified.store(following.readVerified, ordering: .relaxed)
            schemaClock.writeVerified.store(following.writeVerified, ordering: .relaxed)
            schemaClock.staleness.store(
                following.stale == nil ? 0 : following.staleForReads ? 2 : 1, ordering: .relaxed)
        }
    }

    /// Records a commit of this container: the catalog is at `generation` after `transaction`.
    func didCommit(transaction: Int, generation: UInt64?) {
        for store in declaredStores { store.didCommit(transaction: transaction) }
        updateSchema { state in
            if let generation { state.writeGeneration = generation }
            state.writeVerified = transaction
            // The field tables are the writer's: the read side is as current as the write side.
            if state.readVerified < transaction {
                state.readGeneration = state.writeGeneration
                state.readVerified = transaction
            }
        }
    }

    /// Brings the field tables in line with the catalog of a read transaction's snapshot, when another process, or
    /// another container of the store, interned names that this one has not read; notes a migration under way or
    /// applied since the container opened.
    ///
    /// Without it, records written there do not decode here.
    func followCatalog(inRead txn: borrowing Transaction) throws {
        // The fast path reads atomics, not the lock: a snapshot the container committed or checked.
        let staleness = schemaClock.staleness.load(ordering: .relaxed)
        if staleness != 2, txn.id <= schemaClock.readVerified.load(ordering: .relaxed) { return }
        let (known, staleForReads, stale) = schema.withLock { ($0.readGeneration, $0.staleForReads, $0.stale) }
        if staleForReads, let stale { throw stale }
        let generation = try Catalog.generation(in: txn, table: catalogTable)
        if generation == known {
            updateSchema { $0.readVerified = max($0.readVerified, txn.id) }
            return
        }
        let state = try Catalog.schemaState(in: txn, table: catalogTable)
        for store in declaredStores {
            let entry = try Catalog.read(
                EntityCatalog.self, key: Catalog.entityKey(store.name), in: txn, table: catalogTable)
            if let entry { store.refreshFields(from: entry.fields, isWriting: false) }
        }
        updateSchema { following in
            following.migration = state.migration
            if following.stale == nil, state.history.count > following.openedHistory {
                following.stale = Self.migratedPast(following, state: state, path: path)
            }
            guard txn.id > following.readVerified else { return }
            following.readGeneration = generation
            following.readVerified = txn.id
        }
    }

    /// Reads the catalog again after another process or container changed it, outside any transaction (tables are
    /// opened here): the field tables, the indexes the models do not declare, the relationships, and the entities
    /// the program does not declare.
    ///
    /// - Parameter deadline: How long a write may wait for another process's migration to end.
    /// - Returns: Whether the write may go on; `false` when a migration under way made it wait a little, after which
    ///   it tries again.
    /// - Throws: ``KVStoreError/schemaChanged`` once the store moved past the models,
    ///   ``KVStoreError/migrationInProgress`` for a migration that another process left part-way or that outlasted
    ///   `deadline`, ``KVStoreError/damaged`` for a table the catalog names and the file lacks.
    func reloadSchema(waitingUntil deadline: ContinuousClock.Instant) throws -> Bool {
        let (generation, transaction, state, entries, history) = try environment.read { txn in
            // A store made a replica after this container opened: its writes are refused from now on.
            if replica == nil, let replica = try ReplicaCatalog.read(in: txn, table: catalogTable) {
                let refusal = replica.refusal(path: path, action: "a write through a container of the replica")
                updateSchema { $0.stale = refusal }
                throw refusal
            }
            let (entries, damaged) = try Catalog.entities(in: txn, table: catalogTable)
            if let entry = damaged.first {
                throw KVStoreError(
                    .damaged,
                    message: "The store at \(path) is damaged: its catalog entry '\(entry.key)' does not decode "
                        + "(\(entry.reason)); nothing was written. Run 'kvtool check \(path)'")
            }
            return (
                try Catalog.generation(in: txn, table: catalogTable), txn.id,
                try Catalog.schemaState(in: txn, table: catalogTable), entries,
                try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalogTable)
            )
        }
        let historyState = try history.map { catalog in
            HistoryState(catalog: catalog, table: try Self.openHistoryTable(environment))
        }
        if let migration = state.migration {
            guard try lockProbe.isHeld(.migration) else {
                throw KVStoreError(
                    .migrationInProgress,
                    message: "The store at \(path) is part-way through migrating from schema version "
                        + "\(migration.from) to \(migration.to), and the process that ran the migration is gone; "
                        + "nothing was written. Open the store with the migration plan to finish the migration")
            }
            guard ContinuousClock.now < deadline else {
                throw KVStoreError(
                    .migrationInProgress,
                    message: "Another process is migrating the store at \(path) from schema version \(migration.from) "
                        + "to \(migration.to); this write waited \(configuration.migrationWaitTimeout) for it to end "
                        + "(ModelConfiguration.migrationWaitTimeout). Nothing was written")
            }
            updateSchema { $0.migration = migration }
            Thread.sleep(forTimeInterval: 0.01)
            return false
        }
        let byName = Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        if let stale = try staleness(state: state, entries: byName) {
            updateSchema { following in
                following.stale = stale.error
                following.staleForReads = stale.forReads
            }
            throw stale.error
        }
        for store in declaredStores {
            guard let entry = byName[store.name] else { continue }
            let declared = Set(store.declaredIndexNames)
            let derived = try entry.indexes.filter { !declared.contains($0.name) }.map { index in
                DerivedIndex(
                    catalog: index,
                    table: try SchemaLoader.existingTable(
                        Catalog.indexTableName(store.name, index.name),
                        options: Catalog.indexTableOptions(unique: index.isUnique), entity: store.name,
                        environment: environment))
            }
            store.reload(entry, derivedIndexes: derived)
        }
        let catalogStores = try Self.catalogStores(
            entries, declared: storesByName, environment: environment, longKeyHash: longKeyHash,
            hasChecksums: hasChecksums)
        updateSchema { following in
            following.migration = nil
            following.catalogStores = catalogStores
            following.history = historyState
            following.writeGeneration = generation
            following.writeVerified = transaction
            if following.readVerified <= transaction {
                following.readGeneration = generation
                following.readVerified = transaction
            }
        }
        return true
    }

    /// Why the store no longer fits the container's models, if it does not: a migration applied since it opened,
    /// or an entity or index its models declare removed.
    private func staleness(
        state: SchemaState, entries: [String: EntityCatalog]
    ) throws -> (error: KVStoreError, forReads: Bool)? {
        let following = schema.withLock { $0 }
        if state.history.count > following.openedHistory {
            return (Self.migratedPast(following, state: state, path: path), false)
        }
        for store in declaredStores {
            guard let entry = entries[store.name] else {
                return (
                    KVStoreError(
                        .schemaChanged, entity: store.name,
                        message: "The entity \(store.name) was removed from the store at \(path) while this container "
                            + "was open; nothing was written. Reopen the store with models that match it"), true
                )
            }
            let stored = Set(entry.indexes.map(\.name))
            for name in store.declaredIndexNames where !stored.contains(name) || entry.removedIndexes.contains(name) {
                return (
                    KVStoreError(
                        .schemaChanged, entity: store.name, field: name,
                        message: "The index \(name) of \(store.name), which this program declares, was removed from "
                            + "the store at \(path) while this container was open; nothing was written. Stop "
                            + "declaring it, or reopen the store"), true
                )
            }
        }
        return nil
    }

    /// The error for a store that a migration moved past the version the container opened it at.
    static func migratedPast(_ following: SchemaFollowing, state: SchemaState, path: String) -> KVStoreError {
        let applied = state.history.dropFirst(following.openedHistory)
        let from = following.openedVersion ?? applied.first?.from
        let to = state.version ?? applied.last?.to
        return KVStoreError(
            .schemaChanged,
            message: "The store at \(path) was migrated from schema version \(from.map { "\($0)" } ?? "(none)") to "
                + "\(to.map { "\($0)" } ?? "(none)") while this container was open with "
                + "\(following.openedVersion.map { "\($0)" } ?? "its models at \(from.map { "\($0)" } ?? "(none)")"); "
                + "nothing of this write was written. Open the store with the models of version "
                + "\(to.map { "\($0)" } ?? "(none)")")
    }

    /// Opens the entities of the catalog that the container does not declare.
    static func catalogStores(
        _ entries: [EntityCatalog], declared: [String: any AnyEntityStore], environment: Environment,
        longKeyHash: LongKeyHash, hasChecksums: Bool
    ) throws -> [String: CatalogEntityStore] {
        var stores: [String: CatalogEntityStore] = [:]
        for entry in entries where declared[entry.name] == nil {
            stores[entry.name] = try CatalogEntityStore(
                entry: entry, environment: environment, longKeyHash: longKeyHash, hasChecksums: hasChecksums)
        }
        return stores
    }

    /// Turns an error of a read into ``KVStoreError/schemaChanged`` when the record failed to decode because the
    /// store moved past the models, or is being migrated.
    func schemaMapped(_ error: any Error) -> any Error {
        guard let failure = error as? KVStoreError,
            failure == .corruptRecord || failure == .incompatibleSchema
        else { return error }
        let (stale, migration) = schema.withLock { ($0.stale, $0.migration) }
        if var stale {
            stale.id = failure.id
            stale.entity = stale.entity ?? failure.entity
            stale.cause = failure
            return stale
        }
        guard let migration else { return error }
        return KVStoreError(
            .schemaChanged, entity: failure.entity, id: failure.id, field: failure.field,
            message:
                "The stored \(failure.entity ?? "record") \(failure.id.map { "\($0)" } ?? "") was already migrated "
                + "from schema version \(migration.from) to \(migration.to) by a migration under way, and no longer "
                + "reads as this container's models; the records not yet migrated still read",
            cause: failure)
    }
}

extension ModelContainer {
    /// The store's schema as this container opened it, for continuations: its version and how many migration stages
    /// it had applied; a continuation made under another is refused.
    var schemaMark: String {
        schema.withLock { following in
            "\(following.openedVersion.map { "\($0)" } ?? "unversioned")+\(following.openedHistory)"
        }
    }
}

extension ModelContainer {
    /// Opens the history table that the catalog says the store has.
    ///
    /// - Throws: ``KVStoreError/damaged`` when the file lacks it.
    static func openHistoryTable(_ environment: Environment) throws -> HistoryTable {
        guard let table = try environment.tableIfPresent(named: Catalog.historyTableName) else {
            throw KVStoreError(
                .damaged,
                message: "The store's catalog says it records history, and its history table is missing. Run "
                    + "'kvtool check'; switching history off and on again starts a new history")
        }
        return HistoryTable(table: table)
    }
}
