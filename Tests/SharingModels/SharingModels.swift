import Foundation
import KVStore

// The models of the multi-process tests: two versions of a note-taking program and scripts beside it, shared by the
// test helper executable (`SharingHelper`) and the tests that spawn it.

/// The first version: notes with a title index.
public enum NotesV1: VersionedSchema {
    public static let versionIdentifier = SchemaVersion(1, 0, 0)
    public static let models: [any Model.Type] = [Note.self]

    public struct Note: Model, Equatable {
        public var id = UUID.timeOrdered()
        public var title: String
        public var body: String

        public init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
            self.id = id
            self.title = title
            self.body = body
        }

        public static let entity = Entity<Note>(indexes: [.index(\.title)])
    }
}

/// The second version: every note gets a word count, filled by a custom stage.
public enum NotesV2: VersionedSchema {
    public static let versionIdentifier = SchemaVersion(2, 0, 0)
    public static let models: [any Model.Type] = [Note.self]

    public struct Note: Model, Equatable {
        public var id: UUID
        public var title: String
        public var body: String
        public var words: Int

        public init(id: UUID = UUID.timeOrdered(), title: String, body: String, words: Int) {
            self.id = id
            self.title = title
            self.body = body
            self.words = words
        }

        public static let entity = Entity<Note>(indexes: [.index(\.title), .index(\.words)])
    }
}

/// V1 to V2, slowed down by `NotesPlan.delayPerRecord` so that other processes meet it half-way.
public enum NotesPlan: SchemaMigrationPlan {
    public static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
    public static let stages: [MigrationStage] = [
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
    public static let migrationChunkSize = 10
}

/// A script's view of the same store: notes without any index, and without the program's version.
public struct PlainNote: Model, Equatable {
    public var id = UUID.timeOrdered()
    public var title: String
    public var body: String

    public init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    public static let entity = Entity<PlainNote>(name: "Note")
}

/// A program that keeps titles unique.
public struct UniqueNote: Model, Equatable {
    public var id = UUID.timeOrdered()
    public var title: String
    public var body: String

    public init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    public static let entity = Entity<UniqueNote>(name: "Note", indexes: [.unique(\.title)])
}

/// A script that declares the removal of the program's title index.
public struct TitleRemovingNote: Model, Equatable {
    public var id = UUID.timeOrdered()
    public var title: String
    public var body: String

    public init(id: UUID = UUID.timeOrdered(), title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }

    public static let entity = Entity<TitleRemovingNote>(name: "Note", removedIndexes: ["title"])
}

/// An attachment streamed in, for the tests of streamed writers killed part-way.
public struct Attachment: Model, Equatable {
    public var id = UUID.timeOrdered()
    public var name: String
    public var content = ExternalData()

    public init(id: UUID = UUID.timeOrdered(), name: String) {
        self.id = id
        self.name = name
    }

    public static let entity = Entity<Attachment>(externalStorage: [.attribute(\.content)])
}

/// The configuration every process of a test uses for the store at `path`.
public func sharingConfiguration(_ path: String, waitTimeout: Duration = .seconds(20)) -> ModelConfiguration {
    var configuration = ModelConfiguration(path: path, isDurable: false)
    configuration.migrationWaitTimeout = waitTimeout
    return configuration
}
