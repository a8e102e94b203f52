import Foundation
import Testing

@testable import KVToolCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every byte kvtool writes is checked: a write that fails (a full disk, a closed pipe) ends the command with a
/// message naming the output and exit status 1, never exit status 0 with output cut short.
@Suite struct OutputWriteTests {
    /// The message of a full standard output.
    static let fullStandardOutput =
        "Error: Cannot write to standard output: no space left on the device (ENOSPC): the disk is full; "
        + "the output is incomplete\n"

    /// Each command that prints results, with its arguments after the store's path.
    static let printingCommands: [[String]] = [
        ["export"], ["list", "Task", "--json"], ["list", "Task", "--table"],
        ["get", "Task", fixedID(1, entity: 2).uuidString], ["schema"], ["schema", "--json"], ["info"],
        ["info", "--json"], ["count", "Task"], ["check"], ["readers"],
    ]

    @Test(arguments: printingCommands)
    func aFullStandardOutputFailsEveryCommand(_ command: [String]) throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        defer { close(full) }
        let result = kvtool(arguments: [command[0], store.path] + command.dropFirst(), outputDescriptor: full)
        #expect(result.status == 1, "\(command)")
        #expect(result.errors == Self.fullStandardOutput, "\(command)")
    }

    @Test func theBuiltBinaryReportsAFullStandardOutput() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? full.close() }
        let result = try runBinary(["export", store.path], stdout: full)
        #expect(result.status == 1)
        #expect(result.errors == Self.fullStandardOutput)
    }

    @Test func aClosedPipeEndsTheCommandWithAnError() throws {
        let store = TemporaryStore()
        try Sample.makeLargeStore(at: store.path, count: 300)
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        // The reading end is closed before kvtool starts, so its first write finds no reader: EPIPE, or SIGPIPE
        // when the executable does not ignore it.
        close(ends[0])
        let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        let result = try runBinary(["export", store.path], stdout: writer)
        try writer.close()
        #expect(result.status == 1, "killed by a signal when above 128: \(result.status)")
        #expect(
            result.errors
                == "Error: Cannot write to standard output: the pipe's reader has gone (EPIPE: broken pipe); "
                + "the output is incomplete\n")
    }

    @Test(.enabled(if: isRoot, "mounting a tmpfs needs root"))
    func aFullDiskFailsAnExportAndLeavesNothing() throws {
        let store = TemporaryStore()
        try Sample.makeLargeStore(at: store.path)
        let disk = try TinyFileSystem(size: 64 << 10)
        let file = disk.path + "/tasks.jsonl"
        let result = kvtool("export", store.path, "--output", file)
        #expect(result.status == 1)
        #expect(
            result.errors
                == "Error: Cannot write '\(file)': no space left on the device (ENOSPC): the disk is full; "
                + "'\(file)' was not created\n")
        #expect(try disk.contents() == [], "the temporary file is removed")
    }

    @Test(.enabled(if: isRoot, "mounting a tmpfs needs root"))
    func aFullDiskFailsAnExtractAndLeavesNothing() throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        let disk = try TinyFileSystem(size: 64 << 10)
        let file = disk.path + "/image"
        let result = kvtool("extract", store.path, "Photo", ExternalSample.photoID.uuidString, "image", file)
        #expect(result.status == 1)
        #expect(
            result.errors
                == "Error: Cannot write '\(file)': no space left on the device (ENOSPC): the disk is full; "
                + "'\(file)' was not created\n")
        #expect(try disk.contents() == [])
    }

    @Test(.enabled(if: isRoot, "mounting a tmpfs needs root"))
    func aCopyThatFailsPartWayLeavesNothing() throws {
        let store = TemporaryStore()
        try Sample.makeLargeStore(at: store.path)
        let disk = try TinyFileSystem(size: 64 << 10)
        let destination = disk.path + "/backup"
        for flags in [[], ["--compact"]] {
            let result = kvtool(arguments: ["copy", store.path, destination] + flags)
            #expect(result.status == 1, "\(flags)")
            #expect(
                result.errors
                    == "Error: Cannot copy the store to '\(destination)': no space left on the device (ENOSPC): "
                    + "the disk is full; '\(destination)' was not created\n", "\(flags)")
            #expect(try disk.contents() == [], "no partial data.mdb, no directory: \(flags)")
        }
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        let result = kvtool("copy", store.path, destination)
        #expect(result.status == 1)
        #expect(
            result.errors
                == "Error: Cannot copy the store to '\(destination)': no space left on the device (ENOSPC): the disk "
                + "is full; no data.mdb was left in '\(destination)'\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == [], "the directory stays empty")
    }

    @Test(.enabled(if: isRoot, "mounting a tmpfs needs root"))
    func aFullDiskDuringAnImportReadsAsAFullDisk() throws {
        let source = TemporaryStore()
        try Sample.makeLargeStore(at: source.path)
        let export = source.sibling("tasks.jsonl")
        #expect(kvtool("export", source.path, "--output", export).status == 0)
        let disk = try TinyFileSystem(size: 192 << 10)
        let store = disk.path + "/store"
        try Sample.makeStore(at: store, projects: [], tasks: [])
        let result = kvtool("import", store, export)
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("Error: "), "\(result.errors)")
        #expect(result.errors.contains("the disk is full"), "\(result.errors)")
        #expect(!result.errors.contains("Input/output error"), "\(result.errors)")
    }

    @Test func aFailedFlushAtTheEndIsReported() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        defer { close(full) }
        // `count` prints one short line, which stays in the buffer until the final flush.
        let result = kvtool(arguments: ["count", store.path, "Task"], outputDescriptor: full)
        #expect(result.status == 1)
        #expect(result.errors == Self.fullStandardOutput)
    }
}
