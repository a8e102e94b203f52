import LMDB

/// The preparation of a container opened with a versioned schema, with or without a migration plan: the migration
/// feature's side of ``SchemaPreparation``.
struct VersionedOpening: SchemaPreparation {
    /// The schema the program opens the store with, and the plan that leads there.
    let versioning: Migrator.Versioning
    /// Called after each migrated chunk commits, and when each stage ends.
    let progress: (@Sendable (MigrationProgress) -> Void)?

    var models: [any StoredModel.Type] { versioning.models }

    /// Checks the store's schema version, and migrates it when the plan says how.
    ///
    /// - Returns: Whether a migration stage ran.
    /// - Throws: ``KVStoreError/migrationInProgress``, ``KVStoreError/noMigrationPath``,
    ///   ``KVStoreError/invalidMigrationPlan``, ``KVStoreError/readOnly`` for a read-only open of a store that needs
    ///   a stage, and what a stage throws.
    func prepare(environment: Environment, catalog: Table, isReadOnly: Bool) throws -> Bool {
        var migrator = Migrator(environment: environment, catalog: catalog, progress: progress)
        migrator.isReadOnly = isReadOnly
        return try migrator.prepare(versioning)
    }
}
