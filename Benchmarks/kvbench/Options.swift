import CLMDB
import CommandLineKit
import KVStore

/// The command line of kvbench: each option declared once with the command-line kit, which parses it, lays out
/// `--help` and reports usage mistakes (exit status 64).
///
/// ```
/// kvbench --scenario insert,fetch --size small --repeat 5 --json results.json
/// ```
struct Options: ParsableCommand, Sendable {
    static let configuration = CommandConfiguration(
        name: "kvbench",
        abstract:
            "Measures the work KVStore exists for beside the same work done through the LMDB C API, in the same run, "
            + "and prints the ratio.",
        discussion: """
            The table goes to standard output; progress, warnings and the files written to standard error. Measure \
            with a release build ('make bench', or 'swift build -c release --product kvbench'): a debug build runs, \
            with a warning, but measures nothing worth reading.
            Exit status: 0 when every scenario ran, 1 when one failed or a file could not be written, 64 for a usage \
            mistake.
            """)

    /// The options of kvbench.
    struct Arguments: ParsableArguments {
        let scenarios = Option<[ScenarioKind]>(
            "scenario", valueName: "names", help: "The scenarios to run, comma-separated; repeat to add more.",
            separator: ",",
            defaultDescription: "all of them")
        let size = Option<SizeClass>(
            "size", valueName: "size",
            help: "How large the datasets are: small is a smoke run of a few seconds, large adds the scale series up "
                + "to 1M records, huge up to 10M (the scale series alone, '--size huge --scenario scale "
                + "--repeat 1', takes about 20 minutes, 3 GB free in TMPDIR and 5 GB of memory).",
            default: .standard)
        let repeats = Option<Int>(
            "repeat", valueName: "n", help: "Measured runs per scenario after one warm-up run, 1 to 100.",
            default: 5, parser: .integer(in: 1...100))
        let durability = FlagChoice(
            default: CommitSync.noSync,
            .flag(
                "sync", value: .sync,
                help: "Durable commits: every commit waits for its data and metadata to reach the disk (durability "
                    + "full)."),
            .flag(
                "sync-data", value: .syncData,
                help: "Every commit waits for its data, not for its metadata (MDB_NOMETASYNC, durability normal)."),
            .flag(
                "no-sync", value: .noSync,
                help: "Commits without waiting for the disk (MDB_NOSYNC, durability off), to measure CPU work."))
        let coding = Option<RecordCoding>(
            "coding", valueName: "coding",
            help: "How KVStore codes the models: fields (their FieldCodable conformance) or codable (Codable alone); "
                + "the records are the same bytes either way.",
            default: .fields)
        let chunkSize = Option<Int?>(
            "chunk-size", valueName: "n", help: "Tasks per write transaction of the chunked inserts, 100 to 100,000.",
            defaultDescription: "10,000, as ModelContext's chunked insert", parser: .integer(in: 100...100_000))
        let jsonPath = Option<String?>(
            "json", valueName: "file", help: "Write every result, with the machine and settings, as JSON.",
            parser: .nonEmpty(expecting: "a file name"))
        let svgPath = Option<String?>(
            "svg", valueName: "file", help: "Write a chart of the ratios and of the scale series as SVG.",
            parser: .nonEmpty(expecting: "a file name"))
    }

    /// The scenarios to run, in the canonical order.
    var scenarios: [ScenarioKind]
    /// How large the datasets are.
    var size: SizeClass
    /// The number of measured runs per scenario, after one warm-up run.
    var repeats: Int
    /// Whether commits wait for the disk.
    var durability: CommitSync
    /// How KVStore codes the models' records.
    var coding: RecordCoding
    /// The tasks per write transaction of chunked inserts, when not the size's default.
    var chunkSize: Int?
    /// Where to write the results as JSON, if anywhere.
    var jsonPath: String?
    /// Where to write the chart as SVG, if anywhere.
    var svgPath: String?

    /// Reads the parsed options; the scenarios chosen run in the canonical order, all of them when none is chosen.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        let chosen = Set(try arguments[\.scenarios])
        scenarios = chosen.isEmpty ? ScenarioKind.allCases : ScenarioKind.allCases.filter(chosen.contains)
        size = try arguments[\.size]
        repeats = try arguments[\.repeats]
        durability = arguments[\.durability]
        coding = try arguments[\.coding]
        chunkSize = try arguments[\.chunkSize]
        jsonPath = try arguments[\.jsonPath]
        svgPath = try arguments[\.svgPath]
    }
}

/// `--scenario insert,fetch`.
extension ScenarioKind: ArgumentValue {}

/// How long commits wait for the disk, on both sides of a comparison.
enum CommitSync: String, Codable, Sendable {
    /// `MDB_NOSYNC`: commits return without flushing, which measures CPU work; a system crash can lose the last
    /// commits.
    case noSync = "nosync"
    /// `MDB_NOMETASYNC`: every commit flushes its data, and the next one its metadata.
    case syncData = "syncdata"
    /// Every commit flushes its data and metadata to disk before it returns.
    case sync

    /// The KVStore durability level that commits this way.
    var storeDurability: Durability {
        switch self {
        case .noSync: .off
        case .syncData: .normal
        case .sync: .full
        }
    }

    /// The LMDB environment flags that commit this way.
    var environmentFlags: UInt32 {
        switch self {
        case .noSync: UInt32(MDB_NOSYNC)
        case .syncData: UInt32(MDB_NOMETASYNC)
        case .sync: 0
        }
    }
}

/// How KVStore codes the benchmark's models, which conform to both `Codable` and `FieldCodable`.
enum RecordCoding: String, CaseIterable, Codable, Sendable, ArgumentValue {
    /// Through their `FieldCodable` conformance, as KVStore does by default.
    case fields
    /// Through `Codable` alone, as for a model that does not conform to `FieldCodable`.
    case codable
}

/// The size of the datasets; ``ScenarioSizes`` has the numbers.
enum SizeClass: String, CaseIterable, Codable, Sendable, ArgumentValue {
    /// A smoke run of a few seconds, for tests.
    case small
    /// The default run, under three minutes on two cores.
    case standard = "default"
    /// Larger datasets and the scale series up to one million records.
    case large
    /// The large datasets, with the scale series up to ten million records.
    case huge
}
