import Foundation
import Testing

/// kvbench's help text and usage errors, pinned as the built binary prints them: a misspelled option with its
/// suggestion, values outside their ranges or choices, flags of one choice together, an option given twice and a
/// stray argument, each exiting with 64 before anything runs.
@Suite struct KVBenchHelpGoldenTests {
    static let help = """
        OVERVIEW: Measures the work KVStore exists for beside the same work done through the LMDB C API, in
        the same run, and prints the ratio.

        USAGE: kvbench [--scenario <names> ...] [--size <size>] [--repeat <n>]
                       [--sync | --sync-data | --no-sync] [--coding <coding>] [--chunk-size <n>]
                       [--json <file>] [--svg <file>]

        OPTIONS:
          --scenario <names>      The scenarios to run, comma-separated; repeat to add more. (values:
                                  insert, naive-insert, fetch, prefetch, query, query-power, update,
                                  cascade-delete, scale, replication; default: all of them)
          --size <size>           How large the datasets are: small is a smoke run of a few seconds, large
                                  adds the scale series up to 1M records, huge up to 10M (the scale series
                                  alone, '--size huge --scenario scale --repeat 1', takes about 20 minutes,
                                  3 GB free in TMPDIR and 5 GB of memory). (values: small, default, large,
                                  huge; default: default)
          --repeat <n>            Measured runs per scenario after one warm-up run, 1 to 100. (default: 5)
          --sync                  Durable commits: every commit waits for its data and metadata to reach the
                                  disk (durability full).
          --sync-data             Every commit waits for its data, not for its metadata (MDB_NOMETASYNC,
                                  durability normal).
          --no-sync               Commits without waiting for the disk (MDB_NOSYNC, durability off), to
                                  measure CPU work. (default)
          --coding <coding>       How KVStore codes the models: fields (their FieldCodable conformance) or
                                  codable (Codable alone); the records are the same bytes either way.
                                  (values: fields, codable; default: fields)
          --chunk-size <n>        Tasks per write transaction of the chunked inserts, 100 to 100,000.
                                  (default: 10,000, as ModelContext's chunked insert)
          --json <file>           Write every result, with the machine and settings, as JSON.
          --svg <file>            Write a chart of the ratios and of the scale series as SVG.
          -h, --help              Show help information.

        The table goes to standard output; progress, warnings and the files written to standard error.
        Measure with a release build ('make bench', or 'swift build -c release --product kvbench'): a debug
        build runs, with a warning, but measures nothing worth reading.

        Exit status: 0 when every scenario ran, 1 when one failed or a file could not be written, 64 for a
        usage mistake.

        """

    /// The usage report that follows every error.
    static let usage = """
        Usage: kvbench [--scenario <names> ...] [--size <size>] [--repeat <n>]
                       [--sync | --sync-data | --no-sync] [--coding <coding>] [--chunk-size <n>]
                       [--json <file>] [--svg <file>]
          See 'kvbench --help' for more information.

        """

    @Test func helpIsPinned() throws {
        for arguments in [["--help"], ["-h"], ["--size", "small", "--frobnicate", "--help"]] {
            #expect(try kvbench(arguments) == RunResult(status: 0, output: Self.help, errors: ""), "\(arguments)")
        }
        for line in Self.help.split(separator: "\n") {
            #expect(line.count <= 100, "\(line)")
        }
    }

    @Test func aMisspelledOptionGetsASuggestion() throws {
        #expect(
            try kvbench(["--sise", "small"])
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: Unknown option '--sise'; did you mean '--size'?\n" + Self.usage
                ))
        #expect(
            try kvbench(["--no-snyc"])
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: Unknown option '--no-snyc'; did you mean '--no-sync'?\n" + Self.usage))
    }

    @Test(arguments: [
        (
            ["--size", "enormous"],
            "The value 'enormous' is invalid for '--size <size>': expected small, default, large or huge"
        ),
        (["--repeat", "0"], "The value '0' is invalid for '--repeat <n>': expected an integer from 1 to 100"),
        (
            ["--chunk-size=99"],
            "The value '99' is invalid for '--chunk-size <n>': expected an integer from 100 to 100000"
        ),
        (["--coding", "json"], "The value 'json' is invalid for '--coding <coding>': expected fields or codable"),
        (
            ["--scenario", "insert,nope"],
            "The value 'nope' is invalid for '--scenario <names>': expected insert, naive-insert, fetch, prefetch, "
                + "query, query-power, update, cascade-delete, scale or replication"
        ),
        (["--json="], "The value '' is invalid for '--json <file>': expected a file name"),
        (["--svg"], "Missing value for '--svg <file>'"),
        (["--sync", "--no-sync"], "--sync and --no-sync cannot be used together"),
        (["--repeat", "3", "--repeat", "4"], "The option '--repeat <n>' was given more than once"),
        (["small"], "Unexpected argument 'small'"),
    ])
    func aUsageMistakeExitsWith64BeforeAnythingRuns(_ arguments: [String], _ message: String) throws {
        #expect(
            try kvbench(arguments) == RunResult(status: 64, output: "", errors: "Error: \(message)\n" + Self.usage))
    }

    // `make bench-check`'s entry points, outside the option parser: the paths that need no valgrind run.

    @Test func theInstructionCheckWithoutABaselinePathIsAUsageError() throws {
        for arguments in [["--instructions"], ["--instructions", "a.json", "--frobnicate"]] {
            let result = try kvbench(arguments)
            #expect(result.status == 64)
            #expect(result.output == "")
            #expect(result.errors.hasSuffix("Usage: kvbench --instructions <baseline.json> [--update]\n"))
        }
    }

    @Test func theInstructionCheckWithAnUnreadableBaselineFails() throws {
        let result = try kvbench(["--instructions", "/nonexistent/instructions.json"])
        #expect(result.status == 1)
        #expect(result.output == "")
        #expect(result.errors.contains("kvbench: cannot read the baseline /nonexistent/instructions.json: "))
    }

    @Test func aBaselineCountedWithOtherVersionsIsSkippedWithAMessage() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("other-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let baseline = """
            {"instructionsPerOperation": {"insert": 1000},
             "versions": {"glibc": "glibc 1.0", "lmdb": "LMDB 0.9.0: (January 1, 2000)", "toolchain": "5.0"}}
            """
        try baseline.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try kvbench(["--instructions", path])
        #expect(result.status == 0)
        #expect(
            result.output.hasPrefix(
                "bench-check skipped: the baseline was counted with Swift 5.0, glibc 1.0, LMDB 0.9.0, this machine has "
                    + "Swift "))
        #expect(result.output.hasSuffix("update it on purpose with 'make bench-check-update'\n"))
    }

    @Test func anUnknownInstructionWorkloadIsAUsageError() throws {
        let result = try kvbench(["--instruction-workload", "nothing"])
        #expect(result.status == 64)
        #expect(result.errors == "kvbench: no instruction workload named nothing\n")
    }
}

/// Runs the built `kvbench` with `arguments`.
private func kvbench(_ arguments: [String]) throws -> RunResult {
    try BinarySmokeTests.run(arguments, executable: "kvbench")
}
