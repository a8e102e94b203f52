import Foundation
import KVStore
import LMDB
import Testing

@testable import KVToolCore

/// A model with external values, for kvtool's tests.
struct Photo: Model {
    var id = UUID.timeOrdered()
    var title: String
    var image = ExternalData()
    var thumbnail = ExternalData()

    static let entity = Entity<Photo>(externalStorage: [.attribute(\.image), .attribute(\.thumbnail)])
}

enum ExternalSample {
    static let photoID = fixedID(1, entity: 3)
    /// Two chunks and a bit.
    static let imageSize = 600_000
    static let image = Data((0..<imageSize).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 10) })

    static func makeStore(at path: String) throws {
        let container = try ModelContainer(
            for: Photo.self, configuration: ModelConfiguration(path: path, durability: .off))
        try container.write { txn in
            try txn.insert(Photo(id: photoID, title: "Dunes", image: ExternalData(image)))
        }
        try container.close()
    }

    /// The chunk key prefix of the photo's image, read from the store.
    static func imagePrefix(_ environment: Environment) throws -> (table: Table, prefix: [UInt8]) {
        let table = try environment.openTable(named: "external/Photo")
        let prefix = try environment.read { txn in
            var prefix: [UInt8]?
            try txn.scan(table) { key, _ in
                prefix = Array(key.prefix(36))
                return false
            }
            return try #require(prefix)
        }
        return (table, prefix)
    }

    static func chunkKey(_ prefix: [UInt8], _ index: UInt32) -> [UInt8] {
        var key = prefix
        withUnsafeBytes(of: index.bigEndian) { key.append(contentsOf: $0) }
        return key
    }
}

@Suite struct ExternalToolTests {
    static let extractHelp = """
        OVERVIEW: Write a record's external value to a file, chunk by chunk.

        USAGE: kvtool extract <path> <entity> <id> <attribute> <file> [--force] [--mode <mode>]

        ARGUMENTS:
          <path>                  The store's directory (the one that holds data.mdb).
          <entity>                The entity, as the catalog names it (see 'kvtool schema').
          <id>                    The ID of the record (a UUID).
          <attribute>             The external attribute, as the catalog names it.
          <file>                  The file to write; it must not exist, unless --force is given.

        OPTIONS:
          --force                 Replace the file if it exists; only a regular file of your own, never a
                                  link, FIFO or device.
          --mode <mode>           The permissions of the new file, in octal. (default: 0600, owner only)
          --version               Show the version.
          -h, --help              Show help information.

        The attribute must be one the entity keeps in external storage ('kvtool schema' lists them; 'get'
        shows each value's size). The chunks are read in one read transaction and written as they are read,
        so the value may be larger than memory. If a chunk is missing or of the wrong size, the command
        fails and leaves no file.

        The file is written under a temporary name beside it, flushed to disk and renamed into place only
        once complete, so a failure (a full disk, say) never leaves part of it. An existing file is replaced
        only with --force, and only a regular file of your own: never a symbolic link, a FIFO, a device, a
        directory or another user's file. The new file's mode is 0600 (owner only) unless --mode gives
        another.

        """

    static let usage = """
        Usage: kvtool extract <path> <entity> <id> <attribute> <file> [--force] [--mode <mode>]
          See 'kvtool help extract' for more information.

        """

    @Test func helpIsPinned() {
        #expect(kvtool("help", "extract") == RunResult(status: 0, output: Self.extractHelp, errors: ""))
        #expect(kvtool("extract", "--help") == RunResult(status: 0, output: Self.extractHelp, errors: ""))
    }

    @Test func extractWritesTheValue() throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        let file = store.sibling("image")
        let id = ExternalSample.photoID
        #expect(
            kvtool("extract", store.path, "Photo", id.uuidString, "image", file)
                == RunResult(
                    status: 0, output: "Wrote 600,000 bytes of Photo.image of \(id) to \(file)\n", errors: ""))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == ExternalSample.image)
        let empty = store.sibling("thumbnail")
        #expect(kvtool("extract", store.path, "Photo", id.uuidString, "thumbnail", empty).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
    }

    @Test func getSchemaAndCheckShowExternalValues() throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        let get = kvtool("get", store.path, "Photo", ExternalSample.photoID.uuidString)
        #expect(get.status == 0)
        #expect(get.output.contains(#""size" : 600000"#) || get.output.contains(#""size": 600000"#), "\(get.output)")
        let schema = kvtool("schema", store.path)
        #expect(schema.output.contains("  External storage:\n    image      chunks in external/Photo\n"))
        #expect(kvtool("schema", store.path, "--json").output.contains(#""externalStorage""#))
        let check = kvtool("check", store.path)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.hasPrefix("No problems"))
    }

    @Test func wrongArgumentsAreUsageErrors() throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        #expect(
            kvtool("extract", store.path, "Photo", "not-a-uuid", "image", store.sibling("out"))
                == RunResult(status: 64, output: "", errors: "Error: Malformed UUID 'not-a-uuid'\n" + Self.usage))
        let missingFile = kvtool("extract", store.path, "Photo", ExternalSample.photoID.uuidString, "image")
        #expect(missingFile.status == 64)
        #expect(missingFile.errors.hasSuffix(Self.usage))
    }

    @Test func aMissingModelOrAttributeFails() throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        let ghost = fixedID(9, entity: 3)
        let file = store.sibling("out")
        #expect(
            kvtool("extract", store.path, "Photo", ghost.uuidString, "image", file)
                == RunResult(status: 1, output: "", errors: "Error: Photo has no record with ID \(ghost)\n"))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(
            kvtool("extract", store.path, "Photo", ExternalSample.photoID.uuidString, "title", file)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: Photo.title is not an external attribute (image, thumbnail)\n"))
        #expect(kvtool("extract", store.path, "Nope", ghost.uuidString, "image", file).status == 1)
    }

    @Test func aMissingChunkFailsAndRemovesTheFile() throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        try withEnvironment(at: store.path) { environment in
            let (table, prefix) = try ExternalSample.imagePrefix(environment)
            _ = try environment.write { txn in try txn.delete(forKey: ExternalSample.chunkKey(prefix, 1), in: table) }
        }
        let id = ExternalSample.photoID
        let file = store.sibling("out")
        #expect(
            kvtool("extract", store.path, "Photo", id.uuidString, "image", file)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: Chunk 1 of 3 of Photo.image of \(id) is missing; run 'kvtool check \(store.path)'\n"
                ))
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}

/// `check` on stores whose external values were damaged through the LMDB binding.
@Suite struct ExternalCheckTests {
    private func checkDamaged(_ damage: (Environment, Table, [UInt8]) throws -> Void) throws -> RunResult {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        try withEnvironment(at: store.path) { environment in
            let (table, prefix) = try ExternalSample.imagePrefix(environment)
            try damage(environment, table, prefix)
        }
        return kvtool("check", store.path)
    }

    @Test func aMissingChunkIsAnError() throws {
        let result = try checkDamaged { environment, table, prefix in
            _ = try environment.write { txn in try txn.delete(forKey: ExternalSample.chunkKey(prefix, 2), in: table) }
        }
        #expect(result.status == 1)
        #expect(
            result.output.hasPrefix(
                "error: Photo \(ExternalSample.photoID): the external image (600000 bytes): chunk 2 of 3 is missing\n"),
            "\(result.output)")
    }

    @Test func aChunkOfTheWrongSizeIsAnError() throws {
        let result = try checkDamaged { environment, table, prefix in
            try environment.write { txn in
                try txn.put([1, 2, 3], forKey: ExternalSample.chunkKey(prefix, 0), in: table)
            }
        }
        #expect(result.status == 1)
        #expect(result.output.contains("chunk 0 holds 3 bytes instead of 262128"), "\(result.output)")
    }

    @Test func orphanChunksAreErrorsReportedOncePerValue() throws {
        let ghost = fixedID(7, entity: 3)
        let result = try checkDamaged { environment, table, prefix in
            var orphan = prefix
            withUnsafeBytes(of: ghost.uuid) { orphan.replaceSubrange(0..<16, with: $0) }
            let extra = ExternalSample.chunkKey(prefix, 3)
            try environment.write { txn in
                try txn.put([1], forKey: ExternalSample.chunkKey(orphan, 0), in: table)
                try txn.put([2], forKey: ExternalSample.chunkKey(orphan, 1), in: table)
                try txn.put([3], forKey: extra, in: table)
            }
        }
        #expect(result.status == 1)
        let errors = result.output.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(errors.count == 2, "\(result.output)")
        #expect(
            errors.contains {
                $0.hasPrefix("error: Photo \(ghost): orphan chunks of the external value")
                    && $0.hasSuffix("from chunk 0: its model does not exist")
            }, "\(result.output)")
        #expect(errors.contains { $0.hasSuffix("from chunk 3: image has only 3 chunks") }, "\(result.output)")
    }
}
