import Foundation
import Testing

/// Error texts and exit statuses, pinned: runtime failures exit 1 with one `Error:` line; usage mistakes exit 64
/// with the usage line and a pointer to the help.
@Suite struct ErrorGoldenTests {
    static let countUsage = """
        Usage: kvtool count <path> <entity> [--where <condition> ...] [--sum <field>] [--average <field>]
                            [--min <field>] [--max <field>] [--distinct <field>] [--group-by <field>]
                            [--explain] [--json]
          See 'kvtool help count' for more information.

        """

    @Test func missingPath() {
        let store = TemporaryStore()
        #expect(
            kvtool("info", store.path)
                == RunResult(status: 1, output: "", errors: "Error: No such store: '\(store.path)' does not exist\n"))
    }

    @Test func directoryThatIsNotAStore() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        #expect(
            kvtool("schema", store.path)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: '\(store.path)' is not a store: the directory holds no data.mdb\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).isEmpty, "no lock file was created")
    }

    @Test func fileThatIsNotLMDB() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        try Data(repeating: 0x2A, count: 8192).write(to: URL(fileURLWithPath: store.path + "/data.mdb"))
        #expect(
            kvtool("count", store.path, "Task")
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: '\(store.path)' is not a store: its data.mdb is not an LMDB file: its first bytes "
                        + "are 2a 2a 2a 2a 2a 2a 2a 2a 2a 2a 2a 2a 2a 2a 2a 2a (\"****************\")\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["data.mdb"], "no lock file")
    }

    @Test func sqliteFileInsteadOfLMDB() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        var bytes = Data("SQLite format 3\u{0}".utf8)
        bytes.append(Data(repeating: 0, count: 4096))
        try bytes.write(to: URL(fileURLWithPath: store.path + "/data.mdb"))
        #expect(
            kvtool("info", store.path).errors
                == "Error: '\(store.path)' is not a store: its data.mdb is not an LMDB file: its first bytes are "
                + "53 51 4c 69 74 65 20 66 6f 72 6d 61 74 20 33 00 (\"SQLite format 3.\")\n")
    }

    @Test func shortAndEmptyDataFiles() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        let file = URL(fileURLWithPath: store.path + "/data.mdb")
        try Data().write(to: file)
        #expect(
            kvtool("info", store.path)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: '\(store.path)' is not a store: its data.mdb is empty, with no LMDB environment\n"))
        try Data("hello\n".utf8).write(to: file)
        #expect(
            kvtool("info", store.path).errors
                == "Error: '\(store.path)' is not a store: its data.mdb is not an LMDB file: it is 6 bytes long, too "
                + "short for one, and its first bytes are 68 65 6c 6c 6f 0a (\"hello.\")\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["data.mdb"], "no lock file")
    }

    @Test func plainFileInsteadOfADirectory() throws {
        let store = TemporaryStore()
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(
            kvtool("info", store.path)
                == RunResult(
                    status: 1, output: "",
                    errors:
                        "Error: '\(store.path)' is a file, not a store: a store is a directory that holds data.mdb\n"
                ))
    }

    @Test func lmdbEnvironmentWithoutCatalog() throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        try withEnvironment(at: store.path) { environment in
            _ = try environment.openTable(named: "other", create: true)
            _ = try environment.openTable(named: "more", create: true)
        }
        #expect(
            kvtool("info", store.path)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: '\(store.path)' is not a KVStore store: it is an LMDB environment with tables "
                        + "more, other but no KVStore catalog\n"))
        let empty = TemporaryStore()
        try FileManager.default.createDirectory(atPath: empty.path, withIntermediateDirectories: true)
        try withEnvironment(at: empty.path) { environment in
            try environment.write { _ in }
        }
        #expect(
            kvtool("info", empty.path).errors
                == "Error: '\(empty.path)' is not a KVStore store: it is an LMDB environment with no tables and no "
                + "KVStore catalog\n")
    }

    @Test func unknownEntity() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(
            kvtool("count", store.path, "Tsk")
                == RunResult(
                    status: 1, output: "",
                    errors:
                        "Error: Unknown entity 'Tsk': the store's catalog has no such entity (it has Project, Task)\n"))
    }

    @Test func unknownField() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(
            kvtool("list", store.path, "Task", "--where", "colour=red")
                == RunResult(status: 1, output: "", errors: "Error: Unknown field 'colour': Task has no such field\n"))
        #expect(kvtool("list", store.path, "Task", "--fields", "id,colour").errors.contains("Unknown field 'colour'"))
    }

    @Test func malformedUUID() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(
            kvtool("get", store.path, "Task", "not-a-uuid")
                == RunResult(
                    status: 64, output: "",
                    errors: """
                        Error: Malformed UUID 'not-a-uuid'
                        Usage: kvtool get <path> <entity> <id> ... [--follow <relationship> ...]
                          See 'kvtool help get' for more information.

                        """))
        #expect(
            kvtool("count", store.path, "Task", "--where", "projectID=xyz")
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: Malformed UUID 'xyz' for '--where projectID=…'\n" + Self.countUsage))
    }

    @Test func malformedWhere() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let expected =
            "Error: The value 'isDone' is invalid for '--where <condition>': expected FIELD=VALUE, FIELD!=VALUE, "
            + "FIELD<VALUE, FIELD<=VALUE, FIELD>VALUE, FIELD>=VALUE or FIELD^=PREFIX\n" + Self.countUsage
        #expect(
            kvtool("count", store.path, "Task", "--where", "isDone")
                == RunResult(status: 64, output: "", errors: expected))
        #expect(
            kvtool("count", store.path, "Task", "--where=isDone=maybe")
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: The value 'maybe' is invalid for '--where isDone=…': expected true or false\n"
                        + Self.countUsage))
    }

    @Test func unknownOption() {
        #expect(
            kvtool("count", "/tmp", "Task", "--frobnicate")
                == RunResult(status: 64, output: "", errors: "Error: Unknown option '--frobnicate'\n" + Self.countUsage)
        )
        #expect(kvtool("count", "/tmp", "Task", "-x").errors.hasPrefix("Error: Unknown option '-x'\n"))
        #expect(
            kvtool("count", "/tmp", "Task", "--json=yes").errors.hasPrefix(
                "Error: The flag '--json' does not take a value\n"))
    }

    @Test func missingArgument() {
        #expect(
            kvtool("count", "/tmp")
                == RunResult(
                    status: 64, output: "", errors: "Error: Missing expected argument '<entity>'\n" + Self.countUsage))
        #expect(
            kvtool("count", "/tmp", "Task", "--where").errors.hasPrefix(
                "Error: Missing value for '--where <condition>'\n"))
        #expect(kvtool("count", "/tmp", "Task", "extra").errors.hasPrefix("Error: Unexpected argument 'extra'\n"))
    }

    @Test func badNumber() {
        let result = kvtool("list", "/tmp", "Task", "--limit", "ten")
        #expect(result.status == 64)
        #expect(
            result.errors.hasPrefix(
                "Error: The value 'ten' is invalid for '--limit <n>': expected a non-negative integer\n"))
        #expect(
            kvtool("export", "/tmp", "--chunk-size=0").errors.hasPrefix(
                "Error: The value '0' is invalid for '--chunk-size <n>': expected a positive integer\n"))
    }

    @Test func unknownSubcommand() {
        #expect(
            kvtool("inspect")
                == RunResult(
                    status: 64, output: "",
                    errors: """
                        Error: Unknown subcommand 'inspect'
                        Usage: kvtool <subcommand> [<options>] <arguments>
                          See 'kvtool --help' for more information.

                        """))
    }

    @Test func doubleDashEndsOptions() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        #expect(kvtool("count", "--", store.path, "--json").errors.hasPrefix("Error: Unknown entity '--json'"))
        #expect(kvtool("count", store.path, "--", "Task") == RunResult(status: 0, output: "4\n", errors: ""))
    }
}
