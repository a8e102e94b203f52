/// A command as the tool sees it: how its usage line starts, where its help is, and whether `--version` applies.
struct CommandContext {
    /// The command.
    let command: CommandSignature
    /// The name of the tool when the command is one of its subcommands; `nil` when the command is the tool.
    let toolName: String?
    /// The line `--version` prints, or `nil` for a tool without one.
    let version: String?

    /// How the command is called: `kvtool count`, or `kvbench`.
    var path: String {
        toolName.map { "\($0) \(command.configuration.name)" } ?? command.configuration.name
    }

    /// What to run for the command's help: `kvtool help count`, or `kvbench --help`.
    var helpHint: String {
        toolName.map { "\($0) help \(command.configuration.name)" } ?? "\(command.configuration.name) --help"
    }

    private var parser: CommandLineParser {
        CommandLineParser(declarations: command.declarations, acceptsVersion: version != nil)
    }

    /// Parses the command's words into its declarations' values.
    ///
    /// - Throws: ``UsageError`` for a usage mistake.
    func parse<Arguments: ParsableArguments>(
        _: Arguments.Type, _ words: [String]
    ) throws(UsageError) -> Invocation<ParsedArguments<Arguments>> {
        switch try parser.parse(words) {
        case .help: .help(helpText)
        case .version: .version(version ?? "")
        case .given(let given): .run(ParsedArguments(given: given))
        }
    }

    /// Parses the command's words and makes the command.
    ///
    /// - Throws: ``UsageError`` for a usage mistake, the command's initializer's included.
    func parse<Command: ParsableCommand>(_: Command.Type, _ words: [String]) throws(UsageError) -> Invocation<Command> {
        switch try parse(Command.Arguments.self, words) {
        case .help(let text): .help(text)
        case .version(let line): .version(line)
        case .run(let arguments): .run(try Command(arguments))
        }
    }

    /// The usage line after `prefix`, wrapped: `Usage: kvtool count <path> <entity> [--json]`.
    func usage(_ prefix: String) -> String {
        HelpFormatter.usage(prefix, path: path, parts: command.usageParts)
    }

    /// The command's help: OVERVIEW, USAGE, ARGUMENTS, OPTIONS and the discussion.
    var helpText: String {
        var text = HelpFormatter.overview(command.configuration.abstract) + "\n" + usage("USAGE: ")
        if !command.arguments.isEmpty {
            text += "\n" + HelpFormatter.section("ARGUMENTS", command.arguments.map { ($0.helpLabel, $0.help) })
        }
        let options = command.options + parser.standardOptions
        text += "\n" + HelpFormatter.section("OPTIONS", options.map { ($0.helpLabel, $0.help) })
        if let discussion = command.configuration.discussion {
            text += "\n" + HelpFormatter.paragraphs(discussion)
        }
        return text
    }

    /// `Error: <message>`, the usage line and where to find help, for standard error.
    func usageReport(_ error: UsageError) -> String {
        "Error: \(error.message)\n" + usage("Usage: ") + "  See '\(helpHint)' for more information.\n"
    }
}
