/// A command: its configuration, its declared arguments, and how it is made from what the parser found.
///
/// A tool's own command protocol refines this one with the `run` method its commands share. A tool that is one
/// command parses with ``parse(_:version:)``; a tool with subcommands routes to them with a ``CommandLineTool``.
///
/// ```swift
/// struct CountCommand: ParsableCommand {
///     static let configuration = CommandConfiguration(name: "count", abstract: "Count an entity's records.")
///
///     struct Arguments: ParsableArguments {
///         let path = Argument<String>("path", help: "The store's directory.")
///         let limit = Option<Int>("limit", valueName: "n", help: "Count at most n.", default: 10, parser: .integer(in: 1...))
///         let json = Flag.json
///     }
///
///     let path: String
///     let limit: Int
///     let json: Bool
///
///     init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
///         path = try arguments[\.path]
///         limit = try arguments[\.limit]
///         json = arguments[\.json]
///     }
/// }
/// ```
package protocol ParsableCommand {
    /// The declarations of the command's arguments, options and flags.
    associatedtype Arguments: ParsableArguments

    /// The command's name and help.
    static var configuration: CommandConfiguration { get }

    /// Makes the command from what the parser found, checking what the declarations cannot (options that exclude
    /// each other, say).
    ///
    /// - Throws: ``UsageError`` for a combination of arguments that makes no sense.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError)
}

extension ParsableCommand {
    /// The command's configuration and declarations, from which its usage line and help are made.
    package static var signature: CommandSignature {
        CommandSignature(configuration: configuration, declarations: Arguments.declarations)
    }

    /// For a tool that is one command: parses the words after the program's name.
    ///
    /// - Parameters:
    ///   - words: The arguments, without the program's name.
    ///   - version: The line `--version` prints; `nil` for a tool without `--version`.
    /// - Returns: Help or the version to print, or the command to run.
    /// - Throws: ``UsageError`` for a usage mistake; print it with ``usageReport(_:)``.
    package static func parse(_ words: [String], version: String? = nil) throws(UsageError) -> Invocation<Self> {
        try CommandContext(command: signature, toolName: nil, version: version).parse(Self.self, words)
    }

    /// For a tool that is one command: the help text, as `--help` prints it.
    package static var helpText: String {
        CommandContext(command: signature, toolName: nil, version: nil).helpText
    }

    /// For a tool that is one command: what to print on standard error for a usage mistake.
    ///
    /// - Parameter error: The mistake.
    /// - Returns: `Error: <message>`, the usage line, and where to find help, each on a line of its own.
    package static func usageReport(_ error: UsageError) -> String {
        CommandContext(command: signature, toolName: nil, version: nil).usageReport(error)
    }
}

/// What parsing a command's words asks for: help, the version, or the command to run.
package enum Invocation<Command> {
    /// `-h` or `--help` was given: the help text to print on standard output, exit status 0.
    case help(String)
    /// `--version` was given: the line to print on standard output, exit status 0.
    case version(String)
    /// The command, made from the parsed arguments.
    case run(Command)
}
