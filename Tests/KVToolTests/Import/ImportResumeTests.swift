import Foundation
import KVStore
import KVStoreInspection
import LMDB
import Testing

@testable import KVToolCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An import that fails part-way (a full disk, a killed process) leaves the store consistent with an entry saying how
/// far it got, and `--resume` finishes it.
///
/// Before: a failure left the chunks before it committed with no record of where the import stopped, and a killed
/// import's staged chunks would have been orphans that `check` reports.
@Suite struct ImportResumeTests {
    /// A store of `count` tasks and its export beside it.
    static func exportOfTasks(_ source: borrowing TemporaryStore, count: Int) throws -> String {
        try Sample.makeLargeStore(at: source.path, count: count)
        let file = source.sibling("tasks.jsonl")
        #expect(kvtool("export", source.path, "--output", file).status == 0)
        return file
    }

    /// A store of one photo with an image of `size` bytes, and its export beside it.
    static func exportOfPhoto(_ source: borrowing TemporaryStore, size: Int) throws -> (file: String, image: Data) {
        let image = ImportTesting.pattern(size, seed: 131)
        let container = try ModelContainer(
            for: Photo.self, configuration: ModelConfiguration(path: source.path, durability: .off))
        try container.write { txn in
            try txn.insert(Photo(id: ExternalSample.photoID, title: "Big", image: ExternalData(image)))
        }
        try container.close()
        let file = source.sibling("photo.jsonl")
        #expect(kvtool("export", source.path, "--output", file).status == 0)
        return (file, image)
    }

    /// The image stored for the sample photo.
    static func storedImage(_ path: String) throws -> Data {
        let container = try ModelContainer(for: Photo.self, configuration: ModelConfiguration(path: path))
        defer { try? container.close() }
        let photo = try #require(
            try container.read { txn in try txn.model(for: ExternalSample.photoID, as: Photo.self) })
        return try container.data(for: \.image, of: photo)
    }

    /// How many values the entity's staging table lists.
    static func stagedValues(_ path: String, entity: String) throws -> Int {
        let store = try InspectedStore.open(path)
        defer { store.close() }
        guard try store.tableNames().contains(Catalog.stagingTableName(entity)) else { return 0 }
        let staging = try store.environment.openTable(named: Catalog.stagingTableName(entity))
        return try store.environment.read { txn in try txn.count(of: staging) }
    }

    @Test(.enabled(if: isRoot, "mounting a tmpfs needs root"))
    func aFullDiskStopsTheImportConsistentlyAndResumeFinishesIt() throws {
        let source = TemporaryStore()
        let file = try Self.exportOfTasks(source, count: 1500)
        let disk = try TinyFileSystem(size: 256 << 10)
        let target = disk.path + "/store"
        let failed = kvtool("import", target, file, "--chunk-size", "100")
        #expect(failed.status == 1)
        #expect(failed.errors.contains("the disk is full"), "\(failed.errors)")
        #expect(
            failed.errors.hasSuffix(
                "committed and the store consistent; 'kvtool import --resume \(target) \(file)' finishes it\n"),
            "\(failed.errors)")
        let progress = try #require(try ImportTesting.progress(target))
        #expect(progress.written > 0 && progress.written < 1500)
        #expect(kvtool("count", target, "Task").output == "\(progress.written)\n")
        let check = kvtool("check", target)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("warning: The import of '\(file)' (started "), "\(check.output)")
        #expect(kvtool("import", target, file).errors.contains("Finish it with 'kvtool import --resume"))

        #expect(try runTool("/bin/mount", ["-o", "remount,size=16m", disk.path]) == 0)
        let resumed = kvtool("import", "--resume", target, file, "--chunk-size", "100")
        #expect(resumed.status == 0, "\(resumed.errors)")
        #expect(resumed.output == "Imported 1,500 records from \(file).\n")
        #expect(try ImportTesting.progress(target) == nil)
        #expect(try ImportTesting.export(target) == ImportTesting.export(source.path))
        #expect(kvtool("check", target) == kvtool("check", source.path))
    }

    /// A value larger than a transaction is staged: the disk fills part-way through it, `check` sees staged chunks
    /// (a warning, not an orphan), and the resume deletes them and writes the value again.
    @Test(.enabled(if: isRoot, "mounting a tmpfs needs root"))
    func aFullDiskInsideAStagedValueLeavesNoOrphans() throws {
        let source = TemporaryStore()
        let (file, image) = try Self.exportOfPhoto(source, size: 4 << 20)
        let disk = try TinyFileSystem(size: 2 << 20)
        let target = disk.path + "/store"
        let failed = kvtool("import", target, file, "--chunk-bytes", "262128")
        #expect(failed.status == 1, "\(failed.errors)")
        #expect(try Self.stagedValues(target, entity: "Photo") == 1)
        let check = kvtool("check", target)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("staged chunks of the external value"), "\(check.output)")

        #expect(try runTool("/bin/mount", ["-o", "remount,size=64m", disk.path]) == 0)
        let resumed = kvtool("import", "--resume", target, file, "--chunk-bytes", "262128")
        #expect(resumed.status == 0, "\(resumed.errors)")
        #expect(try Self.stagedValues(target, entity: "Photo") == 0)
        #expect(kvtool("check", target).output.hasPrefix("No problems: "))
        #expect(try Self.storedImage(target) == image)
    }

    /// Starts the built kvtool, waits until `ready` says so, and kills it with SIGKILL.
    static func killChild(_ arguments: [String], when ready: () throws -> Bool) throws {
        let process = Process()
        process.executableURL = try BinarySmokeTests.executable()
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline {
            if (try? ready()) == true { break }
            usleep(2000)
        }
        #expect(process.isRunning, "the import ended before it was killed")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
    }

    @Test func aKilledImportResumes() throws {
        let source = TemporaryStore()
        let file = try Self.exportOfTasks(source, count: 4000)
        let target = source.sibling("target")
        let scratch = source.sibling("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try Self.killChild(["import", target, file, "--chunk-size", "5", "--scratch-directory", scratch]) {
            try FileManager.default.fileExists(atPath: target + "/data.mdb")
                && (try ImportTesting.progress(target)?.written ?? 0) >= 50
        }
        let progress = try #require(try ImportTesting.progress(target))
        #expect(kvtool("count", target, "Task").output == "\(progress.written)\n")
        let check = kvtool("check", target)
        #expect(check.status == 0, "\(check.output)")

        let resumed = kvtool("import", "--resume", target, file, "--scratch-directory", scratch)
        #expect(resumed.status == 0, "\(resumed.errors)")
        #expect(try ImportTesting.export(target) == ImportTesting.export(source.path))
        #expect(kvtool("check", target) == kvtool("check", source.path))
    }

    @Test func anImportKilledInsideAStagedValueResumes() throws {
        let source = TemporaryStore()
        let (file, image) = try Self.exportOfPhoto(source, size: 12 << 20)
        let target = source.sibling("target")
        let scratch = source.sibling("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try Self.killChild(["import", target, file, "--chunk-bytes", "262128", "--scratch-directory", scratch]) {
            try FileManager.default.fileExists(atPath: target + "/data.mdb")
                && (try Self.stagedValues(target, entity: "Photo")) > 0
        }
        #expect(try Self.stagedValues(target, entity: "Photo") == 1)
        #expect(kvtool("check", target).status == 0)
        #expect(kvtool("count", target, "Photo").output == "0\n")

        let resumed = kvtool("import", "--resume", target, file, "--scratch-directory", scratch)
        #expect(resumed.status == 0, "\(resumed.errors)")
        #expect(try Self.stagedValues(target, entity: "Photo") == 0)
        #expect(kvtool("check", target).output.hasPrefix("No problems: "))
        #expect(try Self.storedImage(target) == image)
    }

    @Test func resumeWantsTheSameInputAndAbandonForgetsTheImport() throws {
        let source = TemporaryStore()
        let file = try Self.exportOfTasks(source, count: 300)
        let target = source.sibling("target")
        let scratch = source.sibling("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try Self.killChild(["import", target, file, "--chunk-size", "1", "--scratch-directory", scratch]) {
            try FileManager.default.fileExists(atPath: target + "/data.mdb")
                && (try ImportTesting.progress(target)?.written ?? 0) >= 10
        }
        let other = source.sibling("other.jsonl")
        try ImportTesting.write(["{}"], to: other)
        let wrong = kvtool("import", "--resume", target, other)
        #expect(wrong.status == 1)
        #expect(wrong.errors.contains("The input is not the one of the interrupted import"), "\(wrong.errors)")
        let written = try #require(try ImportTesting.progress(target)).written
        #expect(
            kvtool("import", "--abandon", target).output
                .hasSuffix("; the \(Formatting.count(written, "record")) it wrote stay.\n"))
        #expect(try ImportTesting.progress(target) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch) == [], "the killed import's scratch goes")
        #expect(kvtool("check", target).status == 0)
        #expect(!kvtool("check", target).output.contains("import"))
        #expect(kvtool("import", "--resume", target, file).errors.contains("has no interrupted import to resume"))
    }
}
