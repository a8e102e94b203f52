import CommandLineKit
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
/// option, a missing argument, a malformed UUID or `--where`, a bad number), for `import` 65 for an input that
/// does not check out (nothing was written), and for `check` 2 for a store it cannot read at all.
public enum KVTool {
    /// kvtool's version.
    public static let version = "0.1.0"

    /// The exit status of a usage mistake (`EX_USAGE` in sysexits.h).
    public static let usageStatus: Int32 = ExitCode.usage.rawValue

    /// The subcommands, in the order help lists them (the kit adds `help`).
    static var commands: [any Command.Type] {
        [
            InfoCommand.self, SchemaCommand.self, CountCommand.self, ListCommand.self, GetCommand.self,
            ExtractCommand.self, HistoryCommand.self, ExportCommand.self, ImportCommand.self, CheckCommand.self,
            CopyCommand.self, ReadersCommand.self, ReplicatePublishCommand.self, ReplicateFollowCommand.self,
            ReplicateStatusCommand.self,
        ]
    }

    /// The names of the subcommands, `help` included, in the order help lists them.
    static var commandNames: [String] {
        tool.signatures.map(\.configuration.name)
    }

    /// The version line `--version` prints.
    static var versionLine: String {
        "kvtool \(version) (KVStore format \(Catalog.formatVersion))"
    }

    /// kvtool's command line: its subcommands, help and version.
    static var tool: CommandLineTool<any Command.Type> {
        CommandLineTool(
            name: "kvtool",
            abstract:
                "Inspects KVStore stores from their catalog alone: schema, records, integrity, export and import; "
                + "replicates them through NATS JetStream.",
            discussion: """
                Stores are opened read-only, except by 'import' and 'replicate-follow'; the 'replicate-*' commands \
                open them through the library, as a program does, and connect to NATS servers. Results go to \
                standard output; errors, warnings and progress to standard error. Exit status: 0 on success, 1 on \
                failure (a write that failed included: a full disk, a closed pipe), 2 when 'check' cannot read the \
                store at all, 64 for a usage mistake, 65 for an import's invalid input (nothing written).
                SAFETY: Read-only commands create nothing in the store's directory, and write nothing there but their \
                reader slot in an existing lock.mdb ('replicate-publish' and 'replicate-status', which open the store \
                as a program does, create a missing lock.mdb). A store without a lock file (a copy, the store of a \
                stopped program) is read without one, so none is created; the command fails if a program opened the \
                store meanwhile. Run as another user than the store's owner (root, say), kvtool never leaves a \
                lock.mdb the owner cannot open: 'import' and the 'replicate-*' commands refuse a store without one \
                unless run as its owner. A lock.mdb that is a symbolic link, a hard link, a FIFO or a device, and a \
                data.mdb that is not a regular file, are refused: a check right before the open, not a guarantee \
                against someone who swaps the files meanwhile. Files kvtool writes are new (written under a \
                temporary name, renamed into place once complete), mode 0600 unless --mode is given, and replace an \
                existing file only with --force, and only a regular file of your own.
                """,
            version: versionLine, subcommands: commands
        ) { $0.signature }
    }

    /// Runs kvtool with `arguments` (without the program's name) and returns the exit status.
    ///
    /// - Parameters:
    ///   - arguments: The words after `kvtool`: a subcommand, its options and arguments.
    ///   - console: Where to write; the process's standard output and error by default.
    /// - Returns: 0 on success, 1 for a failure, 64 for a usage mistake.
    public static func run(arguments: some Sequence<String>, console: Console = .standard()) -> Int32 {
        var reported: OutputFailure?
        let status: Int32
        switch tool.route(Array(arguments)) {
        case .help(let text):
            console.output.write(text)
            status = ExitCode.success.rawValue
        case .version(let line):
            console.print(line)
            status = ExitCode.success.rawValue
        case .usageError(let report):
            console.errors.write(report)
            status = usageStatus
        case .subcommand(let command, let words):
            status = run(command, words, console: console, reported: &reported)
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
    static func run<C: Command>(
        _ command: C.Type, _ words: [String], console: Console, reported: inout OutputFailure?
    ) -> Int32 {
        do {
            switch try tool.parse(command, words) {
            case .help(let text):
                console.output.write(text)
                return ExitCode.success.rawValue
            case .version(let line):
                console.print(line)
                return ExitCode.success.rawValue
            case .run(let parsed):
                return try parsed.run(console)
            }
        } catch let error as UsageError {
            console.errors.write(tool.usageReport(error, for: command))
            return usageStatus
        } catch let error as ToolError {
            console.printError("Error: \(error.message)")
            return ExitCode.failure.rawValue
        } catch let error as InspectionError {
            console.printError("Error: \(error.message)")
            return ExitCode.failure.rawValue
        } catch let failure as OutputFailure {
            console.printError("Error: \(failure.message)")
            reported = failure
            return ExitCode.failure.rawValue
        } catch {
            console.printError("Error: \(error)")
            return ExitCode.failure.rawValue
        }
    }
}
