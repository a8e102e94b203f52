import Foundation
import LMDB
import Testing

@testable import KVStore

/// A checklist whose items have a `done` at the top level and in their nested steps.
enum ChecklistV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Item.self]

    struct Step: Codable, Equatable, Sendable {
        var text: String
        var done: Bool
    }

    struct Item: Model, Equatable {
        var id = UUID.timeOrdered()
        var title: String
        var done: Bool
        var steps: [Step]
        var review: Step

        static let entity = Entity<Item>(indexes: [.index(\.done)])
    }
}

/// The item's own `done` is renamed `isDone`; its steps keep their `done`.
enum ChecklistV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Item.self]

    struct Item: Model, Equatable {
        var id: UUID
        var title: String
        var isDone: Bool
        var steps: [ChecklistV1.Step]
        var review: ChecklistV1.Step

        static let entity = Entity<Item>(indexes: [.index(\.isDone)], renamedFields: ["isDone": "done"])
    }
}

/// A memo whose `title` the previous code renamed `heading`, in a table shared with nested values.
private struct MemoV1: Model {
    var id = UUID.timeOrdered()
    var title: String

    static let entity = Entity<MemoV1>(name: "Memo")
}

private struct MemoV2: Model {
    var id: UUID
    var heading: String

    static let entity = Entity<MemoV2>(name: "Memo")
}

enum ChecklistPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ChecklistV1.self, ChecklistV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ChecklistV1.self, toVersion: ChecklistV2.self)]
    static let migrationChunkSize = 2
}

/// Field renames apply to the field they name, as SwiftData's `@Attribute(originalName:)` does.
@Suite struct MigrationRenameTests {
    typealias Support = MigrationSupport

    /// Items whose steps and review are done exactly when the item is not.
    static func items(count: Int) -> [ChecklistV1.Item] {
        (0..<count).map { number in
            let done = number % 2 == 0
            return ChecklistV1.Item(
                title: "item \(number)", done: done,
                steps: [.init(text: "step \(number)", done: !done), .init(text: "check", done: !done)],
                review: .init(text: "review \(number)", done: !done))
        }
    }

    static func migrated(_ item: ChecklistV1.Item) -> ChecklistV2.Item {
        ChecklistV2.Item(id: item.id, title: item.title, isDone: item.done, steps: item.steps, review: item.review)
    }

    @Test func renamingATopLevelFieldLeavesTheNestedFieldsOfTheSameName() throws {
        let directory = StoreDirectory()
        let old = Self.items(count: 5)
        try Support.seed(directory.path, schema: ChecklistV1.self, old)

        let container = try ModelContainer(
            for: ChecklistV2.self, migrationPlan: ChecklistPlan.self,
            configuration: Support.configuration(directory.path))
        #expect(try Support.all(ChecklistV2.Item.self, in: container) == old.map(Self.migrated))

        // Records written after the rename read beside the old ones, before and after the store is reopened.
        let new = [
            ChecklistV2.Item(
                id: UUID.timeOrdered(), title: "new done", isDone: true, steps: [.init(text: "s", done: false)],
                review: .init(text: "r", done: false)),
            ChecklistV2.Item(
                id: UUID.timeOrdered(), title: "new open", isDone: false, steps: [.init(text: "s", done: true)],
                review: .init(text: "r", done: true)),
        ]
        let context = ModelContext(container)
        for item in new { context.insert(item) }
        try context.save()
        let expected = old.map(Self.migrated) + new
        #expect(try Support.all(ChecklistV2.Item.self, in: container) == expected)
        try container.close()

        let reopened = try ModelContainer(
            for: ChecklistV2.self, migrationPlan: ChecklistPlan.self,
            configuration: Support.configuration(directory.path))
        defer { try? reopened.close() }
        #expect(try Support.all(ChecklistV2.Item.self, in: reopened) == expected)

        // The index on the renamed field holds the old records and the new ones under their values.
        let done = FetchDescriptor<ChecklistV2.Item>(predicate: #Predicate { $0.isDone == true })
        let reopenedContext = ModelContext(reopened)
        #expect(try reopenedContext.explain(done).contains("index isDone"))
        #expect(
            Set(try reopenedContext.fetch(done).map(\.id)) == Set(expected.filter(\.isDone).map(\.id)))
        let open = FetchDescriptor<ChecklistV2.Item>(predicate: #Predicate { $0.isDone == false })
        #expect(Set(try reopenedContext.fetch(open).map(\.id)) == Set(expected.filter { !$0.isDone }.map(\.id)))

        let check = Support.check(directory.path)
        #expect(check.isConsistent, Comment(rawValue: check.output))
    }

    @Test func aRenameKeepsTheRecordsAndStampsTheFormatThatScopesNames() throws {
        let directory = StoreDirectory()
        try Support.seed(directory.path, schema: ChecklistV1.self, Self.items(count: 3))
        // The store as the code before scoped renames wrote it too: format 2, a field table of names and kinds.
        let before = try Self.raw(at: directory.path)
        #expect(before.format.formatVersion == 2)
        #expect(!before.entryJSON.contains("topLevelNames"))
        let doneID = try #require(before.entry.fields.existingID(for: "done", in: .topLevel))

        try ModelContainer(
            for: ChecklistV2.self, migrationPlan: ChecklistPlan.self,
            configuration: Support.configuration(directory.path)
        ).close()
        let after = try Self.raw(at: directory.path)
        #expect(after.records == before.records)
        #expect(after.entry.fields.existingID(for: "isDone", in: .topLevel) == doneID)
        #expect(after.entry.fields.existingID(for: "done", in: .topLevel) == nil)
        #expect(after.entry.fields.existingID(for: "done", in: .nested) == doneID)
        #expect(after.entry.fields.names == before.entry.fields.names)
        // Programs that read format 2 at most would read `isDone` as `done`, and drop the new name: they refuse it.
        #expect(after.format.formatVersion == 3)
        #expect(after.format.created == before.format.created)
    }

    @Test func aStoreRenamedByThePreviousCodeReadsAsBefore() throws {
        let directory = StoreDirectory()
        let memo = MemoV1(title: "kept")
        do {
            let container = try ModelContainer(for: MemoV1.self, configuration: Support.configuration(directory.path))
            let context = ModelContext(container)
            context.insert(memo)
            try context.save()
            try container.close()
        }
        // The previous code renamed a field in `names`, for nested values too, and wrote no top-level names.
        do {
            let environment = try Environment.open(path: directory.path)
            defer { try? environment.close() }
            let catalog = try environment.openTable(named: Catalog.tableName)
            try environment.write { txn in
                let key = Catalog.entityKey("Memo")
                var entry = try #require(try Catalog.read(EntityCatalog.self, key: key, in: txn, table: catalog))
                #expect(entry.fields.names == ["id", "title"])
                let json = #"{"kinds":[10,7],"names":["id","heading"]}"#
                entry.fields = try JSONDecoder().decode(FieldTable.self, from: Data(json.utf8))
                try Catalog.write(entry, key: key, in: txn, table: catalog)
            }
        }
        let container = try ModelContainer(for: MemoV2.self, configuration: Support.configuration(directory.path))
        defer { try? container.close() }
        let memos = try ModelContext(container).fetch(FetchDescriptor<MemoV2>())
        #expect(memos.map(\.heading) == ["kept"])
        #expect(memos.map(\.id) == [memo.id])
        let format = try container.environment.read { txn in
            try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: container.catalogTable)
        }
        #expect(format?.formatVersion == 2)
    }

    /// The store's format entry, the entity entry of the checklist items (decoded and as JSON) and the records.
    static func raw(
        at path: String
    ) throws -> (
        format: StoreFormat, entry: EntityCatalog, entryJSON: String, records: [[UInt8]]
    ) {
        let environment = try Environment.open(path: path)
        defer { try? environment.close() }
        let catalog = try environment.openTable(named: Catalog.tableName)
        let records = try environment.openTable(named: Catalog.recordTableName("Item"))
        return try environment.read { txn in
            let key = Catalog.entityKey("Item")
            let format = try #require(
                try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: catalog))
            let entry = try #require(try Catalog.read(EntityCatalog.self, key: key, in: txn, table: catalog))
            let json = try txn.withBytes(forKey: key, in: catalog) { bytes in
                String(decoding: try Catalog.json(of: try #require(bytes), key: key), as: UTF8.self)
            }
            var values: [[UInt8]] = []
            try txn.scan(records) { _, value in
                values.append(Array(value))
                return true
            }
            return (format, entry, json, values)
        }
    }
}
