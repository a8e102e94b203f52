import Foundation
import Testing

@testable import KVStore

/// Pictures with two external attributes.
enum PicturesV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Picture.self]

    struct Picture: Model {
        var id = UUID.timeOrdered()
        var title: String
        var image = ExternalData()
        var raw = ExternalData()

        static let entity = Entity<Picture>(externalStorage: [.attribute(\.image), .attribute(\.raw)])
    }
}

/// Pictures keep `image`, lose `raw`, gain `width`.
enum PicturesV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Picture.self]

    struct Picture: Model {
        var id: UUID
        var title: String
        var image: ExternalData
        var width: Int

        static let entity = Entity<Picture>(externalStorage: [.attribute(\.image)])
    }
}

/// Pictures are gone.
enum PicturesV3Removed: VersionedSchema {
    static let versionIdentifier = SchemaVersion(3, 0, 0)
    static let models: [any Model.Type] = [Caption.self]

    struct Caption: Model {
        var id = UUID.timeOrdered()
        var text: String
    }
}

/// Pictures are renamed photos.
enum PicturesV3Renamed: VersionedSchema {
    static let versionIdentifier = SchemaVersion(3, 0, 0)
    static let models: [any Model.Type] = [Photo.self]

    struct Photo: Model {
        var id: UUID
        var title: String
        var image: ExternalData
        var width: Int

        static let entity = Entity<Photo>(originalName: "Picture", externalStorage: [.attribute(\.image)])
    }
}

/// Version 1 to 2 drops the pictures titled "drop" and the `raw` attribute.
let picturesStage = MigrationStage.custom(
    fromVersion: PicturesV1.self, toVersion: PicturesV2.self,
    migrations: [
        .transform(PicturesV1.Picture.self, to: PicturesV2.Picture.self) { old in
            old.title == "drop" ? nil : PicturesV2.Picture(id: old.id, title: old.title, image: old.image, width: 640)
        }
    ])

enum PicturesPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [PicturesV1.self, PicturesV2.self, PicturesV3Removed.self]
    static let stages: [MigrationStage] = [
        picturesStage, .lightweight(fromVersion: PicturesV2.self, toVersion: PicturesV3Removed.self),
    ]
}

enum PicturesRenamePlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [PicturesV1.self, PicturesV2.self, PicturesV3Renamed.self]
    static let stages: [MigrationStage] = [
        picturesStage, .lightweight(fromVersion: PicturesV2.self, toVersion: PicturesV3Renamed.self),
    ]
}

@Suite struct MigrationExternalTests {
    /// Three pictures, one to drop, each with an image and a raw value of its own bytes.
    static func seed(_ path: String) throws -> [PicturesV1.Picture] {
        let pictures = ["keep", "drop", "also keep"].enumerated().map { number, title in
            PicturesV1.Picture(
                title: title, image: ExternalData(Data(repeating: UInt8(number), count: 1_000 + number)),
                raw: ExternalData(Data(repeating: UInt8(100 + number), count: 300_000)))
        }
        try MigrationSupport.seed(path, schema: PicturesV1.self, pictures)
        return pictures
    }

    static func chunkCount(_ container: ModelContainer, entity: String) throws -> Int {
        let table = try container.environment.openTable(named: Catalog.externalTableName(entity))
        return try container.environment.read { txn in try txn.count(of: table) }
    }

    @Test func aCustomStageDeletesTheValuesOfDroppedRecordsAndDroppedAttributes() throws {
        let directory = StoreDirectory()
        let seeded = try Self.seed(directory.path)
        // Before: two values per picture; the raw ones take two chunks each.
        let container = try ModelContainer(
            for: PicturesV2.self, migrationPlan: PicturesPlan.self,
            configuration: MigrationSupport.configuration(directory.path))
        let pictures = try MigrationSupport.all(PicturesV2.Picture.self, in: container)
        #expect(pictures.map(\.title) == ["keep", "also keep"])
        for picture in pictures {
            let original = try #require(seeded.first { $0.id == picture.id })
            #expect(try container.data(for: \.image, of: picture).count == original.image.byteCount)
            #expect(try container.data(for: \.image, of: picture).first == UInt8(original.image.byteCount - 1_000))
        }
        // Only the kept pictures' images are left: one chunk each.
        #expect(try Self.chunkCount(container, entity: "Picture") == 2)
        try container.close()
        let check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, "\(check.output)")
    }

    @Test func aStageThatRemovesTheEntityDeletesItsExternalTables() throws {
        let directory = StoreDirectory()
        _ = try Self.seed(directory.path)
        let container = try ModelContainer(
            for: PicturesV3Removed.self, migrationPlan: PicturesPlan.self,
            configuration: MigrationSupport.configuration(directory.path))
        let tables = try MigrationSupport.tableNames(container)
        #expect(!tables.contains { $0.hasSuffix("/Picture") }, "\(tables)")
        try container.close()
        let check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, "\(check.output)")
    }

    @Test func renamingAnEntityWithExternalValuesIsRefusedAndLosesNothing() throws {
        let directory = StoreDirectory()
        _ = try Self.seed(directory.path)
        let configuration = MigrationSupport.configuration(directory.path)
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: PicturesV3Renamed.self, migrationPlan: PicturesRenamePlan.self, configuration: configuration)
        }
        #expect(error == .invalidMigrationPlan)
        #expect(error.entity == "Picture")
        #expect(error.message.contains("external values"))
        // The first stage ran; the refused one wrote nothing, and version 2 opens with its values.
        let container = try ModelContainer(
            for: PicturesV2.self, migrationPlan: PicturesRenamePlan.self, configuration: configuration)
        let pictures = try MigrationSupport.all(PicturesV2.Picture.self, in: container)
        #expect(pictures.count == 2)
        for picture in pictures { #expect(try container.data(for: \.image, of: picture).count >= 1_000) }
        try container.close()
        let check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, "\(check.output)")
    }
}

/// Clips with a recording each.
enum ClipsV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Clip.self]

    struct Clip: Model {
        var id = UUID.timeOrdered()
        var title: String
        var audio = ExternalData()

        static let entity = Entity<Clip>(externalStorage: [.attribute(\.audio)])
    }
}

/// The recording becomes optional.
enum ClipsV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Clip.self]

    struct Clip: Model {
        var id: UUID
        var title: String
        var audio: ExternalData?

        static let entity = Entity<Clip>(externalStorage: [.attribute(\.audio)])
    }
}

/// Version 1 to 2 carries the recordings, except those of the clips titled "silence", which it sets to `nil`.
enum ClipsPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ClipsV1.self, ClipsV2.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: ClipsV1.self, toVersion: ClipsV2.self,
            migrations: [
                .transform(ClipsV1.Clip.self, to: ClipsV2.Clip.self) { old in
                    ClipsV2.Clip(id: old.id, title: old.title, audio: old.title == "silence" ? nil : old.audio)
                }
            ])
    ]
}

@Suite struct MigrationOptionalExternalTests {
    @Test func aStageCarriesValuesIntoAnOptionalAttributeAndNilDeletesThem() throws {
        let directory = StoreDirectory()
        let clips = ["song", "silence", "speech"].enumerated().map { number, title in
            ClipsV1.Clip(title: title, audio: ExternalData(Data(repeating: UInt8(number), count: 300_000)))
        }
        try MigrationSupport.seed(directory.path, schema: ClipsV1.self, clips)
        let container = try ModelContainer(
            for: ClipsV2.self, migrationPlan: ClipsPlan.self,
            configuration: MigrationSupport.configuration(directory.path))
        let migrated = try MigrationSupport.all(ClipsV2.Clip.self, in: container)
        #expect(migrated.map(\.title) == ["song", "silence", "speech"])
        #expect(try container.data(for: \.audio, of: migrated[0]) == Data(repeating: 0, count: 300_000))
        #expect(migrated[1].audio == nil)
        #expect(try container.data(for: \.audio, of: migrated[1]) == nil)
        #expect(try container.data(for: \.audio, of: migrated[2]) == Data(repeating: 2, count: 300_000))
        // Two chunks for each value kept; the silenced clip's are gone.
        #expect(try MigrationExternalTests.chunkCount(container, entity: "Clip") == 4)

        // After the migration, setting a value to nil deletes it as any save does.
        var speech = migrated[2]
        speech.audio = nil
        try container.write { txn in try txn.insert(speech) }
        #expect(try MigrationExternalTests.chunkCount(container, entity: "Clip") == 2)
        try container.close()
        let check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, "\(check.output)")
    }
}
