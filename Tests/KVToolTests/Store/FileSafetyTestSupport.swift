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

/// Whether the tests run as root, which the tests of mounts, other users' files and foreign-owned stores need.
let isRoot = geteuid() == 0

/// The user ID of `nobody`, the "other user" of the ownership tests.
let nobody: uid_t = 65534

/// A tmpfs of a few kilobytes mounted on a fresh directory, to fill a disk; unmounted and removed at the end.
struct TinyFileSystem: ~Copyable {
    /// The mount point.
    let path: String

    /// Mounts a tmpfs of `size` bytes (rounded up to pages by the kernel).
    init(size: Int) throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath()
        path = base.appendingPathComponent("kvtool-tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let status = try runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0755", "tmpfs", path])
        guard status == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "mount tmpfs on \(path): \(status)"])
        }
    }

    /// The names in the mount point.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    deinit {
        // Lazily, so that a descriptor a failing test left open cannot keep the mount.
        _ = try? runTool("/bin/umount", ["-l", path])
        rmdir(path)
    }
}

/// Runs a system tool and returns its exit status.
@discardableResult
func runTool(_ executable: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Runs the built kvtool with `stdout` as its standard output, and returns its exit status and standard error.
///
/// - Parameters:
///   - arguments: kvtool's arguments.
///   - stdout: The descriptor the child writes its results to; the caller keeps (and closes) its own.
///   - user: The user ID to run as, through `setpriv`; the current user when `nil`.
func runBinary(
    _ arguments: [String], stdout: FileHandle? = nil, user: uid_t? = nil
) throws -> (
    status: Int32, output: String, errors: String
) {
    let process = Process()
    let kvtool = try BinarySmokeTests.executable()
    if let user {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments =
            ["--reuid", String(user), "--regid", String(user), "--clear-groups", "--", kvtool.path] + arguments
    } else {
        process.executableURL = kvtool
        process.arguments = arguments
    }
    let errors = Pipe()
    let output = Pipe()
    process.standardOutput = stdout ?? output
    process.standardError = errors
    try process.run()
    let outputData = stdout == nil ? output.fileHandleForReading.readDataToEndOfFile() : Data()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    return (status, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
}

/// A console whose standard output is the descriptor `descriptor` (such as one of /dev/full) and whose standard error
/// is kept, with what kvtool returned.
func kvtool(arguments: [String], outputDescriptor descriptor: Int32) -> (status: Int32, errors: String) {
    let errors = StringSink()
    let status = KVTool.run(
        arguments: arguments, console: Console(output: FileDescriptorSink(descriptor: descriptor), errors: errors))
    return (status, errors.text)
}

/// File facts for the assertions: the kind, the permission bits, the owner.
struct FileFacts: Equatable {
    /// `S_IFREG`, `S_IFLNK` and so on.
    var type: mode_t
    /// The permission bits.
    var mode: mode_t
    /// The owner.
    var owner: uid_t

    /// Facts given one by one, to compare with.
    init(type: mode_t, mode: mode_t, owner: uid_t) {
        self.type = type
        self.mode = mode
        self.owner = owner
    }

    /// The facts of `path` itself (a symbolic link is not followed), or `nil` when nothing is there.
    init?(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        type = status.st_mode & S_IFMT
        mode = status.st_mode & 0o7777
        owner = status.st_uid
    }
}

extension Sample {
    /// Writes a store of `count` tasks with long titles, whose export and data file are hundreds of kilobytes.
    static func makeLargeStore(at path: String, count: Int = 1500) throws {
        let padding = String(repeating: "x", count: 200)
        let tasks = (0..<count).map { index in
            Task(id: fixedID(UInt8(truncatingIfNeeded: index), entity: UInt8(index >> 8)), title: "\(index) \(padding)")
        }
        try makeStore(at: path, projects: [], tasks: tasks)
    }
}
