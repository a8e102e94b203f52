import LMDB

/// What a container does with the store's schema version before it loads its entities, under the store's migration
/// lock: the seam between the container, which opens stores, and the migration feature above it, which moves them
/// from one schema version to another (`Migration/VersionedOpening.swift`).
protocol SchemaPreparation {
    /// Every model type the preparation may touch beyond the container's own, for the environment's table slots.
    var models: [any StoredModel.Type] { get }

    /// Brings the store to the schema version the opener asks for. The caller holds the store's migration lock.
    ///
    /// - Parameters:
    ///   - environment: The store's environment.
    ///   - catalog: The store's catalog table.
    ///   - isReadOnly: Whether the container opens read-only: nothing may be written, and a store that needs work is
    ///     refused.
    /// - Returns: Whether a migration stage ran (or finished one an earlier open left part-way), so that loading the
    ///   entities applies the schema changes the stages made.
    /// - Throws: ``KVStoreError/migrationInProgress`` for a store part-way through a migration this preparation does
    ///   not finish, and what reading or writing the catalog throws.
    func prepare(environment: Environment, catalog: Table, isReadOnly: Bool) throws -> Bool
}

/// The preparation of a container opened with model types alone: the store opens at whatever version it records,
/// unless a migration is under way.
struct UnversionedOpening: SchemaPreparation {
    var models: [any StoredModel.Type] { [] }

    /// Drops the tables an earlier migration left to drop, and refuses a store part-way through a migration.
    ///
    /// - Returns: `false`: no stage runs.
    /// - Throws: ``KVStoreError/migrationInProgress``, and what reading or writing the catalog throws.
    func prepare(environment: Environment, catalog: Table, isReadOnly: Bool) throws -> Bool {
        let state = try SchemaState.droppingPendingTables(
            environment: environment, catalog: catalog, isReadOnly: isReadOnly)
        if let migration = state.migration { throw migration.inProgress(at: environment.path) }
        return false
    }
}

extension SchemaState {
    /// Reads the store's schema state, first dropping the tables a migration recorded to drop (unless the open is
    /// read-only): the part of every opening that does not depend on versions, and the end of a stage that removed
    /// tables.
    ///
    /// - Throws: What reading the catalog and dropping tables throw.
    static func droppingPendingTables(environment: Environment, catalog: Table, isReadOnly: Bool) throws -> SchemaState
    {
        let state = try environment.read { txn in try Catalog.schemaState(in: txn, table: catalog) }
        guard !state.pendingDrops.isEmpty, !isReadOnly else { return state }
        for name in state.pendingDrops {
            if let table = try Catalog.openExisting(name, options: [], in: environment)
                ?? Catalog.openExisting(name, options: [.dupSort, .dupFixed], in: environment)
            {
                try environment.dropTable(table)
            }
        }
        return try environment.write { txn in
            var state = try Catalog.schemaState(in: txn, table: catalog)
            state.pendingDrops = []
            try Catalog.write(state, key: Catalog.schemaKey, in: txn, table: catalog)
            return state
        }
    }
}

extension MigrationState {
    /// The error of an open that finds this migration under way and cannot finish it.
    func inProgress(at path: String) -> KVStoreError {
        KVStoreError(
            .migrationInProgress,
            message: "The store at \(path) is part-way through migrating from schema version \(from) to \(to), and "
                + "holds records of both; open it with the migration plan that started the migration to finish it")
    }
}

extension Catalog {
    /// Opens a table that may not exist; `nil` when it does not, or when it has other options.
    ///
    /// - Throws: What opening the table throws but for its absence or other options.
    static func openExisting(_ name: String, options: Table.Options, in environment: Environment) throws -> Table? {
        do {
            return try environment.openTable(named: name, options: options)
        } catch LMDBError.notFound {
            return nil
        } catch LMDBError.incompatible {
            return nil
        }
    }
}
