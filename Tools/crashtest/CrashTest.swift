import Foundation
import KVStore

/// The crash test's command line: `crashtest run` for people, and the hidden subcommands its children run.
enum CrashTest {
    /// What `crashtest --help` prints.
    static let help = """
        OVERVIEW: Kills writers of a KVStore store at random moments and checks that every acknowledged
        transaction survived, that the one in flight is all there or not at all, and that the store is intact.

        USAGE: crashtest run [--iterations <n>] [--seed <s>] [--directory <path>] [--fresh-every <k>]
                             [--max-delay-ms <ms>] [--reader-every <r>] [--verbose]
               crashtest mixed [--iterations <n>] [--seed <s>] [--verbose]

        crashtest mixed runs old-schema writers while a migration to a new schema is killed at random
        points, then finishes the migration and checks that every save a writer saw commit is there.

        OPTIONS:
          --iterations <n>     Writers to start and kill (default: 100).
          --seed <s>           The seed of the run's random choices (default: random, printed).
          --directory <path>   Where to keep the store and its log (default: a new temporary directory).
                               The store and log are removed when no problem was found.
          --fresh-every <k>    Start a new store every k iterations (default: 0, one store for the run).
          --max-delay-ms <ms>  The longest wait between a writer's start of work and its kill (default: 250).
          --reader-every <r>   Kill a process inside a read transaction every r iterations (default: 10; 0: never).
          --verbose            Print a line per iteration.
          -h, --help           Show this help.

        The exit status is 0 when no problem was found, 1 otherwise, 64 for a usage mistake.

        """

    /// Runs the subcommand in `arguments` and returns the exit status.
    static func main(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first, command != "-h", command != "--help" else {
            print(help, terminator: "")
            return 0
        }
        do {
            let options = try OptionValues(Array(arguments.dropFirst()))
            switch command {
            case "run":
                return CrashRun(options: try options.runOptions()).run()
            case "mixed":
                let run = try options.runOptions()
                return MixedVersionRun(iterations: run.iterations, seed: run.seed, verbose: run.verbose).run()
            case "old-writer":
                return try MixedVersionRun.runOldWriter(store: options.required("store"))
            case "migrate":
                return try MixedVersionRun.runMigration(store: options.required("store"))
            case "writer":
                return try runWriter(options)
            case "read":
                let container = try open(options.required("store"))
                try container.read { _ in
                    Child.signalReady()
                    Thread.sleep(forTimeInterval: 60)
                }
                return 0
            case "hold":
                let container = try open(options.required("store"))
                Child.signalReady()
                Thread.sleep(forTimeInterval: 60)
                try container.close()
                return 0
            default:
                throw UsageError(message: "Unknown subcommand '\(command)'")
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("Error: \(error.message)\n\(help)".utf8))
            return 64
        } catch {
            FileHandle.standardError.write(Data("crashtest \(command): \(error)\n".utf8))
            return 1
        }
    }

    /// The writer child: writes until it is killed, or gives up after a minute.
    private static func runWriter(_ options: OptionValues) throws -> Int32 {
        let container = try open(options.required("store"))
        let log = try ExpectationLog(appendingTo: options.required("log"))
        let writer = try Writer(
            container: container, log: log, lastSequence: try options.integer("last-sequence") ?? 0,
            seed: try options.unsigned("seed") ?? 0)
        Child.signalReady()
        try writer.run(until: .now + .seconds(60))
        return 0
    }

    private static func open(_ path: String) throws -> ModelContainer {
        try ModelContainer(for: crashModelTypes, configuration: CrashRun.configuration(path: path))
    }
}

/// A mistake on the command line.
struct UsageError: Error {
    /// What is wrong.
    var message: String
}

/// The `--name value` options and `--flag`s of a command line.
struct OptionValues {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// The flags that take no value.
    static let flagNames: Set<String> = ["verbose"]

    /// Parses `--name value`, `--name=value` and flags.
    init(_ arguments: [String]) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            guard word.hasPrefix("--") else { throw UsageError(message: "Unexpected argument '\(word)'") }
            let name = String(word.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                values[String(name[..<equals])] = String(name[name.index(after: equals)...])
            } else if Self.flagNames.contains(name) {
                flags.insert(name)
            } else {
                guard index + 1 < arguments.count else { throw UsageError(message: "Missing value for '\(word)'") }
                values[name] = arguments[index + 1]
                index += 1
            }
            index += 1
        }
    }

    /// The value of `--name`, which must be given.
    func required(_ name: String) throws(UsageError) -> String {
        guard let value = values[name] else { throw UsageError(message: "Missing --\(name)") }
        return value
    }

    /// The value of `--name` as a non-negative integer, if given.
    func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw UsageError(message: "--\(name) takes a non-negative integer, not '\(text)'")
        }
        return value
    }

    /// The value of `--name` as an unsigned 64-bit integer, if given.
    func unsigned(_ name: String) throws(UsageError) -> UInt64? {
        guard let text = values[name] else { return nil }
        guard let value = UInt64(text) else {
            throw UsageError(message: "--\(name) takes an unsigned integer, not '\(text)'")
        }
        return value
    }

    /// The options of `crashtest run`.
    func runOptions() throws(UsageError) -> CrashRun.Options {
        let known: Set<String> = [
            "iterations", "seed", "directory", "fresh-every", "max-delay-ms", "reader-every",
        ]
        if let unknown = values.keys.first(where: { !known.contains($0) }) {
            throw UsageError(message: "Unknown option '--\(unknown)'")
        }
        var options = CrashRun.Options()
        options.iterations = try integer("iterations") ?? options.iterations
        options.seed = try unsigned("seed") ?? options.seed
        options.directory = values["directory"]
        options.freshEvery = try integer("fresh-every") ?? options.freshEvery
        options.maximumDelay = try integer("max-delay-ms") ?? options.maximumDelay
        options.readerEvery = try integer("reader-every") ?? options.readerEvery
        options.verbose = flags.contains("verbose")
        return options
    }
}
