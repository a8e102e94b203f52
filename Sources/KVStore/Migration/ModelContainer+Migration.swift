extension ModelContainer {
    /// Opens (or creates) the store for a versioned schema, migrating it on open from the version it records when a
    /// plan is given.
    ///
    /// Without a plan the store must be at `schema`'s version, or record none (it is then stamped with it). With a
    /// plan, the stages from the store's version to `schema`'s run before the container opens, a chunk of records per
    /// write transaction; a migration that was killed part-way resumes. Then the models of `schema` are loaded as by
    /// ``init(for:configuration:observer:)-(StoredModel....,_,_)``, and the indexes a stage rewrote are rebuilt.
    ///
    /// ```swift
    /// let container = try ModelContainer(
    ///     for: SchemaV3.self, migrationPlan: NotesMigrationPlan.self,
    ///     configuration: ModelConfiguration(path: "/var/lib/app/notes"))
    /// ```
    ///
    /// - Parameters:
    ///   - schema: The schema version the program uses; with a plan, one of the plan's schemas.
    ///   - migrationPlan: How to migrate a store from each older version, or `nil`.
    ///   - configuration: Where and how to keep the store.
    ///   - observer: Hooks for logging and metrics.
    ///   - migrationProgress: Called after each migrated chunk commits, and when each stage ends.
    /// - Throws: ``KVStoreError/noMigrationPath`` naming the stored and the wanted version,
    ///   ``KVStoreError/migrationFailed`` when a custom stage throws, ``KVStoreError/migrationInProgress``,
    ///   ``KVStoreError/invalidMigrationPlan``, ``KVStoreError/incompatibleSchema`` when a lightweight stage cannot
    ///   make a change, and the errors of ``init(for:configuration:observer:)-(StoredModel....,_,_)``.
    public convenience init(
        for schema: any VersionedSchema.Type,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configuration: ModelConfiguration = ModelConfiguration(),
        observer: (any ModelContainerObserver)? = nil,
        migrationProgress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws {
        try self.init(
            for: schema.allModels, configuration: configuration, observer: observer,
            preparation: VersionedOpening(
                versioning: migrationPlan.map { .plan($0, target: schema) } ?? .schema(schema),
                progress: migrationProgress))
    }
}
