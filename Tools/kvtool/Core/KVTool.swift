import KVStore
import KVStoreInspection
import LMDB

/// The `kvtool` command line: an inspector for any KVStore store, working from the store's catalog alone.
///
/// `run(arguments:console:)` parses the arguments, runs the subcommand and returns the exit status, writing only to
/// the console, so tests run it in-process and the executable's `main` is one line:
///
/// ```swift
/// exit(KVTool.run(arguments: CommandLine.arguments.dropFirst()))
/// ```
///
/// Exit statuses: 0 on success (and for help and the version), 1 for a failure (no store at the path, an unknown
/// entity or field, integrity problems, a write to the output that failed), 64 for a usage mistake (an unknown
/// option, a missing argument, a malformed UUID or `--where`, a bad number), and for `import` 65 for an input that
/// does not check out (nothing was written).
public enum KVTool {
    /// kvtool's version.
    public static let version = "0.1.0"

    /// The exit status of a usage mistake (`EX_USAGE` in sysexits.h).
    public static let usageStatus: Int32 = 64

    /// The subcommands, in the order help lists them.
    static var commands: [any Command.Type] {
        [
            InfoCommand.self, SchemaCommand.self, CountCommand.self, ListCommand.self, GetCommand.self,
            ExtractCommand.self, ExportCommand.self, ImportCommand.self, CheckCommand.self, CopyCommand.self,
            ReadersCommand.self,
            HelpCommand.self,
        ]
    }

    /// The names of the subcommands, in the order help lists them.
    static var commandNames: [String] {
        commands.map { $0.spec.name }
    }

    /// The version line `--version` prints.
    static var versionLine: String {
        "kvtool \(version) (KVStore format \(Catalog.formatVersion))"
    }

    /// Runs kvtool with `arguments` (without the program's name) and returns the exit status.
    ///
    /// - Parameters:
    ///   - arguments: The words after `kvtool`: a subcommand, its options and arguments.
    ///   - console: Where to write; the process's standard output and error by default.
    /// - Returns: 0 on success, 1 for a failure, 64 for a usage mistake.
    public static func run(arguments: some Sequence<String>, console: Console = .standard()) -> Int32 {
        let words = Array(arguments)
        var reported: OutputFailure?
        let status: Int32
        switch words.first {
        case nil, "-h"?, "--help"?:
            console.output.write(mainHelp)
            status = 0
        case "--version"?:
            console.print(versionLine)
            status = 0
        case let name?:
            if let command = commands.first(where: { $0.spec.name == name }) {
                status = run(command, Array(words.dropFirst()), console: console, reported: &reported)
            } else {
                reportUsage(UsageError("Unknown subcommand '\(name)'"), spec: nil, console: console)
                status = usageStatus
            }
        }
        return finish(status, console: console, reported: reported)
    }

    /// Flushes both outputs and checks that every write succeeded: a failed write to standard output is reported
    /// (unless the command already did) and makes the status 1; one to standard error cannot be, but makes it 1 too.
    static func finish(_ status: Int32, console: Console, reported: OutputFailure?) -> Int32 {
        var status = status
        console.output.flush()
        if let failure = console.output.failure {
            if failure != reported { console.printError("Error: \(failure.message)") }
            if status == 0 { status = 1 }
        }
        console.errors.flush()
        if console.errors.failure != nil && status == 0 { status = 1 }
        return status
    }

    /// Parses and runs one subcommand, turning errors into messages and exit statuses.
    ///
    /// - Parameter reported: Set to the output failure the command stopped on, which is reported here.
    static func run(
        _ command: any Command.Type, _ words: [String], console: Console, reported: inout OutputFailure?
    ) -> Int32 {
        do {
            switch try ArgumentParser.parse(words, spec: command.spec) {
            case .help:
                console.output.write(command.spec.helpText)
                return 0
            case .version:
                console.print(versionLine)
                return 0
            case .arguments(let parsed):
                return try command.init(parsed).run(console)
            }
        } catch let error as UsageError {
            reportUsage(error, spec: command.spec, console: console)
            return usageStatus
        } catch let error as ToolError {
            console.printError("Error: \(error.message)")
            return 1
        } catch let error as InspectionError {
            console.printError("Error: \(error.message)")
            return 1
        } catch let failure as OutputFailure {
            console.printError("Error: \(failure.message)")
            reported = failure
            return 1
        } catch {
            console.printError("Error: \(error)")
            return 1
        }
    }

    /// Prints a usage mistake: the error, the usage line, and where to find help.
    static func reportUsage(_ error: UsageError, spec: CommandSpec?, console: Console) {
        console.printError("Error: \(error.message)")
        if let spec {
            console.printError("Usage: \(spec.usage)")
            console.printError("  See 'kvtool help \(spec.name)' for more information.")
        } else {
            console.printError("Usage: \(mainUsage)")
            console.printError("  See 'kvtool --help' for more information.")
        }
    }

    /// The usage line of kvtool itself.
    static let mainUsage = "kvtool <subcommand> [<options>] <arguments>"

    /// The help text of kvtool itself: what it is, and its subcommands.
    static var mainHelp: String {
        var text = """
            OVERVIEW: Inspects KVStore stores from their catalog alone: schema, records, integrity, export and import.

            Stores are opened read-only, except by 'import'. Results go to standard output; errors, warnings and
            progress to standard error. Exit status: 0 on success, 1 on failure (a write that failed included: a full
            disk, a closed pipe), 64 for a usage mistake, 65 for an import's invalid input (nothing written).

            SAFETY: Read-only commands create nothing in the store's directory, and write nothing there but their
            reader slot in an existing lock.mdb. A store without a lock file (a copy, the store of a stopped program)
            is read without one, so none is created; the command fails if a program opened the store meanwhile. Run
            as another user than the store's owner (root, say), kvtool never leaves a lock.mdb the owner cannot
            open: 'import' refuses a store without one unless run as its owner. A lock.mdb that is a symbolic link,
            a hard link, a FIFO or a device, and a data.mdb that is not a regular file, are refused: a check right
            before the open, not a guarantee against someone who swaps the files meanwhile. Files kvtool writes are
            new (written under a temporary name, renamed into place once complete), mode 0600 unless --mode is
            given, and replace an existing file only with --force, and only a regular file of your own.

            USAGE: \(mainUsage)

            OPTIONS:

            """
        for option in OptionSpec.standard {
            text += HelpLayout.entry(
                label: option.shortName.map { "-\($0), --\(option.name)" } ?? "--\(option.name)",
                help: option.help)
        }
        text += "\nSUBCOMMANDS:\n"
        for command in commands {
            text += HelpLayout.entry(label: command.spec.name, help: command.spec.abstract)
        }
        return text + "\n  See 'kvtool help <subcommand>' for detailed help.\n"
    }
}
