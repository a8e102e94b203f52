/// `kvtool help [<subcommand>]`: kvtool's help, or a subcommand's.
struct HelpCommand: Command {
    static let spec = CommandSpec(
        name: "help", abstract: "Show kvtool's help, or a subcommand's.", discussion: nil,
        arguments: [ArgumentSpec(name: "subcommand", help: "The subcommand to explain.", arity: .optional)],
        options: [])

    /// The subcommand asked about, if any.
    let subcommand: String?

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments) throws(UsageError) {
        subcommand = arguments.arguments("subcommand").first
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        guard let subcommand else {
            console.output.write(KVTool.mainHelp)
            return 0
        }
        guard let command = KVTool.commands.first(where: { $0.spec.name == subcommand }) else {
            throw UsageError("Unknown subcommand '\(subcommand)'")
        }
        console.output.write(command.spec.helpText)
        return 0
    }
}
