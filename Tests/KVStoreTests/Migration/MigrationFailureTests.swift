import Foundation
import LMDB
import Testing

@testable import KVStore

/// Migrations that cannot run, fail part-way, or are killed part-way.
@Suite struct MigrationFailureTests {
    typealias Support = MigrationSupport

    @Test func aStoreWithNoMigrationPathIsRefusedNamingBothVersions() throws {
        enum Plan: SchemaMigrationPlan {
            static let schemas: [any VersionedSchema.Type] = [TodosV1.self, TodosV3.self]
            static let stages: [MigrationStage] = []
        }
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: TodosV1.self, Support.todos())
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV3.self, migrationPlan: Plan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .noMigrationPath)
        #expect(error.description.contains("no migration path from 1.0.0 to 3.0.0"))
        #expect(error.description.contains("Plan"))
        // Without a plan, a store at another version is refused too.
        let withoutPlan = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: TodosV2.self, configuration: Support.configuration(directory.path))
        }
        #expect(withoutPlan == .noMigrationPath)
        #expect(withoutPlan.description.contains("from 1.0.0 to 2.0.0"))
        #expect(try Support.schemaState(at: directory.path).version == SchemaVersion(1, 0, 0))
    }

    @Test func aStoreOfANewerVersionIsRefused() throws {
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: TodosV1.self, Support.todos())
        _ = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path)
        ).close()
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV1.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .noMigrationPath)
        #expect(error.description.contains("from 3.0.0 to 1.0.0"))
        #expect(error.description.contains("newer version of the program"))
    }

    @Test func aStageOfAModelOutsideItsSchemaIsRefused() throws {
        enum Plan: SchemaMigrationPlan {
            static let schemas: [any VersionedSchema.Type] = [TodosV2.self, TodosV3.self]
            static let stages: [MigrationStage] = [
                .custom(
                    fromVersion: TodosV2.self, toVersion: TodosV3.self,
                    migrations: [.transform(ContactsV1.Contact.self, to: TodosV3.Todo.self) { _ in nil }])
            ]
        }
        let directory = StoreDirectory()
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV3.self, migrationPlan: Plan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .invalidMigrationPlan)
        #expect(error.description.contains("Contact"))
        #expect(error.description.contains("not a model of schema 2.0.0"))
    }

    @Test func aPlanWithoutTheSchemaOpenedIsRefused() throws {
        let directory = StoreDirectory()
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: LightV2.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .invalidMigrationPlan)
        #expect(error.description.contains("LightV2"))
    }

    @Test func aTransformThatChangesTheIDIsRefused() throws {
        enum Plan: SchemaMigrationPlan {
            static let schemas: [any VersionedSchema.Type] = [TodosV2.self, TodosV3.self]
            static let stages: [MigrationStage] = [
                .custom(
                    fromVersion: TodosV2.self, toVersion: TodosV3.self,
                    migrations: [
                        .transform(TodosV2.Todo.self, to: TodosV3.Todo.self) { old in
                            TodosV3.Todo(id: UUID.timeOrdered(), title: old.title, priority: 0, words: 0)
                        }
                    ])
            ]
        }
        let directory = StoreDirectory()
        let todo = TodosV2.Todo(id: UUID.timeOrdered(), title: "t", notes: "", priority: nil)
        try Support.seed(directory.path, schema: TodosV2.self, [todo])
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV3.self, migrationPlan: Plan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .migrationFailed)
        #expect(error.id == todo.id)
        #expect(error.description.contains("keeps its id"))
        #expect(try Support.schemaState(at: directory.path).migration?.stepRecords == 0)
    }

    @Test func aSplitIntoAnEntityOutsideTheNewSchemaIsRefused() throws {
        enum Plan: SchemaMigrationPlan {
            static let schemas: [any VersionedSchema.Type] = [ContactsV1.self, ContactsV2.self]
            static let stages: [MigrationStage] = [
                .custom(
                    fromVersion: ContactsV1.self, toVersion: ContactsV2.self,
                    migrations: [
                        .split(ContactsV1.Contact.self, to: ContactsV2.Contact.self) { old, inserts in
                            inserts.insert(TodosV1.Todo(title: old.name, notes: ""))
                            return ContactsV2.Contact(id: old.id, name: old.name, addressID: UUID.timeOrdered())
                        }
                    ])
            ]
        }
        let directory = StoreDirectory()
        try Support.seed(
            directory.path, schema: ContactsV1.self, [ContactsV1.Contact(name: "n", street: "s", city: "c")])
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: ContactsV2.self, migrationPlan: Plan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .migrationFailed)
        #expect(error.description.contains("inserts a Todo, which is not an entity of the stage's new schema"))
    }

    @Test func aCustomStageThatThrowsWritesNothingOfItsChunkAndResumes() throws {
        let directory = StoreDirectory()
        var todos = Support.todos()
        todos[4].title = "bad"  // in the second chunk of three
        try Support.seed(directory.path, schema: TodosV1.self, todos)
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV3.self, migrationPlan: FailingTodosPlan.self,
                configuration: Support.configuration(directory.path))
        }
        #expect(error == .migrationFailed)
        #expect(error.entity == "Todo")
        #expect(error.id == todos[4].id)
        #expect(error.description.contains("2.0.0 → 3.0.0"))
        #expect(error.description.contains("the item is bad"))

        // The first chunk committed with its progress; the failing one left nothing.
        let state = try Support.schemaState(at: directory.path)
        let migration = try #require(state.migration)
        #expect(state.version == SchemaVersion(2, 0, 0))
        #expect(migration.from == SchemaVersion(2, 0, 0))
        #expect(migration.to == SchemaVersion(3, 0, 0))
        #expect(migration.stepRecords == 3)
        #expect(migration.after.flatMap(Hex.bytes) == withKey(todos[2].id) { Array($0) })

        // The store holds records of two versions: it opens only with a plan that finishes the migration.
        for open in [
            { try ModelContainer(for: TodosV2.Todo.self, configuration: Support.configuration(directory.path)) },
            { try ModelContainer(for: TodosV3.self, configuration: Support.configuration(directory.path)) },
        ] {
            let refusal = try #require(throws: KVStoreError.self) { try open() }
            #expect(refusal == .migrationInProgress)
            #expect(refusal.description.contains("from schema version 2.0.0 to 3.0.0"))
        }

        // Nor with the plan at the version the stage starts from.
        let atStart = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV2.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        }
        #expect(atStart == .migrationInProgress)
        #expect(atStart.description.contains("from 2.0.0 through 3.0.0"))

        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        let expected = try todos.map { TodosV2.Todo(id: $0.id, title: $0.title, notes: $0.notes) }
            .compactMap(TodosV3.migrate)
        #expect(try Support.all(TodosV3.Todo.self, in: container) == expected)
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    @Test func aKilledMigrationResumesOnTheNextOpen() async throws {
        let directory = StoreDirectory()
        let todos = Support.todos(count: 20)
        try Support.seed(directory.path, schema: TodosV1.self, todos)

        // The child migrates and is killed after its third chunk of the custom stage committed.
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = directory.path as String] in
            _ = try ModelContainer(
                for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: MigrationSupport.configuration(path),
                migrationProgress: { progress in
                    if progress.toVersion == SchemaVersion(3, 0, 0) && progress.migratedRecords == 9 {
                        kill(getpid(), SIGKILL)
                    }
                })
        }

        let state = try Support.schemaState(at: directory.path)
        let migration = try #require(state.migration)
        #expect(state.version == SchemaVersion(2, 0, 0))
        #expect(migration.to == SchemaVersion(3, 0, 0))
        #expect(migration.records == 9)
        #expect(state.history.map(\.to) == [SchemaVersion(2, 0, 0)])
        #expect(throws: KVStoreError.migrationInProgress) {
            try ModelContainer(for: TodosV1.self, configuration: Support.configuration(directory.path))
        }

        let reports = Locked<[MigrationProgress]>([])
        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path),
            migrationProgress: { progress in reports.withLock { $0.append(progress) } })
        // The stage resumed after its third chunk: 20 records in chunks of 3.
        #expect(reports.withLock { $0.map(\.migratedRecords) } == [12, 15, 18, 20, 20])
        #expect(reports.withLock { $0.first?.totalRecords } == 20)
        defer { try? container.close() }
        let expected = try todos.map { TodosV2.Todo(id: $0.id, title: $0.title, notes: $0.notes) }
            .compactMap(TodosV3.migrate)
        #expect(try Support.all(TodosV3.Todo.self, in: container) == expected)
        let after = try Support.schemaState(container)
        #expect(after.version == SchemaVersion(3, 0, 0))
        #expect(after.migration == nil)
        #expect(after.history.map(\.to) == [SchemaVersion(2, 0, 0), SchemaVersion(3, 0, 0)])
        #expect(after.history.last?.records == 20)
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    @Test func aMigrationKilledBetweenStagesResumesAtTheNextStage() async throws {
        let directory = StoreDirectory()
        let todos = Support.todos()
        try Support.seed(directory.path, schema: TodosV1.self, todos)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = directory.path as String] in
            _ = try ModelContainer(
                for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: MigrationSupport.configuration(path),
                migrationProgress: { progress in
                    if progress.isStageFinished && progress.toVersion == SchemaVersion(2, 0, 0) {
                        kill(getpid(), SIGKILL)
                    }
                })
        }
        let state = try Support.schemaState(at: directory.path)
        #expect(state.version == SchemaVersion(2, 0, 0))
        #expect(state.migration == nil)
        // Between stages the store is wholly at 2.0.0, and opens at that version.
        do {
            let container = try ModelContainer(for: TodosV2.self, configuration: Support.configuration(directory.path))
            #expect(try Support.all(TodosV2.Todo.self, in: container).map(\.id) == todos.map(\.id))
            try container.close()
        }
        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        #expect(try Support.all(TodosV3.Todo.self, in: container).count == 9)
        #expect(
            try Support.schemaState(container).history.map(\.to) == [SchemaVersion(2, 0, 0), SchemaVersion(3, 0, 0)])
    }

    @Test func tablesLeftToDeleteByAStageAreDeletedOnTheNextOpen() throws {
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: TodosV1.self, Support.todos())
        // As a crash leaves it between a stage's last transaction and the deletion of the tables it emptied.
        do {
            let environment = try Environment.open(path: directory.path)
            let leftover = try environment.openTable(named: Catalog.recordTableName("Gone"), create: true)
            let catalog = try environment.openTable(named: Catalog.tableName)
            try environment.write { txn in
                try txn.put([1], forKey: [1], in: leftover)
                try txn.empty(leftover)
                var state = try Catalog.schemaState(in: txn, table: catalog)
                state.pendingDrops = [Catalog.recordTableName("Gone")]
                try Catalog.write(state, key: Catalog.schemaKey, in: txn, table: catalog)
            }
            try environment.close()
        }
        let container = try ModelContainer(for: TodosV1.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        #expect(try !Support.tableNames(container).contains(Catalog.recordTableName("Gone")))
        #expect(try Support.schemaState(container).pendingDrops.isEmpty)
        #expect(try Support.all(TodosV1.Todo.self, in: container).count == 10)
    }

    @Test func aKilledEntityRenameResumesOnTheNextOpen() async throws {
        let directory = StoreDirectory()
        let directories = (0..<10).map { LightV1.Directory(name: "dir \($0)") }
        try Support.seed(directory.path, schema: LightV1.self, directories)

        await #expect(processExitsWith: .signal(SIGKILL)) { [path = directory.path as String] in
            _ = try ModelContainer(
                for: LightV2.self, migrationPlan: LightPlan.self, configuration: MigrationSupport.configuration(path),
                migrationProgress: { progress in
                    if progress.migratedRecords == 6 { kill(getpid(), SIGKILL) }
                })
        }

        #expect(try Support.schemaState(at: directory.path).migration?.records == 6)
        let container = try ModelContainer(
            for: LightV2.self, migrationPlan: LightPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        #expect(
            try Support.all(LightV2.Folder.self, in: container)
                == directories.map { LightV2.Folder(id: $0.id, name: $0.name) })
        #expect(try !Support.tableNames(container).contains("records/Directory"))
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }
}
