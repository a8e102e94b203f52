/// The command line of kvbench, parsed by hand in the manner of swift-argument-parser.
///
/// ```
/// kvbench --scenario insert,fetch --size small --repeat 5 --json results.json
/// ```
struct Options: Sendable {
    /// The scenarios to run, in the canonical order.
    var scenarios: [ScenarioKind] = ScenarioKind.allCases
    /// How large the datasets are.
    var size: SizeClass = .standard
    /// The number of measured runs per scenario, after one warm-up run.
    var repeats = 5
    /// Whether commits wait for the disk.
    var durability: Durability = .noSync
    /// How KVStore codes the models' records.
    var coding: RecordCoding = .fields
    /// The tasks per write transaction of chunked inserts, when not the size's default.
    var chunkSize: Int?
    /// Where to write the results as JSON, if anywhere.
    var jsonPath: String?
    /// Where to write the chart as SVG, if anywhere.
    var svgPath: String?
    /// Whether `--help` was given.
    var showsHelp = false

    /// The usage text, printed by `--help` and after a usage error.
    static let usage = """
        OVERVIEW: Measures the work KVStore exists for beside the same work done through the LMDB C API, in the
        same run, and prints the ratio.

        USAGE: kvbench [--scenario <names>] [--size <size>] [--repeat <n>] [--sync | --no-sync]
                       [--coding <coding>] [--chunk-size <n>] [--json <file>] [--svg <file>]

        OPTIONS:
          --scenario <names>  Comma-separated scenarios to run (default: all of them):
                              \(ScenarioKind.allCases.map(\.rawValue).joined(separator: ", "))
          --size <size>       small (a smoke run of a few seconds), default, or large (scale series up to
                              1M records) (default: default)
          --repeat <n>        Measured runs per scenario after one warm-up run, 1 to 100 (default: 5)
          --sync              Durable commits: every commit waits for the disk
          --no-sync           Commits without waiting for the disk (MDB_NOSYNC), to measure CPU work (default)
          --coding <coding>   How KVStore codes the models: fields (their FieldCodable conformance) or codable
                              (Codable alone); the records are the same bytes either way (default: fields)
          --chunk-size <n>    Tasks per write transaction of the chunked inserts, 100 to 100,000
                              (default: 10,000, as ModelContext's chunked insert)
          --json <file>       Write every result, with the machine and settings, as JSON
          --svg <file>        Write a chart of the ratios and of the scale series as SVG
          -h, --help          Show help information.

        """

    /// Parses the arguments that follow the program's name.
    ///
    /// Options take their value as the next argument or after `=` (`--size small`, `--size=small`).
    ///
    /// - Parameter arguments: The arguments, without the program's name.
    /// - Returns: The options.
    /// - Throws: ``UsageError`` for an unknown option, a missing or bad value, or an argument that is not an option.
    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var chosen: Set<ScenarioKind> = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
                    throw UsageError("Missing value for '\(name)'")
                }
                return next
            }
            func flag() throws(UsageError) {
                if inlineValue != nil { throw UsageError("'\(name)' takes no value") }
            }
            switch name {
            case "-h", "--help":
                try flag()
                options.showsHelp = true
            case "--scenario":
                for item in try value().split(separator: ",", omittingEmptySubsequences: false) {
                    guard let kind = ScenarioKind(rawValue: String(item)) else {
                        throw UsageError(
                            "Unknown scenario '\(item)'; expected one of "
                                + ScenarioKind.allCases.map(\.rawValue).joined(separator: ", "))
                    }
                    chosen.insert(kind)
                }
            case "--size":
                let text = try value()
                guard let size = SizeClass(rawValue: text) else {
                    throw UsageError("Bad size '\(text)'; expected small, default or large")
                }
                options.size = size
            case "--repeat":
                let text = try value()
                guard let count = Int(text), (1...100).contains(count) else {
                    throw UsageError("Bad repeat count '\(text)'; expected a whole number from 1 to 100")
                }
                options.repeats = count
            case "--sync":
                try flag()
                options.durability = .sync
            case "--no-sync":
                try flag()
                options.durability = .noSync
            case "--coding":
                let text = try value()
                guard let coding = RecordCoding(rawValue: text) else {
                    throw UsageError("Bad coding '\(text)'; expected fields or codable")
                }
                options.coding = coding
            case "--chunk-size":
                let text = try value()
                guard let size = Int(text), (100...100_000).contains(size) else {
                    throw UsageError("Bad chunk size '\(text)'; expected a whole number from 100 to 100000")
                }
                options.chunkSize = size
            case "--json":
                options.jsonPath = try nonEmpty(value(), for: name)
            case "--svg":
                options.svgPath = try nonEmpty(value(), for: name)
            default:
                if argument.hasPrefix("-") { throw UsageError("Unknown option '\(name)'") }
                throw UsageError("Unexpected argument '\(argument)'")
            }
        }
        if !chosen.isEmpty {
            options.scenarios = ScenarioKind.allCases.filter(chosen.contains)
        }
        return options
    }

    private static func nonEmpty(_ path: String, for name: String) throws(UsageError) -> String {
        if path.isEmpty { throw UsageError("Empty file name for '\(name)'") }
        return path
    }
}

/// A mistake on the command line: kvbench prints it with the usage and exits with status 64.
struct UsageError: Error, CustomStringConvertible {
    /// What was wrong, as one sentence.
    var description: String

    /// Creates an error with its message.
    init(_ description: String) {
        self.description = description
    }
}

/// Whether commits wait for the disk.
enum Durability: String, Codable, Sendable {
    /// `MDB_NOSYNC`: commits return without flushing, which measures CPU work; a system crash can lose the last
    /// commits.
    case noSync = "nosync"
    /// Every commit flushes to disk before it returns.
    case sync
}

/// How KVStore codes the benchmark's models, which conform to both `Codable` and `FieldCodable`.
enum RecordCoding: String, Codable, Sendable {
    /// Through their `FieldCodable` conformance, as KVStore does by default.
    case fields
    /// Through `Codable` alone, as for a model that does not conform to `FieldCodable`.
    case codable
}

/// The size of the datasets; ``ScenarioSizes`` has the numbers.
enum SizeClass: String, Codable, Sendable {
    /// A smoke run of a few seconds, for tests.
    case small
    /// The default run, under three minutes on two cores.
    case standard = "default"
    /// Larger datasets and the scale series up to one million records.
    case large
}
