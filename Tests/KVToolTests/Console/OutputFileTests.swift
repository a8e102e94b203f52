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

/// The subcommands that write a file, and how each is run for the tests.
enum FileWritingCommand: String, CaseIterable, CustomTestStringConvertible {
    case export, extract, copy

    var testDescription: String { rawValue }

    /// Writes a store this command can read.
    func makeStore(at path: String) throws {
        switch self {
        case .export, .copy: try Sample.makeStore(at: path)
        case .extract: try ExternalSample.makeStore(at: path)
        }
    }

    /// The target of the command for the output file `file`: the file itself, or for `copy` its directory.
    func target(for file: String) -> String {
        self == .copy ? (file as NSString).deletingLastPathComponent : file
    }

    /// The arguments that write the output file `file`, with `extra` options.
    func arguments(store: String, file: String, _ extra: [String] = []) -> [String] {
        switch self {
        case .export: ["export", store, "--output", file] + extra
        case .extract: ["extract", store, "Photo", ExternalSample.photoID.uuidString, "image", file] + extra
        case .copy: ["copy", store, target(for: file)] + extra
        }
    }

    /// A fresh path for the output file, in a fresh directory for `copy`.
    func outputFile(beside store: borrowing TemporaryStore) throws -> String {
        guard self == .copy else { return store.sibling("output") }
        let directory = store.sibling("copy")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        return directory + "/data.mdb"
    }

    /// Whether `file` holds what the command writes.
    func wrote(_ file: String) throws -> Bool {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        switch self {
        case .export: return data.starts(with: Data(#"{"kvtool-export":2"#.utf8))
        case .extract: return data == ExternalSample.image
        case .copy: return kvtool("count", target(for: file), "Task").output == "4\n"
        }
    }
}

/// Output files are created new under a temporary name and renamed into place; an existing path is replaced only with
/// `--force`, only when it is a regular file of the user's; outputs are mode 0600 unless `--mode` says otherwise.
@Suite struct OutputFileTests {
    static let victimText = Data("the victim's own text\n".utf8)

    @Test(arguments: FileWritingCommand.allCases)
    func aNewOutputIsMode0600(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        let result = kvtool(arguments: command.arguments(store: store.path, file: file))
        #expect(result.status == 0, "\(result.errors)")
        #expect(try command.wrote(file))
        #expect(FileFacts(file) == FileFacts(type: S_IFREG, mode: 0o600, owner: geteuid()))
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: (file as NSString).deletingLastPathComponent)
        // Only this file's temporary names: other tests write files in the same directory meanwhile.
        let temporary = "." + (file as NSString).lastPathComponent + ".kvtool-"
        #expect(!leftovers.contains { $0.hasPrefix(temporary) }, "no temporary file is left: \(leftovers)")
    }

    @Test(arguments: FileWritingCommand.allCases)
    func theModeOptionSetsTheMode(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        let result = kvtool(arguments: command.arguments(store: store.path, file: file, ["--mode", "0644"]))
        #expect(result.status == 0, "\(result.errors)")
        #expect(FileFacts(file)?.mode == 0o644)
    }

    @Test(arguments: FileWritingCommand.allCases, ["644x", "0800", "1755", "", "7777"])
    func aBadModeIsAUsageError(_ command: FileWritingCommand, _ mode: String) throws {
        let result = kvtool(
            arguments: command.arguments(store: "/nonexistent", file: "/nonexistent/x", ["--mode", mode]))
        #expect(result.status == 64)
        #expect(
            result.errors.hasPrefix(
                "Error: The value '\(mode)' is invalid for '--mode <mode>': expected octal permissions from 000 to "
                    + "777, such as 0644\n"))
    }

    @Test(arguments: FileWritingCommand.allCases)
    func anExistingFileIsKeptWithoutForce(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        try Self.victimText.write(to: URL(fileURLWithPath: file))
        let result = kvtool(arguments: command.arguments(store: store.path, file: file))
        #expect(result.status == 1)
        #expect(result.errors == "Error: Cannot write '\(file)': it already exists; use --force to replace it\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Self.victimText)
    }

    @Test(arguments: FileWritingCommand.allCases)
    func forceReplacesARegularFile(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        try Self.victimText.write(to: URL(fileURLWithPath: file))
        chmod(file, 0o644)
        let result = kvtool(arguments: command.arguments(store: store.path, file: file, ["--force"]))
        #expect(result.status == 0, "\(result.errors)")
        #expect(try command.wrote(file))
        #expect(FileFacts(file)?.mode == 0o600, "the new file has the output mode, not the old file's")
    }

    @Test(arguments: FileWritingCommand.allCases, [false, true])
    func aSymbolicLinkIsNeverFollowedOrReplaced(_ command: FileWritingCommand, force: Bool) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        let victim = store.sibling("victim")
        try Self.victimText.write(to: URL(fileURLWithPath: victim))
        try #require(symlink(victim, file) == 0)
        let result = kvtool(arguments: command.arguments(store: store.path, file: file, force ? ["--force"] : []))
        #expect(result.status == 1)
        #expect(
            result.errors
                == "Error: Cannot write '\(file)': it is a symbolic link, not a regular file; kvtool never replaces "
                + "one, even with --force\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Self.victimText, "the link's target is unchanged")
        #expect(FileFacts(file)?.type == S_IFLNK, "the link is still there")
    }

    @Test(arguments: FileWritingCommand.allCases)
    func aFIFOIsRefused(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        try #require(mkfifo(file, 0o644) == 0)
        let result = kvtool(arguments: command.arguments(store: store.path, file: file, ["--force"]))
        #expect(result.status == 1)
        #expect(
            result.errors
                == "Error: Cannot write '\(file)': it is a FIFO (named pipe), not a regular file; kvtool never "
                + "replaces one, even with --force\n")
        #expect(FileFacts(file)?.type == S_IFIFO)
    }

    @Test(.enabled(if: isRoot, "making a device node needs root"), arguments: FileWritingCommand.allCases)
    func aDeviceIsRefused(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        // The null device's numbers, 1 and 3, in a node of the test's own.
        try #require(mknod(file, S_IFCHR | 0o666, (1 << 8) | 3) == 0)
        let result = kvtool(arguments: command.arguments(store: store.path, file: file, ["--force"]))
        #expect(result.status == 1)
        #expect(
            result.errors
                == "Error: Cannot write '\(file)': it is a character device, not a regular file; kvtool never "
                + "replaces one, even with --force\n")
        #expect(FileFacts(file)?.type == S_IFCHR)
    }

    @Test(arguments: FileWritingCommand.allCases)
    func aDirectoryIsRefused(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        let result = kvtool(arguments: command.arguments(store: store.path, file: file, ["--force"]))
        #expect(result.status == 1)
        #expect(
            result.errors
                == "Error: Cannot write '\(file)': it is a directory, not a regular file; kvtool never replaces "
                + "one, even with --force\n")
    }

    @Test(.enabled(if: isRoot, "giving a file to another user needs root"), arguments: FileWritingCommand.allCases)
    func anotherUsersFileIsNeverReplaced(_ command: FileWritingCommand) throws {
        let store = TemporaryStore()
        try command.makeStore(at: store.path)
        let file = try command.outputFile(beside: store)
        try Self.victimText.write(to: URL(fileURLWithPath: file))
        try #require(chown(file, nobody, gid_t(nobody)) == 0)
        for flags in [[], ["--force"]] {
            let result = kvtool(arguments: command.arguments(store: store.path, file: file, flags))
            #expect(result.status == 1)
            let expected =
                flags.isEmpty
                ? "Error: Cannot write '\(file)': it already exists; use --force to replace it\n"
                : "Error: Cannot write '\(file)': it belongs to another user (uid 65534), not to you (uid 0); "
                    + "kvtool replaces only your own files\n"
            #expect(result.errors == expected)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Self.victimText)
        #expect(FileFacts(file)?.owner == nobody)
    }

    @Test func aMissingDirectorySaysSo() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("missing") + "/tasks.jsonl"
        #expect(
            kvtool("export", store.path, "--output", file)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: Cannot write '\(file)': cannot create a file in '\(store.sibling("missing"))': no "
                        + "such file or directory (ENOENT)\n"))
    }

    @Test func aFailedExtractLeavesNoFileAndKeepsTheOldOne() throws {
        let store = TemporaryStore()
        try ExternalSample.makeStore(at: store.path)
        try withEnvironment(at: store.path) { environment in
            let (table, prefix) = try ExternalSample.imagePrefix(environment)
            _ = try environment.write { txn in try txn.delete(forKey: ExternalSample.chunkKey(prefix, 1), in: table) }
        }
        let file = store.sibling("out")
        try Self.victimText.write(to: URL(fileURLWithPath: file))
        let arguments = FileWritingCommand.extract.arguments(store: store.path, file: file, ["--force"])
        #expect(kvtool(arguments: arguments).status == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Self.victimText, "the old file is kept")
        let siblings = try FileManager.default.contentsOfDirectory(atPath: (file as NSString).deletingLastPathComponent)
        #expect(!siblings.contains { $0.hasPrefix("." + (file as NSString).lastPathComponent + ".kvtool-") })
    }
}
