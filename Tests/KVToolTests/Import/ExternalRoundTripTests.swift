import Foundation
import KVStore
import Testing

@testable import KVToolCore

/// External values travel with their records: export writes their chunks as lines, import stores them again.
@Suite struct ExternalRoundTripTests {
    /// Values of 0 bytes, of less than a chunk, of exactly one chunk and of several chunks and a bit.
    static let sizes = [0, 1, 262_128, 3 * 262_128 + 5, 2_500_000]

    static func bytes(_ count: Int, seed: UInt8) -> Data {
        ImportTesting.pattern(count, seed: UInt64(seed) + 1)
    }

    static func makeStore(at path: String) throws -> [Photo] {
        let photos = sizes.enumerated().map { offset, size in
            Photo(
                id: fixedID(UInt8(offset + 1), entity: 3), title: "Photo \(offset)",
                image: ExternalData(bytes(size, seed: UInt8(offset))),
                thumbnail: ExternalData(bytes(offset * 1000, seed: 0x5A)))
        }
        let container = try ModelContainer(
            for: Photo.self, configuration: ModelConfiguration(path: path, durability: .off))
        try container.write { txn in
            for photo in photos { try txn.insert(photo) }
        }
        try container.close()
        return photos
    }

    /// Before: import reported success and stored the descriptors without their chunks, so `check` failed and the
    /// program could not read the values.
    @Test func externalValuesSurviveExportAndImportIntoANewStore() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        let photos = try Self.makeStore(at: source.path)
        let file = source.sibling("photos.jsonl")
        let exported = kvtool("export", source.path, "--output", file)
        #expect(
            exported.output == "Exported 5 records of 1 entity and 20 chunks of their external values to \(file).\n")
        let imported = kvtool("import", target.path, file)
        #expect(imported.errors == "")
        #expect(
            imported.output
                == "Created the store at '\(target.path)'.\nCreated Photo from the export's catalog.\n"
                + "Imported 5 records and 10 external values (3.4 MiB) from \(file).\n")
        #expect(imported.status == 0)
        #expect(try ImportTesting.export(target.path) == ImportTesting.export(source.path))
        ImportTesting.expectClean(target.path)

        let container = try ModelContainer(for: Photo.self, configuration: ModelConfiguration(path: target.path))
        defer { try? container.close() }
        for (offset, photo) in photos.enumerated() {
            let stored = try #require(try container.read { txn in try txn.model(for: photo.id, as: Photo.self) })
            #expect(try container.data(for: \.image, of: stored) == Self.bytes(Self.sizes[offset], seed: UInt8(offset)))
            #expect(try container.data(for: \.thumbnail, of: stored) == Self.bytes(offset * 1000, seed: 0x5A))
        }
    }

    @Test func chunkLinesFollowTheirRecordInFieldOrder() throws {
        let source = TemporaryStore()
        _ = try Self.makeStore(at: source.path)
        let lines = kvtool("export", source.path).output.split(separator: "\n").map(String.init)
        // Photo 2: one chunk of image (1 byte), one of thumbnail (1,000 bytes).
        let second = try #require(lines.firstIndex { $0.contains(#""record":{"id":"\#(fixedID(2, entity: 3))""#) })
        #expect(
            lines[second + 1].hasPrefix(
                #"{"kind":"chunk","entity":"Photo","id":"\#(fixedID(2, entity: 3))","field":"image","index":0,"data":""#
            ))
        #expect(
            lines[second + 2].hasPrefix(
                #"{"kind":"chunk","entity":"Photo","id":"\#(fixedID(2, entity: 3))","field":"thumbnail","index":0,"data":""#
            ))
        #expect(lines[second + 3].hasPrefix(#"{"kind":"record""#))
        #expect(lines.last?.hasPrefix(#"{"kind":"end","records":5,"chunks":20,"#) == true)
    }
}

/// A note with an optional external attachment, as SwiftData's `@Attribute(.externalStorage) var data: Data?` ports.
struct AttachedNote: Model {
    var id = UUID.timeOrdered()
    var title: String
    var attachment: ExternalData?

    static let entity = Entity<AttachedNote>(externalStorage: [.attribute(\.attachment)])
}

@Suite struct OptionalExternalToolTests {
    @Test func checkExportAndImportKeepOptionalValuesAndNil() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        let notes = [
            AttachedNote(
                id: fixedID(1, entity: 5), title: "with", attachment: ExternalData(Data(repeating: 7, count: 300_000))),
            AttachedNote(id: fixedID(2, entity: 5), title: "without"),
            AttachedNote(id: fixedID(3, entity: 5), title: "cleared", attachment: ExternalData(Data([1, 2, 3]))),
        ]
        do {
            let container = try ModelContainer(
                for: AttachedNote.self, configuration: ModelConfiguration(path: source.path, durability: .off))
            try container.write { txn in
                for note in notes { try txn.insert(note) }
            }
            var cleared = try #require(
                try container.read { txn in try txn.model(for: notes[2].id, as: AttachedNote.self) })
            cleared.attachment = nil
            try container.write { txn in try txn.insert(cleared) }
            try container.close()
        }
        ImportTesting.expectClean(source.path)
        let check = kvtool("check", source.path)
        #expect(check.status == 0)

        let file = source.sibling("notes.jsonl")
        let exported = kvtool("export", source.path, "--output", file)
        #expect(
            exported.output == "Exported 3 records of 1 entity and 2 chunks of their external values to \(file).\n")
        let imported = kvtool("import", target.path, file)
        #expect(imported.errors == "")
        #expect(imported.status == 0)
        #expect(try ImportTesting.export(target.path) == ImportTesting.export(source.path))
        ImportTesting.expectClean(target.path)

        let container = try ModelContainer(for: AttachedNote.self, configuration: ModelConfiguration(path: target.path))
        defer { try? container.close() }
        let stored = try container.read { txn in try txn.models(for: notes.map(\.id), as: AttachedNote.self) }
        #expect(
            try container.data(for: \.attachment, of: try #require(stored[0])) == Data(repeating: 7, count: 300_000))
        #expect(try #require(stored[1]).attachment == nil)
        #expect(try #require(stored[2]).attachment == nil)
    }
}
