import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

private enum ShelfV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Book.self]

    struct Book: Model {
        var id = UUID.timeOrdered()
        var title: String
    }
}

private enum ShelfV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Book.self]

    struct Book: Model {
        var id: UUID
        var title: String
        var letters: Int
    }
}

private struct BadBook: Error {}

private enum ShelfPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ShelfV1.self, ShelfV2.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: ShelfV1.self, toVersion: ShelfV2.self,
            migrations: [
                .transform(ShelfV1.Book.self, to: ShelfV2.Book.self) { old in
                    if old.title == "bad" { throw BadBook() }
                    return ShelfV2.Book(id: old.id, title: old.title, letters: old.title.count)
                }
            ])
    ]
    static let migrationChunkSize = 2
}

/// `info`, `schema` and `check` on stores with a schema version, migrated or part-way through a migration.
@Suite struct SchemaHistoryTests {
    private func makeStore(at path: String, titles: [String]) throws {
        let container = try ModelContainer(for: ShelfV1.self, configuration: ModelConfiguration(path: path))
        let context = ModelContext(container)
        for title in titles { context.insert(ShelfV1.Book(title: title)) }
        try context.save()
        try container.close()
    }

    private func migrate(_ path: String) throws {
        try ModelContainer(
            for: ShelfV2.self, migrationPlan: ShelfPlan.self, configuration: ModelConfiguration(path: path)
        ).close()
    }

    @Test func infoShowsTheVersionAndTheMigrationsApplied() throws {
        let store = TemporaryStore()
        try makeStore(at: store.path, titles: ["a", "bb", "ccc"])
        #expect(kvtool("info", store.path).output.contains("Schema version    1.0.0\n"))
        try migrate(store.path)
        let result = kvtool("info", store.path)
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[2] == "Schema version    2.0.0")
        #expect(!lines.contains { $0.contains("under way") })
        let header = try #require(lines.firstIndex { $0.hasPrefix("Migration ") })
        #expect(
            lines[header].split(separator: " ", omittingEmptySubsequences: true) == [
                "Migration", "Kind", "Records", "Started", "Finished",
            ])
        let row = lines[header + 2].split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(Array(row.prefix(5)) == ["1.0.0", "→", "2.0.0", "custom", "3"])
        #expect(row.count == 7 && row[5].hasPrefix("20") && row[6].hasPrefix("20"))
        #expect(kvtool("check", store.path).status == 0)
    }

    @Test func infoAndSchemaAsJSON() throws {
        let store = TemporaryStore()
        try makeStore(at: store.path, titles: ["a", "bb", "ccc"])
        try migrate(store.path)
        for command in ["info", "schema"] {
            let json = try JSONParser.parse(Array(kvtool(command, store.path, "--json").output.utf8))
            #expect(json[member: "schemaVersion"] == .string("2.0.0"))
            #expect(json[member: "migration"] == JSONValue.null)
            guard case .array(let history)? = json[member: "migrations"], let record = history.first else {
                Issue.record("no migrations in \(command)")
                continue
            }
            #expect(history.count == 1)
            #expect(record[member: "from"] == .string("1.0.0"))
            #expect(record[member: "to"] == .string("2.0.0"))
            #expect(record[member: "kind"] == .string("custom"))
            #expect(record[member: "records"] == .number("3"))
        }
    }

    @Test func schemaShowsTheVersionFirst() throws {
        let store = TemporaryStore()
        try makeStore(at: store.path, titles: ["a"])
        try migrate(store.path)
        let output = kvtool("schema", store.path).output
        #expect(output.hasPrefix("Schema version 2.0.0\nMigration"))
        #expect(
            output.contains("\n\nBook: 1 record\n  Fields:\n    id       uuid\n    title    string\n    letters  int\n")
        )
    }

    @Test func aMigrationUnderWayIsShownAndWarnedAbout() throws {
        let store = TemporaryStore()
        try makeStore(at: store.path, titles: ["a", "bb", "bad", "dddd"])
        #expect(throws: KVStoreError.migrationFailed) { try migrate(store.path) }
        let info = kvtool("info", store.path)
        #expect(
            info.output.contains(
                "Schema version    1.0.0\nMigration         1.0.0 → 2.0.0 (custom) under way: Book, 2 records migrated\n"
            ))
        let schema = kvtool("schema", store.path).output
        #expect(
            schema.hasPrefix(
                "Schema version 1.0.0\nMigration 1.0.0 → 2.0.0 (custom) under way: Book, 2 records migrated\n\n"))
        let json = try JSONParser.parse(Array(kvtool("info", store.path, "--json").output.utf8))
        #expect(json[member: "migration"]?[member: "records"] == .number("2"))
        #expect(json[member: "migration"]?[member: "entity"] == .string("Book"))
        let check = kvtool("check", store.path)
        #expect(check.status == 0)
        #expect(
            check.output.contains(
                "warning: A schema migration is under way (1.0.0 → 2.0.0 (custom) under way: Book, 2 records migrated)")
        )
    }
}
