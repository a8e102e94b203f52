import Foundation
import LMDB

/// Brings a store to the schema version a container opens with, before the container loads its entities: it stamps
/// a new store's version, refuses a version it has no path from, and runs a plan's stages.
struct Migrator {
    /// How a container was asked to open the store.
    enum Versioning {
        /// With one versioned schema and no plan: the store must be at that version, or record none.
        case schema(any VersionedSchema.Type)
        /// With a plan: the store is migrated to `target`, one of the plan's schemas.
        case plan(any SchemaMigrationPlan.Type, target: any VersionedSchema.Type)

        /// Every model type the opening may touch, for the environment's table slots.
        var models: [any StoredModel.Type] {
            switch self {
            case .schema(let schema): schema.allModels
            case .plan(let plan, let target): plan.schemas.flatMap { $0.allModels } + target.allModels
            }
        }
    }

    let environment: Environment
    let catalog: Table
    let progress: (@Sendable (MigrationProgress) -> Void)?
    /// Whether the container opens read-only: a store that would need a stage is refused, and a version is not
    /// stamped.
    var isReadOnly = false

    init(environment: Environment, catalog: Table, progress: (@Sendable (MigrationProgress) -> Void)?) {
        self.environment = environment
        self.catalog = catalog
        self.progress = progress
    }

    /// Checks the store's schema version against `versioning`, and migrates it when a plan says how. The caller
    /// holds the store's migration lock.
    ///
    /// - Returns: Whether a migration stage ran (or finished a stage an earlier open left part-way).
    /// - Throws: ``KVStoreError/migrationInProgress``, ``KVStoreError/noMigrationPath``,
    ///   ``KVStoreError/invalidMigrationPlan``, and what a stage throws.
    func prepare(_ versioning: Versioning) throws -> Bool {
        let state = try SchemaState.droppingPendingTables(
            environment: environment, catalog: catalog, isReadOnly: isReadOnly)
        switch versioning {
        case .schema(let schema):
            let version = schema.versionIdentifier
            if let migration = state.migration { throw migration.inProgress(at: environment.path) }
            guard let stored = state.version else {
                try stamp(version)
                return false
            }
            guard stored == version else {
                throw Self.noPath(at: environment.path, from: stored, to: version, plan: nil)
            }
            return false
        case .plan(let plan, let target):
            return try migrate(plan, to: target, state: state)
        }
    }

    private func migrate(
        _ plan: any SchemaMigrationPlan.Type, to target: any VersionedSchema.Type, state: SchemaState
    ) throws -> Bool {
        try Self.validate(plan, target: target)
        let targetVersion = target.versionIdentifier
        let current: SchemaVersion
        if let migration = state.migration {
            current = migration.from
        } else if let version = state.version {
            current = version
        } else if try hasEntities() {
            // A store written before the program versioned its schema holds the first version's records.
            current = plan.schemas[0].versionIdentifier
        } else {
            try stamp(targetVersion)
            return false
        }
        guard current != targetVersion || state.migration != nil else { return false }
        let stages = try Self.path(plan, from: current, to: targetVersion, environment: environment)
        if let migration = state.migration, stages.first?.toVersion.versionIdentifier != migration.to {
            throw KVStoreError(
                .migrationInProgress,
                message: "The store at \(environment.path) is part-way through migrating from \(migration.from) to "
                    + "\(migration.to), and holds records of both; open it with a migration plan that leads from "
                    + "\(migration.from) through \(migration.to) to finish the migration, not at \(targetVersion)")
        }
        if isReadOnly {
            throw KVStoreError(
                .readOnly,
                message: "The store at \(environment.path) is at schema version \(current), and opening it at "
                    + "\(targetVersion) needs a migration, which a read-only open does not run; open it writable once")
        }
        let chunkSize = max(1, plan.migrationChunkSize)
        var resuming = state.migration
        for stage in stages {
            try StageRun(migrator: self, stage: stage, target: targetVersion, chunkSize: chunkSize).run(
                resuming: resuming)
            resuming = nil
        }
        return true
    }

    // MARK: - Plans

    /// Checks that a plan's versions are distinct, that its stages join its schemas, and that each custom
    /// migration's model types belong to its stage's versions.
    static func validate(_ plan: any SchemaMigrationPlan.Type, target: any VersionedSchema.Type) throws {
        func refuse(_ message: String) -> KVStoreError {
            KVStoreError(.invalidMigrationPlan, message: "The migration plan \(plan) \(message)")
        }
        let versions = plan.schemas.map { $0.versionIdentifier }
        guard !versions.isEmpty else { throw refuse("has no schemas") }
        guard Set(versions).count == versions.count else {
            throw refuse("lists a schema version twice (\(versions.map(\.description).joined(separator: ", ")))")
        }
        func isListed(_ schema: any VersionedSchema.Type) -> Bool {
            plan.schemas.contains { ObjectIdentifier($0) == ObjectIdentifier(schema) }
        }
        guard isListed(target) else {
            throw refuse("does not list \(target) (version \(target.versionIdentifier)) among its schemas")
        }
        var starts: Set<SchemaVersion> = []
        for stage in plan.stages {
            let (from, to) = (stage.fromVersion.versionIdentifier, stage.toVersion.versionIdentifier)
            let label = "\(from) → \(to)"
            guard isListed(stage.fromVersion), isListed(stage.toVersion) else {
                throw refuse("has the stage \(label), whose schemas are not both among its schemas")
            }
            guard from != to else { throw refuse("has a stage from \(from) to itself") }
            guard starts.insert(from).inserted else { throw refuse("has two stages from \(from)") }
            var sources: Set<String> = []
            for migration in stage.migrations {
                let transform = migration.transform
                guard stage.fromVersion.models.contains(where: { $0 == transform.oldType }) else {
                    throw refuse(
                        "migrates \(transform.oldType) (entity \(transform.sourceName)) in the stage \(label), but "
                            + "it is not a model of schema \(from)")
                }
                guard stage.toVersion.models.contains(where: { $0 == transform.newType }) else {
                    throw refuse(
                        "migrates to \(transform.newType) (entity \(transform.targetName)) in the stage \(label), "
                            + "but it is not a model of schema \(to)")
                }
                guard sources.insert(transform.sourceName).inserted else {
                    throw refuse("migrates \(transform.sourceName) twice in the stage \(label)")
                }
            }
        }
    }

    /// The stages from `current` to `target`.
    static func path(
        _ plan: any SchemaMigrationPlan.Type, from current: SchemaVersion, to target: SchemaVersion,
        environment: Environment
    ) throws -> [MigrationStage] {
        var path: [MigrationStage] = []
        var version = current
        while version != target {
            guard let stage = plan.stages.first(where: { $0.fromVersion.versionIdentifier == version }),
                path.count < plan.stages.count
            else {
                throw noPath(at: environment.path, from: current, to: target, plan: plan)
            }
            path.append(stage)
            version = stage.toVersion.versionIdentifier
        }
        return path
    }

    // MARK: - Catalog

    private func stamp(_ version: SchemaVersion) throws {
        // A read-only open leaves a store without a version as it is.
        guard !isReadOnly else { return }
        try environment.write { txn in
            var state = try Catalog.schemaState(in: txn, table: catalog)
            state.version = version
            try Catalog.write(state, key: Catalog.schemaKey, in: txn, table: catalog)
        }
    }

    private func hasEntities() throws -> Bool {
        try environment.read { txn in
            var found = false
            try txn.scanEntries(catalog, in: .prefix(Catalog.entityKeyPrefix)) { _, _ in
                found = true
                return false
            }
            return found
        }
    }

    /// Drops the tables the catalog lists to drop, and empties the list.
    ///
    /// - Throws: What reading or writing the catalog and dropping tables throw.
    func dropPendingTables() throws {
        _ = try SchemaState.droppingPendingTables(environment: environment, catalog: catalog, isReadOnly: false)
    }

    /// Opens a table that may not exist; `nil` when it does not, or when it has other options.
    ///
    /// - Throws: What opening the table throws but for its absence or other options.
    func openExisting(_ name: String, options: Table.Options) throws -> Table? {
        try Catalog.openExisting(name, options: options, in: environment)
    }

    // MARK: - Errors

    /// The error for a store at `stored` that a program opens at `version`, naming both.
    static func noPath(
        at path: String, from stored: SchemaVersion, to version: SchemaVersion,
        plan: (any SchemaMigrationPlan.Type)?
    ) -> KVStoreError {
        let newer = stored > version ? " The store was written by a newer version of the program." : ""
        let remedy =
            plan.map { "the migration plan \($0) has no stages that lead from \(stored) to \(version)" }
            ?? "open it with a migration plan from \(stored) to \(version)"
        return KVStoreError(
            .noMigrationPath,
            message: "The store at \(path) is at schema version \(stored), not \(version): there is no "
                + "migration path from \(stored) to \(version); \(remedy).\(newer)")
    }
}
