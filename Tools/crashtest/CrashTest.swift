import CommandLineKit
import Foundation
import KVStore

/// The crash test's command line: `crashtest run` and `crashtest mixed` for people, and the hidden subcommands its
/// child processes run, all declared with the command-line kit.
///
/// ```
/// crashtest run --iterations 50 --seed 42
/// crashtest mixed --iterations 20
/// ```
enum CrashTest {
    /// The subcommands, in the order help lists them (the kit adds `help`); the hidden ones are the children's.
    static var commands: [any CrashTestCommand.Type] {
        [
            RunCommand.self, MixedCommand.self, WriterCommand.self, ReadCommand.self, HoldCommand.self,
            OldWriterCommand.self, MigrateCommand.self, NewWriterCommand.self,
        ]
    }

    /// crashtest's command line: its subcommands and help.
    static var tool: CommandLineTool<any CrashTestCommand.Type> {
        CommandLineTool(
            name: "crashtest",
            abstract:
                "Kills writers of a KVStore store at random moments and checks that every acknowledged transaction "
                + "survived, that the one in flight is all there or not at all, and that the store is intact.",
            discussion: "Exit status: 0 when no problem was found, 1 otherwise, 64 for a usage mistake.",
            subcommands: commands
        ) { $0.signature }
    }

    /// Runs the subcommand in `arguments` (without the program's name) and returns the exit status.
    static func main(_ arguments: [String]) -> Int32 {
        switch tool.route(arguments) {
        case .help(let text), .version(let text):
            print(text, terminator: "")
            return ExitCode.success.rawValue
        case .usageError(let report):
            writeError(report)
            return ExitCode.usage.rawValue
        case .subcommand(let command, let words):
            return run(command, words)
        }
    }

    /// Parses and runs one subcommand: a usage mistake exits with 64, any other error with 1.
    private static func run<Command: CrashTestCommand>(_ command: Command.Type, _ words: [String]) -> Int32 {
        let parsed: Command
        do {
            switch try tool.parse(command, words) {
            case .help(let text), .version(let text):
                print(text, terminator: "")
                return ExitCode.success.rawValue
            case .run(let made):
                parsed = made
            }
        } catch {
            writeError(tool.usageReport(error, for: command))
            return ExitCode.usage.rawValue
        }
        do {
            return try parsed.run()
        } catch {
            writeError("crashtest \(Command.configuration.name): \(error)\n")
            return ExitCode.failure.rawValue
        }
    }

    private static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// A crashtest subcommand: its configuration and declared arguments (``ParsableCommand``), and what it does.
protocol CrashTestCommand: ParsableCommand {
    /// Runs the command and returns its exit status.
    ///
    /// - Throws: Any error that stops the command; crashtest prints it and exits with status 1.
    func run() throws -> Int32
}

/// Declarations several subcommands share.
enum CommonOptions {
    /// `--iterations <n>`, 100 by default.
    static func iterations(help: String) -> Option<Int> {
        Option("iterations", valueName: "n", help: help, default: 100, parser: .integer(in: 0...))
    }

    /// `--seed <s>`: the seed of a run's random choices, random (and printed) when not given.
    static let seed = Option<UInt64?>(
        "seed", valueName: "s", help: "The seed of the run's random choices, to replay a run.",
        defaultDescription: "random, printed")

    /// `--verbose`.
    static let verbose = Flag("verbose", help: "Print a line per iteration.")

    /// `--durability <level>`: how long each commit of the writers waits for the disk, `full` by default.
    static let durability = Option<Durability>(
        "durability", valueName: "level",
        help: "How long each commit waits for the disk: full, normal or off. A killed process loses no commit at any "
            + "level.",
        default: .full)

    /// `--store <path>`, which every child process takes.
    static let store = Option<String>("store", valueName: "path", help: "The store's directory.")

    /// The seed given, or a random one.
    static func seed(_ given: UInt64?) -> UInt64 {
        given ?? UInt64.random(in: 0...UInt64(UInt32.max))
    }
}

/// `--durability full`: a level by its name in code.
extension Durability: ArgumentValue {
    package static var parser: ValueParser<Durability> {
        ValueParser(
            expecting: "full, normal or off", choices: allCases.map(\.description), describe: \.description
        ) { text in allCases.first { $0.description == text } }
    }
}
