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

/// Read-only commands create and write nothing in a store's folder; a planted `lock.mdb` or `data.mdb` that is not a
/// regular file is refused; running as another user than the store's owner leaves nothing the owner cannot use.
@Suite struct StoreOpenSafetyTests {
    /// The read-only commands, with their arguments after the store's path.
    static let readOnlyCommands: [[String]] = [
        ["info"], ["schema"], ["count", "Task"], ["list", "Task"], ["get", "Task", fixedID(1, entity: 2).uuidString],
        ["export"], ["check"], ["readers"],
    ]

    /// Writes the sample store and removes its lock file, as a copy or a restored backup has none.
    static func makeStoreWithoutLockFile(at path: String) throws {
        try Sample.makeStore(at: path)
        try FileManager.default.removeItem(atPath: path + "/lock.mdb")
    }

    @Test(arguments: readOnlyCommands)
    func readOnlyCommandsCreateNoLockFile(_ command: [String]) throws {
        let store = TemporaryStore()
        try Self.makeStoreWithoutLockFile(at: store.path)
        let result = kvtool(arguments: [command[0], store.path] + command.dropFirst())
        #expect(result.status == 0, "\(result.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["data.mdb"])
    }

    @Test func readersSaysAStoreWithoutLockFileHasNoReaders() throws {
        let store = TemporaryStore()
        try Self.makeStoreWithoutLockFile(at: store.path)
        #expect(
            kvtool("readers", store.path)
                == RunResult(
                    status: 0, output: "No lock file: no process has the store open, and no reader slot is in use.\n",
                    errors: ""))
    }

    @Test(arguments: readOnlyCommands)
    func aSymlinkedLockFileIsRefusedAndNothingIsWrittenThroughIt(_ command: [String]) throws {
        let store = TemporaryStore()
        try Self.makeStoreWithoutLockFile(at: store.path)
        let victim = store.sibling("victim")
        let text = Data("not a lock file\n".utf8)
        try text.write(to: URL(fileURLWithPath: victim))
        try #require(symlink(victim, store.path + "/lock.mdb") == 0)
        let result = kvtool(arguments: [command[0], store.path] + command.dropFirst())
        // check tells a store it could not read by its status, 2; the other commands fail with 1.
        #expect(
            result
                == RunResult(
                    status: command[0] == "check" ? 2 : 1, output: "",
                    errors: "Error: '\(store.path)' has a lock.mdb that is a symbolic link (to '\(victim)'), not a "
                        + "regular file; kvtool does not open a store through it, since LMDB would write through it\n"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == text, "the link's target is unchanged")
    }

    @Test func aLockFileThatIsAFIFOIsRefused() throws {
        let store = TemporaryStore()
        try Self.makeStoreWithoutLockFile(at: store.path)
        try #require(mkfifo(store.path + "/lock.mdb", 0o600) == 0)
        #expect(
            kvtool("count", store.path, "Task").errors
                == "Error: '\(store.path)' has a lock.mdb that is a FIFO (named pipe), not a regular file; kvtool "
                + "does not open a store through it, since LMDB would write through it\n")
    }

    @Test func aHardLinkedLockFileIsRefused() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let other = store.sibling("other")
        try #require(link(store.path + "/lock.mdb", other) == 0)
        #expect(
            kvtool("count", store.path, "Task").errors
                == "Error: '\(store.path)' has a lock.mdb with 2 hard links; kvtool does not open a store through "
                + "it, since LMDB would write to the other names too\n")
    }

    @Test func aSymlinkedDataFileIsRefused() throws {
        let store = TemporaryStore()
        let elsewhere = store.sibling("elsewhere")
        try Sample.makeStore(at: elsewhere)
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        try #require(symlink(elsewhere + "/data.mdb", store.path + "/data.mdb") == 0)
        #expect(
            kvtool("count", store.path, "Task")
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: '\(store.path)' is not a store kvtool opens: its data.mdb is a symbolic link (to "
                        + "'\(elsewhere)/data.mdb'), not a regular file\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["data.mdb"], "no lock file")
    }

    @Test func aDataFileThatIsAFIFOIsRefusedWithoutBlocking() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        try #require(mkfifo(store.path + "/data.mdb", 0o600) == 0)
        #expect(
            kvtool("info", store.path).errors
                == "Error: '\(store.path)' is not a store kvtool opens: its data.mdb is a FIFO (named pipe), not a "
                + "regular file\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["data.mdb"], "no lock file")
    }

    @Test(.enabled(if: isRoot, "making a device node needs root"))
    func aDataFileThatIsADeviceIsRefused() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        try #require(mknod(store.path + "/data.mdb", S_IFCHR | 0o666, (1 << 8) | 3) == 0)
        #expect(
            kvtool("info", store.path).errors
                == "Error: '\(store.path)' is not a store kvtool opens: its data.mdb is a character device, not a "
                + "regular file\n")
    }

    /// Gives the store's directory and files to `nobody`, as a service's store is.
    static func giveToNobody(_ path: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            try #require(chown(path + "/" + name, nobody, gid_t(nobody)) == 0)
        }
        try #require(chown(path, nobody, gid_t(nobody)) == 0)
        try #require(chmod(path, 0o700) == 0)
    }

    @Test(.enabled(if: isRoot, "acting as another user needs root"))
    func rootOnAForeignStoreWithItsLockFileLeavesItUsable() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Self.giveToNobody(store.path)
        #expect(kvtool("count", store.path, "Task") == RunResult(status: 0, output: "4\n", errors: ""))
        #expect(kvtool("check", store.path).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted() == ["data.mdb", "lock.mdb"])
        #expect(FileFacts(store.path + "/lock.mdb")?.owner == nobody)
        let owner = try runBinary(["count", store.path, "Task"], user: nobody)
        #expect(owner.status == 0, "the owner still opens the store: \(owner.errors)")
        #expect(owner.output == "4\n")
    }

    @Test(.enabled(if: isRoot, "acting as another user needs root"))
    func rootOnAForeignStoreWithoutLockFileCreatesNone() throws {
        let store = TemporaryStore()
        try Self.makeStoreWithoutLockFile(at: store.path)
        try Self.giveToNobody(store.path)
        #expect(kvtool("count", store.path, "Task") == RunResult(status: 0, output: "4\n", errors: ""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["data.mdb"])
        let owner = try runBinary(["count", store.path, "Task"], user: nobody)
        #expect(owner.status == 0, "the owner still opens the store: \(owner.errors)")
        let imported = try runBinary(["import", store.path, "/dev/null"], user: nobody)
        #expect(imported.status == 0, "the owner still writes the store: \(imported.errors)")
        #expect(FileFacts(store.path + "/lock.mdb")?.owner == nobody, "the owner's own import made the lock file")
    }

    @Test(.enabled(if: isRoot, "acting as another user needs root"))
    func rootImportingIntoAForeignStoreWithoutLockFileIsRefused() throws {
        let store = TemporaryStore()
        try Self.makeStoreWithoutLockFile(at: store.path)
        try Self.giveToNobody(store.path)
        let input = store.sibling("input.jsonl")
        try Data().write(to: URL(fileURLWithPath: input))
        #expect(
            kvtool("import", store.path, input)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: '\(store.path)' belongs to nobody (uid 65534) and has no lock file: writing it "
                        + "as root (uid 0) would create a lock.mdb that its owner cannot open. Run kvtool as its owner "
                        + "(for example 'runuser -u nobody -- kvtool ...')\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["data.mdb"])
    }
}
