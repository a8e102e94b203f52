import Foundation
import KVStore

// The models of the multi-process tests: two versions of a note-taking program and scripts beside it, shared by the
// test helper executable (`SharingHelper`) and the tests that spawn it.

/// The first version: notes with a title index.
package enum NotesV1: VersionedSchema {
    package static let versionIdentifier = SchemaVersion(1, 0, 0)
    package static let models: [any Model.Type] = [Note.self]

    package struct Note: Model, Equatable {
        package var id = UUID.timeOrdered()
        package var title: String
        package var body: String

        package init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
            self.id = id
            self.title = title
            self.body = body
        }

        package static let entity = Entity<Note>(indexes: [.index(\.title)])
    }
}

/// The second version: every note gets a word count, filled by a custom stage.
package enum NotesV2: VersionedSchema {
    package static let versionIdentifier = SchemaVersion(2, 0, 0)
    package static let models: [any Model.Type] = [Note.self]

    package struct Note: Model, Equatable {
        package var id: UUID
        package var title: String
        package var body: String
        package var words: Int

        package init(id: UUID = UUID.timeOrdered(), title: String, body: String, words: Int) {
            self.id = id
            self.title = title
            self.body = body
            self.words = words
        }

        package static let entity = Entity<Note>(indexes: [.index(\.title), .index(\.words)])
    }
}

/// V1 to V2, slowed down by `NotesPlan.delayPerRecord` so that other processes meet it half-way.
package enum NotesPlan: SchemaMigrationPlan {
    package static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
    package static let stages: [MigrationStage] = [
        .custom(
            fromVersion: NotesV1.self, toVersion: NotesV2.self,
            migrations: [
                .transform(NotesV1.Note.self, to: NotesV2.Note.self) { old in
                    let delay = ProcessInfo.processInfo.environment["SHARING_DELAY_US"].flatMap { UInt32($0) } ?? 0
                    if delay > 0 { usleep(delay) }
                    return NotesV2.Note(
                        id: old.id, title: old.title, body: old.body, words: old.body.split(separator: " ").count)
                }
            ])
    ]
    package static let migrationChunkSize = 10
}

/// A script's view of the same store: notes without any index, and without the program's version.
package struct PlainNote: Model, Equatable {
    package var id = UUID.timeOrdered()
    package var title: String
    package var body: String

    package init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    package static let entity = Entity<PlainNote>(name: "Note")
}

/// A program that keeps titles unique.
package struct UniqueNote: Model, Equatable {
    package var id = UUID.timeOrdered()
    package var title: String
    package var body: String

    package init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    package static let entity = Entity<UniqueNote>(name: "Note", indexes: [.unique(\.title)])
}

/// A script that declares the removal of the program's title index.
package struct TitleRemovingNote: Model, Equatable {
    package var id = UUID.timeOrdered()
    package var title: String
    package var body: String

    package init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    package static let entity = Entity<TitleRemovingNote>(name: "Note", removedIndexes: ["title"])
}

/// An attachment streamed in, for the tests of streamed writers killed part-way.
package struct Attachment: Model, Equatable {
    package var id = UUID.timeOrdered()
    package var name: String
    package var content = ExternalData()

    package init(id: UUID = UUID.timeOrdered(), name: String) {
        self.id = id
        self.name = name
    }

    package static let entity = Entity<Attachment>(externalStorage: [.attribute(\.content)])
}

/// The configuration every process of a test uses for the store at `path`.
package func sharingConfiguration(_ path: String, waitTimeout: Duration = .seconds(20)) -> ModelConfiguration {
    var configuration = ModelConfiguration(path: path, durability: .off)
    configuration.migrationWaitTimeout = waitTimeout
    return configuration
}

/// A note whose title is unique and merges on conflict: a second note of a title updates the stored one.
package struct UpsertNote: Model, Equatable {
    package var id = UUID.timeOrdered()
    package var title: String
    package var body: String

    package init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    package static let entity = Entity<UpsertNote>(indexes: [.unique(\.title, onConflict: .update)])
}

/// A note with tags whose names are field names: a save with a tag no save had before interns a new name in the
/// catalog, so a writer of new tags changes the catalog on every save.
package struct TaggedNote: Model, Equatable {
    package var id = UUID.timeOrdered()
    package var title: String
    package var tags: Tags

    package init(id: UUID = UUID.timeOrdered(), title: String, tags: [String: Int]) {
        self.id = id
        self.title = title
        self.tags = Tags(values: tags)
    }

    package static let entity = Entity<TaggedNote>(indexes: [.index(\.title)])

    /// Values coded under their names as keys, which the record encoder interns as field names (a dictionary's keys
    /// it does not).
    package struct Tags: Codable, Equatable, Sendable {
        package var values: [String: Int]

        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(values: [String: Int]) { self.values = values }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            values = [:]
            for key in container.allKeys { values[key.stringValue] = try container.decode(Int.self, forKey: key) }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                try container.encode(value, forKey: Key(stringValue: name))
            }
        }
    }
}
