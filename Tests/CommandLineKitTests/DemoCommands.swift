import CommandLineKit

/// How fast a demo goes: a choice of strings.
enum Speed: String, CaseIterable, ArgumentValue {
    case fast, safe, slow
}

/// Whether demo commits wait for the disk, chosen by flags.
enum Durability: Equatable {
    case sync, noSync
}

/// `--force` and `--mode`, a group of options that several demo commands take.
struct FileArguments: ParsableArguments {
    let force = Flag("force", help: "Replace the file.")
    let speed = Option<Speed>("speed", valueName: "speed", help: "How fast to write.", default: .safe)
}

/// A command with every kind of declaration.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        name: "demo", abstract: "Shows every kind of declaration.",
        discussion: """
            The first paragraph of the discussion, long enough to be wrapped at the width of the help text, which \
            is a hundred columns wide.
            The second paragraph.
            """)

    struct Arguments: ParsableArguments {
        let path = Argument<String>("path", help: "A path.")
        let rest = Argument<[String]>("rest", help: "More words.")
        let json = Flag.json
        let verbose = Flag("verbose", short: "v", help: "Say more.")
        let limit = Option<Int?>("limit", valueName: "n", help: "At most n.", parser: .integer(in: 0...))
        let conditions = Option<[String]>(
            "where", valueName: "field=value", help: "A condition; repeat for several.")
        let chunkSize = Option<Int>(
            "chunk-size", valueName: "n", help: "Items per chunk.", default: 1000, parser: .integer(in: 1...))
        let scratchDirectory = Option<String?>(
            "scratch-directory", valueName: "dir", help: "Where scratch files go.", defaultDescription: "$TMPDIR")
        let file = FileArguments()
        let durability = FlagChoice(
            default: Durability.noSync, .flag("sync", value: .sync, help: "Wait for the disk."),
            .flag("no-sync", value: .noSync, help: "Do not wait for the disk."))
    }

    let path: String
    let rest: [String]
    let json: Bool
    let verbose: Bool
    let limit: Int?
    let conditions: [String]
    let chunkSize: Int
    let scratchDirectory: String?
    let force: Bool
    let speed: Speed
    let durability: Durability

    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        rest = try arguments[\.rest]
        json = arguments[\.json]
        verbose = arguments[\.verbose]
        limit = try arguments[\.limit]
        conditions = try arguments[\.conditions]
        chunkSize = try arguments[\.chunkSize]
        scratchDirectory = try arguments[\.scratchDirectory]
        force = arguments[\.file.force]
        speed = try arguments[\.file.speed]
        durability = arguments[\.durability]
    }
}

/// A command with a required option, a comma-separated list, an optional argument and a closed range.
struct ChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        name: "child", abstract: "A child process of the demo tool.", isHidden: true)

    struct Arguments: ParsableArguments {
        let name = Argument<String?>("name", help: "A name.")
        let store = Option<String>("store", valueName: "path", help: "The store.")
        let speeds = Option<[Speed]>("speeds", valueName: "names", help: "Speeds to try.", separator: ",")
        let repeats = Option<Int>(
            "repeat", valueName: "n", help: "Runs.", default: 5, parser: .integer(in: 1...100))
        let output = Option<String?>(
            "output", valueName: "file", help: "A file.", parser: .nonEmpty(expecting: "a file name"))
    }

    let name: String?
    let store: String
    let speeds: [Speed]
    let repeats: Int
    let output: String?

    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        name = try arguments[\.name]
        store = try arguments[\.store]
        speeds = try arguments[\.speeds]
        repeats = try arguments[\.repeats]
        output = try arguments[\.output]
        if name == "nobody" { throw UsageError("'nobody' is not a name") }
    }
}

/// A command with at least one argument, and no options.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(name: "list", abstract: "Lists IDs.")

    struct Arguments: ParsableArguments {
        let ids = Argument<[String]>("id", help: "An ID.", isRequired: true)
    }

    let ids: [String]

    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        ids = try arguments[\.ids]
    }
}

/// The demo tool, with the three commands.
var demoTool: CommandLineTool<any ParsableCommand.Type> {
    CommandLineTool(
        name: "demo-tool", abstract: "A tool to test the kit with.", discussion: "Exit status: 0 on success.",
        version: "demo-tool 1.0", subcommands: [DemoCommand.self, ListCommand.self, ChildCommand.self]
    ) { $0.signature }
}
