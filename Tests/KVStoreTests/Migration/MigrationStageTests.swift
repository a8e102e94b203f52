import Foundation
import LMDB
import Synchronization
import Testing

@testable import KVStore

/// Each kind of stage, and a migration across three versions.
@Suite struct MigrationStageTests {
    typealias Support = MigrationSupport

    @Test func aLightweightStageRenamesFieldsAndEntitiesAndBuildsIndexes() throws {
        let directory = StoreDirectory()
        let notes = (0..<7).map { LightV1.Note(title: "note \($0)", body: "body \($0)", pinned: $0 % 2 == 0) }
        let directories = (0..<5).map { LightV1.Directory(name: "dir \($0)") }
        let container = try ModelContainer(for: LightV1.self, configuration: Support.configuration(directory.path))
        let context = ModelContext(container)
        for note in notes { context.insert(note) }
        for directory in directories { context.insert(directory) }
        try context.save()
        try container.close()

        let migrated = try ModelContainer(
            for: LightV2.self, migrationPlan: LightPlan.self, configuration: Support.configuration(directory.path))
        defer { try? migrated.close() }
        #expect(
            try Support.all(LightV2.Note.self, in: migrated)
                == notes.map { LightV2.Note(id: $0.id, heading: $0.title, body: $0.body, tag: nil) })
        #expect(
            try Support.all(LightV2.Folder.self, in: migrated)
                == directories.map { LightV2.Folder(id: $0.id, name: $0.name) })
        let byHeading = FetchDescriptor<LightV2.Note>(predicate: #Predicate { $0.heading == "note 3" })
        let migratedContext = ModelContext(migrated)
        #expect(try migratedContext.explain(byHeading).contains("index heading"))
        #expect(try migratedContext.fetch(byHeading).map(\.id) == [notes[3].id])
        // The renamed entity's old tables and catalog entry are gone; its unique index was built.
        let tables = try Support.tableNames(migrated)
        #expect(!tables.contains { $0.contains("Directory") })
        #expect(tables.contains("index/Folder/name"))
        #expect(tables.contains("index/Note/tag"))
        #expect(!tables.contains("index/Note/title"))
        migratedContext.insert(LightV2.Folder(id: UUID.timeOrdered(), name: "dir 1"))
        #expect(throws: KVStoreError.uniqueViolation) { try migratedContext.save() }
        migratedContext.rollback()

        let state = try Support.schemaState(migrated)
        #expect(state.version == SchemaVersion(2, 0, 0))
        #expect(state.migration == nil)
        #expect(state.history.map(\.kind) == ["lightweight"])
        #expect(state.history.first?.records == directories.count)
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    @Test func aFieldRenameKeepsTheStoredBytes() throws {
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: LightV1.self, [LightV1.Note(title: "kept", body: "b")])
        let before = try Support.schemaState(at: directory.path)
        #expect(before.version == SchemaVersion(1, 0, 0))
        let container = try ModelContainer(
            for: LightV2.self, migrationPlan: LightPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        let entry = try container.environment.read { txn in
            try Catalog.read(EntityCatalog.self, key: Catalog.entityKey("Note"), in: txn, table: container.catalogTable)
        }
        // `heading` took the id of `title`: the record was not rewritten, its field was renamed in the catalog.
        #expect(entry?.fields.existingID(for: "heading", in: .topLevel) == 2)
        #expect(entry?.fields.existingID(for: "title", in: .topLevel) == nil)
    }

    @Test func aLightweightStageThatCannotReadTheRecordsChangesNothing() throws {
        enum Plan: SchemaMigrationPlan {
            static let schemas: [any VersionedSchema.Type] = [TodosV1.self, TodosV3.self]
            static let stages: [MigrationStage] = [.lightweight(fromVersion: TodosV1.self, toVersion: TodosV3.self)]
        }
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: TodosV1.self, Support.todos())
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV3.self, migrationPlan: Plan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .incompatibleSchema)
        #expect(error.entity == "Todo")
        #expect(error.field == "priority")
        #expect(error.description.contains("1.0.0 → 3.0.0"))
        #expect(error.description.contains("custom stage"))
        let state = try Support.schemaState(at: directory.path)
        #expect(state.version == SchemaVersion(1, 0, 0))
        #expect(state.migration == nil)
        let container = try ModelContainer(for: TodosV1.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        #expect(try Support.all(TodosV1.Todo.self, in: container).count == 10)
    }

    @Test func aCustomStageFillsANewFieldAndDropsRecords() throws {
        enum Plan: SchemaMigrationPlan {
            static let schemas: [any VersionedSchema.Type] = [TodosV2.self, TodosV3.self]
            static let stages: [MigrationStage] = [
                .custom(
                    fromVersion: TodosV2.self, toVersion: TodosV3.self,
                    migrations: [.transform(TodosV2.Todo.self, to: TodosV3.Todo.self, TodosV3.migrate)])
            ]
            static let migrationChunkSize = 4
        }
        let directory = StoreDirectory()
        let todos = (0..<11).map { number in
            TodosV2.Todo(
                id: UUID.timeOrdered(), title: number % 5 == 0 ? "obsolete \(number)" : "item \(number)",
                notes: "a b c", priority: number % 2 == 0 ? number : nil)
        }
        try Support.seed(directory.path, schema: TodosV2.self, todos)
        let reports = Mutex<[MigrationProgress]>([])
        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: Plan.self, configuration: Support.configuration(directory.path),
            migrationProgress: { progress in reports.withLock { $0.append(progress) } })
        defer { try? container.close() }
        let expected = try todos.compactMap(TodosV3.migrate)
        #expect(expected.count == 8)
        #expect(try Support.all(TodosV3.Todo.self, in: container) == expected)
        let byPriority = FetchDescriptor<TodosV3.Todo>(predicate: #Predicate { $0.priority == 0 })
        #expect(try ModelContext(container).explain(byPriority).contains("index priority"))
        #expect(try ModelContext(container).fetch(byPriority).count == expected.filter { $0.priority == 0 }.count)
        // 11 records in chunks of 4: three chunks, then the end of the stage.
        let progress = reports.withLock { $0 }
        #expect(progress.map(\.migratedRecords) == [4, 8, 11, 11])
        #expect(progress.map(\.isStageFinished) == [false, false, false, true])
        #expect(progress.first?.entity == "Todo")
        #expect(progress.first?.totalRecords == 11)
        let state = try Support.schemaState(container)
        #expect(state.history.map(\.kind) == ["custom"])
        #expect(state.history.first?.records == 11)
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    @Test func aCustomStageSplitsAnEntityInTwo() throws {
        let directory = StoreDirectory()
        let contacts = (0..<5).map {
            ContactsV1.Contact(name: "c\($0)", street: "\($0) Main St", city: "City \($0 % 2)")
        }
        try Support.seed(directory.path, schema: ContactsV1.self, contacts)
        let container = try ModelContainer(
            for: ContactsV2.self, migrationPlan: ContactsPlan.self,
            configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        let context = ModelContext(container)
        let migrated = try Support.all(ContactsV2.Contact.self, in: container)
        #expect(migrated.map(\.id) == contacts.map(\.id))
        #expect(migrated.map(\.name) == contacts.map(\.name))
        for (old, new) in zip(contacts, migrated) {
            let address = try #require(try context.model(for: new.addressID, as: ContactsV2.Address.self))
            #expect(address.street == old.street)
            #expect(address.city == old.city)
        }
        let inCity = FetchDescriptor<ContactsV2.Address>(predicate: #Predicate { $0.city == "City 0" })
        #expect(try context.explain(inCity).contains("index city"))
        #expect(try context.fetch(inCity).count == 3)
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    @Test func aCustomStageMovesRecordsToAnEntityOfAnotherName() throws {
        let directory = StoreDirectory()
        let items = (0..<5).map { ShopV1.Item(name: "item \($0)", cents: 250 * $0) }
        try Support.seed(directory.path, schema: ShopV1.self, items)
        let container = try ModelContainer(
            for: ShopV2.self, migrationPlan: ShopPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        #expect(
            try Support.all(ShopV2.Product.self, in: container)
                == items.map { ShopV2.Product(id: $0.id, name: $0.name, price: Double($0.cents) / 100) })
        let cheap = FetchDescriptor<ShopV2.Product>(predicate: #Predicate { $0.price < 5 })
        #expect(try ModelContext(container).explain(cheap).contains("index price"))
        #expect(try ModelContext(container).fetch(cheap).count == 2)
        #expect(try !Support.tableNames(container).contains { $0.contains("Item") })
        let entries = try container.environment.read { txn in
            try Catalog.read(EntityCatalog.self, key: Catalog.entityKey("Item"), in: txn, table: container.catalogTable)
        }
        #expect(entries == nil)
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    @Test func aFieldRenamedToANameAlreadyStoredIsRefused() throws {
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: ClashV1.self, [ClashV1.Note(heading: "h", title: "t")])
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: ClashV2.self, migrationPlan: ClashPlan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .incompatibleSchema)
        #expect(error.field == "title")
        #expect(error.description.contains("cannot rename Note.heading to title"))
        #expect(try Support.schemaState(at: directory.path).version == SchemaVersion(1, 0, 0))
    }

    @Test func aUniqueIndexThatTheMigratedRecordsBreakFailsTheOpenNamingIt() throws {
        let directory = StoreDirectory()
        let todos = ["same", "same", "other"].map { TodosV1.Todo(title: $0, notes: "") }
        try Support.seed(directory.path, schema: TodosV1.self, todos)
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        }
        #expect(error == .uniqueViolation)
        #expect(error.description.contains("unique index title"))
        // The records were migrated; the index stays not ready until the duplicates are resolved.
        let state = try Support.schemaState(at: directory.path)
        #expect(state.version == SchemaVersion(3, 0, 0))
        #expect(state.migration == nil)
    }

    @Test func aMigrationRunsAcrossThreeVersions() throws {
        let directory = StoreDirectory()
        // Written before the program versioned its schema: the store is taken to be at the first version.
        let todos = Support.todos()
        do {
            let container = try ModelContainer(
                for: TodosV1.Todo.self, configuration: Support.configuration(directory.path))
            let context = ModelContext(container)
            for todo in todos { context.insert(todo) }
            try context.save()
            try container.close()
        }
        #expect(try Support.schemaState(at: directory.path).version == nil)
        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        let expected = try todos.map { TodosV2.Todo(id: $0.id, title: $0.title, notes: $0.notes) }
            .compactMap(TodosV3.migrate)
        #expect(expected.count == 9)
        #expect(try Support.all(TodosV3.Todo.self, in: container) == expected)
        let state = try Support.schemaState(container)
        #expect(state.version == SchemaVersion(3, 0, 0))
        #expect(
            state.history.map { "\($0.from)→\($0.to) \($0.kind)" } == ["1.0.0→2.0.0 lightweight", "2.0.0→3.0.0 custom"])
        for record in state.history { #expect(record.started <= record.finished) }
        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
        // Opened again, the store is at the plan's last version: nothing runs.
        try container.close()
        let again = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        defer { try? again.close() }
        #expect(try Support.schemaState(again).history.count == 2)
    }

    @Test func aMigrationStopsAtTheSchemaItOpensWith() throws {
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: TodosV1.self, Support.todos())
        do {
            let container = try ModelContainer(
                for: TodosV2.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
            #expect(try Support.schemaState(container).version == SchemaVersion(2, 0, 0))
            #expect(try Support.all(TodosV2.Todo.self, in: container).count == 10)
            try container.close()
        }
        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        #expect(try Support.all(TodosV3.Todo.self, in: container).count == 9)
        #expect(try Support.schemaState(container).history.count == 2)
    }

    @Test func aNewStoreIsStampedWithTheLastVersion() throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        let state = try Support.schemaState(container)
        #expect(state.version == SchemaVersion(3, 0, 0))
        #expect(state.history.isEmpty)
    }

    @Test func aStoreOpenedWithModelTypesAloneOpensAsBefore() throws {
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: TodosV1.self, Support.todos())
        let container = try ModelContainer(
            for: TodosV2.Todo.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        #expect(try Support.all(TodosV2.Todo.self, in: container).count == 10)
        #expect(try Support.schemaState(container).version == SchemaVersion(1, 0, 0))
    }
}
