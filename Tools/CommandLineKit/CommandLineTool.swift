/// A tool with subcommands: `<tool> <subcommand> [<options>] <arguments>`, with `-h`/`--help`, `--version` and
/// `<tool> help [<subcommand>]`.
///
/// The tool routes the first word to a subcommand, parses the rest against the subcommand's declarations, and makes
/// the help texts and usage errors, so every tool built on it reads the same. `Subcommand` is whatever the tool
/// runs, usually the metatype of its own command protocol:
///
/// ```swift
/// let tool = CommandLineTool(
///     name: "kvtool", abstract: "Inspects KVStore stores.", version: "kvtool 0.1.0",
///     subcommands: [InfoCommand.self, CountCommand.self] as [any Command.Type]) { $0.signature }
/// switch tool.route(arguments) {
/// case .help(let text), .version(let text): print(text, terminator: "")
/// case .usageError(let report): printError(report)
/// case .subcommand(let command, let words): run(command, words)
/// }
/// ```
package struct CommandLineTool<Subcommand> {
    /// The tool's name, as it is run: `kvtool`.
    package let name: String
    /// One line for the OVERVIEW of the tool's help.
    package let abstract: String
    /// Paragraphs for the end of the tool's help, one per line.
    package let discussion: String?
    /// The line `--version` prints, or `nil` for a tool without `--version`.
    package let version: String?
    private let subcommands: [(value: Subcommand, signature: CommandSignature)]

    /// Creates a tool.
    ///
    /// - Parameters:
    ///   - name: The tool's name.
    ///   - abstract: One line that says what the tool does.
    ///   - discussion: Paragraphs for the end of the tool's help, one per line.
    ///   - version: The line `--version` prints; `nil` for none.
    ///   - subcommands: The subcommands, in the order help lists them; `help` is added after them.
    ///   - signature: The signature of a subcommand, usually its type's ``ParsableCommand/signature``.
    package init(
        name: String, abstract: String, discussion: String? = nil, version: String? = nil, subcommands: [Subcommand],
        signature: (Subcommand) -> CommandSignature
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.subcommands = subcommands.map { ($0, signature($0)) }
    }

    /// The signatures of the subcommands, `help` last.
    package var signatures: [CommandSignature] {
        subcommands.map(\.signature) + [helpSignature]
    }

    /// Where the first word leads.
    ///
    /// - Parameter words: The arguments, without the program's name.
    /// - Returns: Help or the version to print on standard output, a usage error to print on standard error, or the
    ///   subcommand to parse the rest of the words with ``parse(_:_:)``.
    package func route(_ words: [String]) -> Route<Subcommand> {
        guard let first = words.first, first != "-h", first != "--help" else { return .help(helpText) }
        if first == "--version", let version { return .version(version) }
        if first == "help" { return routeHelp(Array(words.dropFirst())) }
        if first.hasPrefix("-") && first != "-" {
            return .usageError(usageReport(UsageError("Unknown option '\(first)'")))
        }
        guard let subcommand = subcommands.first(where: { $0.signature.configuration.name == first }) else {
            return .usageError(usageReport(unknownSubcommand(first)))
        }
        return .subcommand(subcommand.value, Array(words.dropFirst()))
    }

    /// Parses a subcommand's words (those after its name) and makes the subcommand.
    ///
    /// - Throws: ``UsageError`` for a usage mistake, the command's initializer's included; print it with
    ///   ``usageReport(_:for:)``.
    package func parse<Command: ParsableCommand>(
        _ command: Command.Type, _ words: [String]
    ) throws(UsageError) -> Invocation<Command> {
        try context(command.signature).parse(command, words)
    }

    /// What to print on standard error for a usage mistake in a subcommand: `Error: <message>`, its usage line, and
    /// `See '<tool> help <subcommand>' for more information.`
    package func usageReport<Command: ParsableCommand>(_ error: UsageError, for command: Command.Type) -> String {
        context(command.signature).usageReport(error)
    }

    /// The tool's help: OVERVIEW, USAGE, OPTIONS, SUBCOMMANDS (hidden ones left out) and the discussion.
    package var helpText: String {
        var text = HelpFormatter.overview(abstract) + "\n" + usage("USAGE: ")
        let options = CommandLineParser(declarations: [], acceptsVersion: version != nil).standardOptions
        text += "\n" + HelpFormatter.section("OPTIONS", options.map { ($0.helpLabel, $0.help) })
        let listed = signatures.filter { !$0.configuration.isHidden }.map(\.configuration)
        text += "\n" + HelpFormatter.section("SUBCOMMANDS", listed.map { ($0.name, $0.abstract) })
        text += "\n  See '\(name) help <subcommand>' for detailed help.\n"
        if let discussion { text += "\n" + HelpFormatter.paragraphs(discussion) }
        return text
    }

    /// The help of the subcommand named `name` (hidden or not, `help` included), or `nil` for none.
    package func helpText(forSubcommand name: String) -> String? {
        signatures.first { $0.configuration.name == name }.map { context($0).helpText }
    }

    /// What to print on standard error for a usage mistake before any subcommand: the error, the tool's usage line,
    /// and `See '<tool> --help' for more information.`
    package func usageReport(_ error: UsageError) -> String {
        "Error: \(error.message)\n" + usage("Usage: ") + "  See '\(name) --help' for more information.\n"
    }

    /// `kvtool <subcommand> [<options>] <arguments>`; `<arguments>` only when a listed subcommand takes some.
    private func usage(_ prefix: String) -> String {
        let takesArguments = subcommands.contains {
            !$0.signature.configuration.isHidden && !$0.signature.arguments.isEmpty
        }
        return HelpFormatter.usage(
            prefix, path: name, parts: ["<subcommand>", "[<options>]"] + (takesArguments ? ["<arguments>"] : []))
    }

    private func context(_ signature: CommandSignature) -> CommandContext {
        CommandContext(command: signature, toolName: name, version: version)
    }

    private func unknownSubcommand(_ name: String) -> UsageError {
        let listed = signatures.filter { !$0.configuration.isHidden }.map(\.configuration.name)
        return UsageError("Unknown subcommand '\(name)'" + Suggestion.text(for: name, among: listed))
    }

    // MARK: - help

    /// The arguments of `help`.
    private struct HelpArguments: ParsableArguments {
        let subcommand = Argument<String?>("subcommand", help: "The subcommand to explain.")
    }

    private var helpSignature: CommandSignature {
        CommandSignature(
            configuration: CommandConfiguration(name: "help", abstract: "Show \(name)'s help, or a subcommand's."),
            declarations: HelpArguments.declarations)
    }

    /// `help [<subcommand>]`.
    private func routeHelp(_ words: [String]) -> Route<Subcommand> {
        let help = context(helpSignature)
        do throws(UsageError) {
            switch try help.parse(HelpArguments.self, words) {
            case .help(let text): return .help(text)
            case .version(let line): return .version(line)
            case .run(let arguments):
                guard let subcommand = try arguments[\.subcommand] else { return .help(helpText) }
                guard let text = helpText(forSubcommand: subcommand) else { throw unknownSubcommand(subcommand) }
                return .help(text)
            }
        } catch {
            return .usageError(help.usageReport(error))
        }
    }
}

/// Where a tool's first word leads.
package enum Route<Subcommand> {
    /// Help to print on standard output, exit status 0.
    case help(String)
    /// The version line to print on standard output, exit status 0.
    case version(String)
    /// A usage mistake, ready to print on standard error, exit status 64.
    case usageError(String)
    /// The subcommand, and the words after its name.
    case subcommand(Subcommand, [String])
}
