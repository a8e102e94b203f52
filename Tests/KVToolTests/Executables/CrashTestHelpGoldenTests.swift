import Testing

/// crashtest's help texts and usage errors, pinned as the built binary prints them: the tool's help, every
/// subcommand's (the hidden ones its child processes run included), and the errors of a misspelled subcommand or
/// option, a bad value, an option of another subcommand and a missing one.
@Suite struct CrashTestHelpGoldenTests {
    static let mainHelp = """
        OVERVIEW: Kills writers of a KVStore store at random moments and checks that every acknowledged
        transaction survived, that the one in flight is all there or not at all, and that the store is
        intact.

        USAGE: crashtest <subcommand> [<options>]

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          run                     Start writers, kill each at a random moment, and check the store after
                                  each kill.
          mixed                   Run old-schema writers while migrations to a new schema are killed at
                                  random points.
          help                    Show crashtest's help, or a subcommand's.

          See 'crashtest help <subcommand>' for detailed help.

        Exit status: 0 when no problem was found, 1 otherwise, 64 for a usage mistake.

        """

    static let runHelp = """
        OVERVIEW: Start writers, kill each at a random moment, and check the store after each kill.

        USAGE: crashtest run [--iterations <n>] [--seed <s>] [--directory <path>] [--fresh-every <k>]
                             [--max-delay-ms <ms>] [--reader-every <r>] [--durability <level>] [--verbose]

        OPTIONS:
          --iterations <n>        Writers to start and kill. (default: 100)
          --seed <s>              The seed of the run's random choices, to replay a run. (default: random,
                                  printed)
          --directory <path>      Where to keep the store and its log, which are removed when no problem was
                                  found. (default: a new temporary directory)
          --fresh-every <k>       Start a new store every k iterations; 0 keeps one store for the run.
                                  (default: 0)
          --max-delay-ms <ms>     The longest wait between a writer's start of work and its kill. (default:
                                  250)
          --reader-every <r>      Kill a process inside a read transaction every r iterations; 0 never.
                                  (default: 10)
          --durability <level>    How long each commit waits for the disk: full, normal or off. A killed
                                  process loses no commit at any level. (values: full, normal, off; default:
                                  full)
          --verbose               Print a line per iteration.
          -h, --help              Show help information.

        Each iteration starts a writer process that runs random transactions on a durable store, logging
        each before it commits, and kills it with SIGKILL at a random moment; then the store is checked as
        'kvtool check' does and compared with the log: every acknowledged transaction must be there, and the
        one in flight wholly present or wholly absent. The iterations continue on one store, reopened after
        every kill, unless --fresh-every is given.

        The run stops at the first problem, and keeps the store and its log for a replay with --seed.

        """

    static let mixedHelp = """
        OVERVIEW: Run old-schema writers while migrations to a new schema are killed at random points.

        USAGE: crashtest mixed [--iterations <n>] [--seed <s>] [--verbose]

        OPTIONS:
          --iterations <n>        Rounds to run, each on a fresh store. (default: 100)
          --seed <s>              The seed of the run's random choices, to replay a run. (default: random,
                                  printed)
          --verbose               Print a line per iteration.
          -h, --help              Show help information.

        Each iteration seeds a fresh store of schema 1.0.0, starts two writers of that schema, and starts
        and kills migrations to 2.0.0 at random moments (with none killed, one runs to its end beside the
        writers). Each writer must stop with a clear error, never a crash; then a new open finishes the
        migration, and every save a writer saw commit must be there, migrated, and 'kvtool check' clean. The
        run stops at the first problem.

        """

    static let writerHelp = """
        OVERVIEW: Write random transactions, logging each, until killed (a child of 'run').

        USAGE: crashtest writer --store <path> --log <path> [--seed <s>] [--last-sequence <n>]
                                [--durability <level>]

        OPTIONS:
          --store <path>          The store's directory.
          --log <path>            The expectation log to append to.
          --seed <s>              The seed of the writer's transactions. (default: 0)
          --last-sequence <n>     How many transactions the log holds so far. (default: 0)
          --durability <level>    How long each commit waits for the disk: full, normal or off. A killed
                                  process loses no commit at any level. (values: full, normal, off; default:
                                  full)
          -h, --help              Show help information.

        """

    static let readHelp = """
        OVERVIEW: Hold a read transaction open until killed (a child of 'run').

        USAGE: crashtest read --store <path>

        OPTIONS:
          --store <path>          The store's directory.
          -h, --help              Show help information.

        """

    static let holdHelp = """
        OVERVIEW: Keep the store open until killed (a child of 'run').

        USAGE: crashtest hold --store <path>

        OPTIONS:
          --store <path>          The store's directory.
          -h, --help              Show help information.

        """

    static let oldWriterHelp = """
        OVERVIEW: Save old-schema notes until a save fails (a child of 'mixed').

        USAGE: crashtest old-writer --store <path>

        OPTIONS:
          --store <path>          The store's directory.
          -h, --help              Show help information.

        """

    static let migrateHelp = """
        OVERVIEW: Migrate the store to the new schema (a child of 'mixed').

        USAGE: crashtest migrate --store <path>

        OPTIONS:
          --store <path>          The store's directory.
          -h, --help              Show help information.

        """

    static let helpHelp = """
        OVERVIEW: Show crashtest's help, or a subcommand's.

        USAGE: crashtest help [<subcommand>]

        ARGUMENTS:
          <subcommand>            The subcommand to explain.

        OPTIONS:
          -h, --help              Show help information.

        """

    /// Each subcommand's pinned help, by name.
    static let subcommandHelp = [
        "run": runHelp, "mixed": mixedHelp, "writer": writerHelp, "read": readHelp, "hold": holdHelp,
        "old-writer": oldWriterHelp, "migrate": migrateHelp, "help": helpHelp,
    ]

    /// The usage report that follows an error in `crashtest run`.
    static let runUsage = """
        Usage: crashtest run [--iterations <n>] [--seed <s>] [--directory <path>] [--fresh-every <k>]
                             [--max-delay-ms <ms>] [--reader-every <r>] [--durability <level>] [--verbose]
          See 'crashtest help run' for more information.

        """

    @Test func mainHelpIsPinned() throws {
        for arguments in [[], ["--help"], ["-h"], ["help"]] {
            #expect(try crashtest(arguments) == RunResult(status: 0, output: Self.mainHelp, errors: ""))
        }
    }

    @Test(arguments: ["run", "mixed", "writer", "read", "hold", "old-writer", "migrate", "help"])
    func subcommandHelpIsPinned(_ name: String) throws {
        let golden = try #require(Self.subcommandHelp[name])
        for arguments in [["help", name], [name, "--help"], [name, "-h"]] {
            #expect(try crashtest(arguments) == RunResult(status: 0, output: golden, errors: ""), "\(arguments)")
        }
        for line in golden.split(separator: "\n") {
            #expect(line.count <= 100, "\(name): \(line)")
        }
    }

    @Test func helpWinsOverOtherMistakes() throws {
        #expect(
            try crashtest(["run", "--iterations", "many", "--frobnicate", "-h"])
                == RunResult(status: 0, output: Self.runHelp, errors: ""))
    }

    @Test func aMisspelledSubcommandOrOptionGetsASuggestion() throws {
        #expect(
            try crashtest(["rn", "--iterations", "5"])
                == RunResult(
                    status: 64, output: "",
                    errors: """
                        Error: Unknown subcommand 'rn'; did you mean 'run'?
                        Usage: crashtest <subcommand> [<options>]
                          See 'crashtest --help' for more information.

                        """))
        #expect(
            try crashtest(["run", "--iteratons", "5"])
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: Unknown option '--iteratons'; did you mean '--iterations'?\n" + Self.runUsage))
    }

    @Test func badValuesAndRepeatedOptionsAreUsageErrors() throws {
        #expect(
            try crashtest(["run", "--reader-every", "-1"])
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: The value '-1' is invalid for '--reader-every <r>': expected a non-negative "
                        + "integer\n" + Self.runUsage))
        #expect(
            try crashtest(["run", "--seed", "1", "--seed=2"])
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: The option '--seed <s>' was given more than once\n" + Self.runUsage))
        #expect(
            try crashtest(["run", "extra"])
                == RunResult(status: 64, output: "", errors: "Error: Unexpected argument 'extra'\n" + Self.runUsage))
    }

    @Test func mixedTakesOnlyItsOwnOptions() throws {
        #expect(
            try crashtest(["mixed", "--iterations", "1", "--directory", "/tmp"])
                == RunResult(
                    status: 64, output: "",
                    errors: """
                        Error: Unknown option '--directory'
                        Usage: crashtest mixed [--iterations <n>] [--seed <s>] [--verbose]
                          See 'crashtest help mixed' for more information.

                        """))
    }

    @Test func aChildWithoutItsRequiredOptionIsAUsageError() throws {
        #expect(
            try crashtest(["writer", "--store", "/nonexistent/store"])
                == RunResult(
                    status: 64, output: "",
                    errors: """
                        Error: Missing expected option '--log <path>'
                        Usage: crashtest writer --store <path> --log <path> [--seed <s>] [--last-sequence <n>]
                                                [--durability <level>]
                          See 'crashtest help writer' for more information.

                        """))
    }
}

/// Runs the built `crashtest` with `arguments`.
private func crashtest(_ arguments: [String]) throws -> RunResult {
    try BinarySmokeTests.run(arguments, executable: "crashtest")
}
