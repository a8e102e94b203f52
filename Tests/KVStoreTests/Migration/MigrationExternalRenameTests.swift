import Foundation
import Testing

@testable import KVStore

/// Recordings with an external value that a later version renames.
enum RecordingsV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Recording.self]

    struct Recording: Model {
        var id = UUID.timeOrdered()
        var title: String
        var audio = ExternalData()

        static let entity = Entity<Recording>(externalStorage: [.attribute(\.audio)])
    }
}

/// `audio` is renamed `sound`.
enum RecordingsV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Recording.self]

    struct Recording: Model {
        var id: UUID
        var title: String
        var sound: ExternalData

        static let entity = Entity<Recording>(renamedFields: ["sound": "audio"], externalStorage: [.attribute(\.sound)])
    }
}

enum RecordingsPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [RecordingsV1.self, RecordingsV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: RecordingsV1.self, toVersion: RecordingsV2.self)]
}

@Suite struct MigrationExternalRenameTests {
    /// A renamed external field keeps its values: reading them, saving their models and writing new ones after the
    /// rename deletes nothing that a record refers to.
    @Test func aRenamedExternalFieldKeepsItsValuesThroughLaterSaves() throws {
        let directory = StoreDirectory()
        let recordings = (0..<3).map { number in
            RecordingsV1.Recording(
                title: "take \(number)", audio: ExternalData(Data(repeating: UInt8(number), count: 300_000)))
        }
        try MigrationSupport.seed(directory.path, schema: RecordingsV1.self, recordings)

        let container = try ModelContainer(
            for: RecordingsV2.self, migrationPlan: RecordingsPlan.self,
            configuration: MigrationSupport.configuration(directory.path))
        let context = ModelContext(container)
        let migrated = try context.fetch(FetchDescriptor<RecordingsV2.Recording>())
        #expect(migrated.count == 3)
        for recording in migrated {
            let number = Int(recording.title.dropFirst("take ".count)) ?? -1
            #expect(try context.data(for: \.sound, of: recording) == Data(repeating: UInt8(number), count: 300_000))
        }
        // Saving a model again, with its value unchanged or a new one, keeps every value its record refers to.
        try context.modify(RecordingsV2.Recording.self, id: migrated[0].id) { $0.title = "first take" }
        try context.modify(RecordingsV2.Recording.self, id: migrated[1].id) {
            $0.sound = ExternalData(Data(repeating: 9, count: 1_000))
        }
        try context.save()
        let fresh = ModelContext(container)
        let saved = try fresh.fetch(FetchDescriptor<RecordingsV2.Recording>())
        #expect(try fresh.data(for: \.sound, of: saved[0]) == Data(repeating: 0, count: 300_000))
        #expect(try fresh.data(for: \.sound, of: saved[1]) == Data(repeating: 9, count: 1_000))
        #expect(try fresh.data(for: \.sound, of: saved[2]) == Data(repeating: 2, count: 300_000))
        try container.close()
        let check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, "\(check.output)")
    }
}
