import Foundation
import LMDB

/// What an entity declares that a migration reads: its name, its original name, its renamed fields.
struct EntityFacts {
    let name: String
    let originalName: String?
    let renamedFields: [String: String]

    init(_ type: any StoredModel.Type) {
        func facts<M: StoredModel>(_: M.Type) -> (String, String?, [String: String]) {
            (M.entity.name, M.entity.originalName, M.entity.renamedFields)
        }
        (name, originalName, renamedFields) = facts(type)
    }
}

/// One entity's part of a stage: its records read from `source` and written to `target`, transformed by a closure
/// or, for a renamed entity, moved as they are.
struct EntityStep {
    let source: String
    let target: String
    let transform: (any AnyEntityTransform)?
}

/// The run of one ``MigrationStage``: a first transaction applies the catalog changes and records the stage as under
/// way, then each entity step migrates its records a chunk per write transaction, recording its progress in the same
/// transaction, and a last transaction removes the entities the new schema no longer has and stamps the version.
struct StageRun {
    let migrator: Migrator
    let stage: MigrationStage
    /// The version the whole migration ends at.
    let target: SchemaVersion
    let chunkSize: Int

    private var environment: Environment { migrator.environment }
    private var catalog: Table { migrator.catalog }
    private var from: SchemaVersion { stage.fromVersion.versionIdentifier }
    private var to: SchemaVersion { stage.toVersion.versionIdentifier }
    private var label: String { "\(from) → \(to)" }

    /// The entity steps, in an order that depends only on the plan, so that a resumed stage finds its place: the
    /// custom migrations in their order, then the renamed entities in the order of the new schema's models.
    var steps: [EntityStep] {
        var steps = stage.migrations.map {
            EntityStep(source: $0.transform.sourceName, target: $0.transform.targetName, transform: $0.transform)
        }
        let fromNames = Set(stage.fromVersion.allModels.map { EntityFacts($0).name })
        let handled = Set(steps.flatMap { [$0.source, $0.target] })
        for model in stage.toVersion.allModels {
            let facts = EntityFacts(model)
            guard let original = facts.originalName, original != facts.name, fromNames.contains(original),
                !fromNames.contains(facts.name), !handled.contains(original), !handled.contains(facts.name)
            else { continue }
            steps.append(EntityStep(source: original, target: facts.name, transform: nil))
        }
        return steps
    }

    /// Runs the stage, or the rest of it when `resuming` is the state of this stage left by an earlier open.
    func run(resuming: MigrationState?) throws {
        let steps = self.steps
        let toNames = stage.toVersion.allModels.map { EntityFacts($0).name }
        // Tables are opened before any transaction, as LMDB requires.
        var tables: [String: Table] = [:]
        for name in toNames {
            tables[name] = try environment.openTable(named: Catalog.recordTableName(name), create: true)
        }
        for step in steps where tables[step.source] == nil {
            tables[step.source] = try migrator.openExisting(Catalog.recordTableName(step.source), options: [])
        }
        var externalTables: [String: ExternalValueTable] = [:]
        for step in steps {
            if try migrator.openExisting(Catalog.externalTableName(step.source), options: []) != nil {
                externalTables[step.source] = try ExternalValueTable.open(
                    entity: step.source, environment: environment, exists: true, isChecked: true)
            }
        }
        var state: MigrationState
        if let resuming, resuming.from == from, resuming.to == to {
            state = resuming
        } else {
            try checkExternalValuesStay(steps: steps, externalTables: externalTables)
            try checkLightweightEntities(steps: steps, tables: tables)
            state = MigrationState(
                target: target, from: from, to: to, kind: stage.kindName, step: 0, entity: steps.first?.source,
                after: nil, stepRecords: 0, stepDropped: 0, records: 0, started: Date())
            try environment.write { [state] txn in
                try applyRenames(steps: steps, in: txn)
                try record(state, in: txn)
            }
        }
        // Tables are opened outside transactions: the history's, when the store has one, for the chunks' entries.
        let history = try environment.tableIfPresent(named: Catalog.historyTableName).map(HistoryTable.init(table:))
        while state.step < steps.count {
            let step = steps[state.step]
            guard let source = tables[step.source] else {
                state.step += 1
                continue
            }
            let isInPlace = step.source == step.target
            let remaining = try environment.read { txn in try txn.count(of: source) }
            // Records a step moved or dropped have left its source.
            let total = remaining + (isInPlace ? state.stepDropped : state.stepRecords)
            let stepIndex = state.step
            var migrated = state.stepRecords
            while state.step == stepIndex {
                let count: Int
                (state, count) = try environment.write { [state] txn in
                    try chunk(
                        step, state: state, tables: tables, externalTables: externalTables, toNames: Set(toNames),
                        history: history, in: txn)
                }
                migrated += count
                if count > 0 {
                    migrator.progress?(
                        MigrationProgress(
                            fromVersion: from, toVersion: to, entity: step.source, migratedRecords: migrated,
                            totalRecords: total, isStageFinished: false))
                }
            }
        }
        try finish(state, toNames: Set(toNames))
    }

    /// Migrates one chunk of a step and records the progress; the step ends with the chunk that reaches the end of
    /// its source.
    private func chunk(
        _ step: EntityStep, state: MigrationState, tables: [String: Table],
        externalTables: [String: ExternalValueTable], toNames: Set<String>, history: HistoryTable?,
        in txn: borrowing Transaction
    ) throws -> (MigrationState, Int) {
        let chunk = try MigrationChunk(
            stage: label, source: step.source, target: step.target, after: state.after.flatMap(Hex.bytes),
            limit: chunkSize, tables: tables, externalTables: externalTables, insertable: toNames, catalog: catalog,
            in: txn)
        let outcome: MigrationChunk.Outcome
        if let transform = step.transform {
            outcome = try transform.migrateChunk(chunk, in: txn)
        } else {
            outcome = try chunk.move(in: txn)
        }
        try recordHistory(outcome.changes, table: history, in: txn)
        var next = state
        next.records += outcome.count
        next.stepRecords += outcome.count
        next.stepDropped += outcome.dropped
        next.after = outcome.lastKey.map(Hex.string) ?? state.after
        if outcome.count < chunkSize {
            next.step += 1
            next.after = nil
            next.stepRecords = 0
            next.stepDropped = 0
            let steps = self.steps
            next.entity = next.step < steps.count ? steps[next.step].source : nil
        }
        try record(next, in: txn)
        return (next, outcome.count)
    }

    /// Records a chunk's changes in the store's history, when it records one, as every commit does: the author is
    /// the migration, `migration <from> → <to>`.
    ///
    /// - Throws: ``KVStoreError/damaged`` when the catalog says the store records history and its table is missing.
    private func recordHistory(
        _ changes: [ChangeSet.Change], table: HistoryTable?, in txn: borrowing Transaction
    ) throws {
        guard !changes.isEmpty,
            let history = try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalog)
        else { return }
        guard let table else {
            throw KVStoreError(
                .damaged,
                message: "The store's catalog says it records history, and its history table is missing; the "
                    + "migration \(label) wrote nothing. Run 'kvtool check'")
        }
        _ = try table.append(
            changes, keptValues: [:], author: "migration \(label)", date: Date(), origin: 0,
            retention: history.retention, in: txn)
    }

    /// Writes the stage's state into the catalog.
    private func record(_ migration: MigrationState?, in txn: borrowing Transaction) throws {
        var schema = try Catalog.schemaState(in: txn, table: catalog)
        schema.migration = migration
        try Catalog.write(schema, key: Catalog.schemaKey, in: txn, table: catalog)
    }

    /// Renames fields in the catalog, and gives each renamed entity its new catalog entry: the old one's fields
    /// (renamed as declared), with no index yet, so that the container builds them once the records are in.
    private func applyRenames(steps: [EntityStep], in txn: borrowing Transaction) throws {
        let fromNames = Set(stage.fromVersion.allModels.map { EntityFacts($0).name })
        let custom = Set(steps.filter { $0.transform != nil }.flatMap { [$0.source, $0.target] })
        for model in stage.toVersion.allModels {
            let facts = EntityFacts(model)
            if let move = steps.first(where: { $0.transform == nil && $0.target == facts.name }) {
                guard
                    var entry = try Catalog.read(
                        EntityCatalog.self, key: Catalog.entityKey(move.source), in: txn, table: catalog)
                else { continue }
                entry.name = facts.name
                entry.fields = try renamed(entry.fields, facts)
                entry.indexes = []
                entry.relationships = []
                try Catalog.write(entry, key: Catalog.entityKey(facts.name), in: txn, table: catalog)
            } else if fromNames.contains(facts.name), !custom.contains(facts.name), !facts.renamedFields.isEmpty {
                let key = Catalog.entityKey(facts.name)
                guard var entry = try Catalog.read(EntityCatalog.self, key: key, in: txn, table: catalog) else {
                    continue
                }
                entry.fields = try renamed(entry.fields, facts)
                try Catalog.write(entry, key: key, in: txn, table: catalog)
            }
        }
    }

    /// The field table with the entity's renamed fields given their new names; ids, and so the records, stay.
    private func renamed(_ fields: FieldTable, _ facts: EntityFacts) throws -> FieldTable {
        var fields = fields
        for (new, old) in facts.renamedFields.sorted(by: { $0.key < $1.key }) {
            guard fields.existingID(for: old, in: .topLevel) != nil else { continue }
            guard fields.rename(old, to: new) else {
                throw KVStoreError(
                    .incompatibleSchema, entity: facts.name, field: new,
                    message: "The migration \(label) cannot rename \(facts.name).\(old) to \(new): the entity already "
                        + "stores a field named \(new); migrate it in a custom stage")
            }
        }
        return fields
    }

    /// Refuses, before anything is written, a step that would move records with external values to another entity:
    /// their chunks are keyed by entity and field, and copying them (gigabytes, perhaps) is not something a stage
    /// does yet.
    private func checkExternalValuesStay(steps: [EntityStep], externalTables: [String: ExternalValueTable]) throws {
        for step in steps where step.source != step.target {
            guard let external = externalTables[step.source],
                try environment.read({ txn in try !external.isEmpty(in: txn) })
            else { continue }
            throw KVStoreError(
                .invalidMigrationPlan, entity: step.source,
                message: "The migration \(label) would move the \(step.source) records to \(step.target), but they "
                    + "have external values, which a migration cannot move to another entity yet; keep the entity's "
                    + "name (a custom stage may transform its records in place). Nothing was migrated")
        }
    }

    /// Decodes the first and the last stored record of each entity the stage migrates without a closure with the
    /// new schema's model, before anything is written: a change a lightweight stage cannot make fails here, with
    /// the entity and field named, and the store is left as it was.
    private func checkLightweightEntities(steps: [EntityStep], tables: [String: Table]) throws {
        let fromNames = Set(stage.fromVersion.allModels.map { EntityFacts($0).name })
        let custom = Set(steps.filter { $0.transform != nil }.flatMap { [$0.source, $0.target] })
        for model in stage.toVersion.allModels {
            let facts = EntityFacts(model)
            guard !custom.contains(facts.name) else { continue }
            let source =
                steps.first(where: { $0.transform == nil && $0.target == facts.name })?.source
                ?? (fromNames.contains(facts.name) ? facts.name : nil)
            guard let source, let table = tables[source] else { continue }
            try checkReads(model, source: source, table: table, facts: facts)
        }
    }

    private func checkReads<M: StoredModel>(_: M.Type, source: String, table: Table, facts: EntityFacts) throws {
        try environment.read { txn in
            guard
                let entry = try Catalog.read(
                    EntityCatalog.self, key: Catalog.entityKey(source), in: txn, table: catalog)
            else { return }
            let fields = try renamed(entry.fields, facts)
            let decoder = RecordDecoder()
            try txn.withCursor(on: table) { cursor in
                for move in [true, false] {
                    guard try move ? cursor.first() : cursor.last() else { return }
                    try cursor.withCurrentEntry { key, value in
                        let id = UUID(bytes: key)
                        do {
                            _ = try decoder.decode(M.self, from: value, fields: fields)
                        } catch let error as DecodingError {
                            let reason = SchemaLoader.incompatibility(error, entity: facts.name, id: id)
                            throw KVStoreError(
                                .incompatibleSchema, entity: facts.name, id: id, field: reason.field,
                                message: "The lightweight migration \(label) cannot migrate \(facts.name): "
                                    + "\(reason.message). Nothing was migrated; migrate \(facts.name) in a custom "
                                    + "stage", cause: error)
                        }
                    }
                }
            }
        }
    }

    /// Removes the entities of the old schema that the new one does not have (gone, renamed, or moved by a custom
    /// migration), stamps the new version and records the stage in the history, in one transaction; then deletes
    /// the emptied tables.
    private func finish(_ state: MigrationState, toNames: Set<String>) throws {
        let removed = stage.fromVersion.allModels.map { EntityFacts($0).name }.filter { !toNames.contains($0) }
        let entries = try environment.read { txn in
            try removed.compactMap { name in
                try Catalog.read(EntityCatalog.self, key: Catalog.entityKey(name), in: txn, table: catalog)
            }
        }
        var drops: [Table] = []
        for entry in entries {
            if let table = try migrator.openExisting(Catalog.recordTableName(entry.name), options: []) {
                drops.append(table)
            }
            for name in [
                Catalog.externalTableName(entry.name), Catalog.stagingTableName(entry.name),
                Catalog.checksumTableName(entry.name),
            ] {
                if let table = try migrator.openExisting(name, options: []) { drops.append(table) }
            }
            for index in entry.indexes {
                let name = Catalog.indexTableName(entry.name, index.name)
                if let table = try migrator.openExisting(
                    name, options: Catalog.indexTableOptions(unique: index.isUnique))
                {
                    drops.append(table)
                }
            }
        }
        try environment.write { txn in
            for table in drops { try txn.empty(table) }
            for entry in entries { try Catalog.delete(key: Catalog.entityKey(entry.name), in: txn, table: catalog) }
            var schema = try Catalog.schemaState(in: txn, table: catalog)
            schema.version = to
            schema.migration = nil
            schema.history.append(
                MigrationRecord(
                    from: from, to: to, kind: stage.kindName, records: state.records, started: state.started,
                    finished: Date()))
            schema.pendingDrops = drops.compactMap(\.name)
            try Catalog.write(schema, key: Catalog.schemaKey, in: txn, table: catalog)
        }
        if !drops.isEmpty { try migrator.dropPendingTables() }
        migrator.progress?(
            MigrationProgress(
                fromVersion: from, toVersion: to, entity: nil, migratedRecords: state.records,
                totalRecords: state.records, isStageFinished: true))
    }
}
