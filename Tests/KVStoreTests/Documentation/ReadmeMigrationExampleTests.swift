import Foundation
import KVStore
import TestSupport
import Testing

// Example: begin migration models
enum NotesSchemaV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Note.self]

    struct Note: Model {
        var id = UUID.timeOrdered()
        var title: String
        var body: String
    }
}

enum NotesSchemaV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Note.self]

    struct Note: Model {
        var id: UUID
        var heading: String  // was `title`
        var body: String
        var pinned: Bool?  // new and optional

        static let entity = Entity<Note>(indexes: [.index(\.heading)], renamedFields: ["heading": "title"])
    }
}

enum NotesSchemaV3: VersionedSchema {
    static let versionIdentifier = SchemaVersion(3, 0, 0)
    static let models: [any Model.Type] = [Note.self]

    struct Note: Model {
        var id: UUID
        var heading: String
        var body: String
        var pinned: Bool
        var wordCount: Int  // new and not optional: filled by a custom stage

        static let entity = Entity<Note>(indexes: [.index(\.heading), .index(\.wordCount)])
    }
}

enum NotesMigrationPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [NotesSchemaV1.self, NotesSchemaV2.self, NotesSchemaV3.self]
    static let stages: [MigrationStage] = [
        .lightweight(fromVersion: NotesSchemaV1.self, toVersion: NotesSchemaV2.self),
        .custom(
            fromVersion: NotesSchemaV2.self, toVersion: NotesSchemaV3.self,
            migrations: [
                .transform(NotesSchemaV2.Note.self, to: NotesSchemaV3.Note.self) { old in
                    guard !old.body.isEmpty else { return nil }  // drops empty notes
                    return NotesSchemaV3.Note(
                        id: old.id, heading: old.heading, body: old.body, pinned: old.pinned ?? false,
                        wordCount: old.body.split(separator: " ").count)
                }
            ]),
    ]
}
// Example: end migration models

/// The migration example of README.md, as it is written there.
@Suite struct ReadmeMigrationExampleTests {
    @Test func migrationExample() throws {
        let directory = StoreDirectory()
        let path = directory.path
        let old = try ModelContainer(for: NotesSchemaV1.self, configuration: ModelConfiguration(path: path))
        let oldContext = ModelContext(old)
        oldContext.insert(NotesSchemaV1.Note(title: "Groceries", body: "eggs milk bread"))
        oldContext.insert(NotesSchemaV1.Note(title: "Empty", body: ""))
        try oldContext.save()
        try old.close()

        // Example: begin migration example
        let container = try ModelContainer(
            for: NotesSchemaV3.self, migrationPlan: NotesMigrationPlan.self,
            configuration: ModelConfiguration(path: path),
            migrationProgress: { progress in
                print("\(progress.fromVersion) → \(progress.toVersion): \(progress.migratedRecords) records")
            })
        let notes = try ModelContext(container).fetch(FetchDescriptor<NotesSchemaV3.Note>())
        // notes.map(\.heading) == ["Groceries"], notes.map(\.wordCount) == [3]
        // Example: end migration example

        #expect(notes.map(\.heading) == ["Groceries"])
        #expect(notes.map(\.wordCount) == [3])
        #expect(notes.map(\.pinned) == [false])
        try container.close()
    }

    @Test func readmeShowsTheMigrationExamplesAsTested() throws {
        #expect(
            try documentationDifferences([("migration models", 0), ("migration example", 8)], testedIn: #filePath) == []
        )
    }
}
