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
            for: Photo.self, configuration: ModelConfiguration(path: path, isDurable: false))
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
