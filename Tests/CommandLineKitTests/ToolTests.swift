import CommandLineKit
import Testing

/// A tool's routing to its subcommands, `help`, and the usage errors it prints.
@Suite struct ToolTests {
    static let toolUsage = """
        Usage: demo-tool <subcommand> [<options>] <arguments>
          See 'demo-tool --help' for more information.

        """

    static let mainHelp = """
        OVERVIEW: A tool to test the kit with.

        USAGE: demo-tool <subcommand> [<options>] <arguments>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          demo                    Shows every kind of declaration.
          list                    Lists IDs.
          help                    Show demo-tool's help, or a subcommand's.

          See 'demo-tool help <subcommand>' for detailed help.

        Exit status: 0 on success.

        """

    @Test func theFirstWordLeadsToHelpTheVersionOrASubcommand() {
        for words in [[], ["-h"], ["--help"], ["help"]] {
            guard case .help(let text) = demoTool.route(words) else {
                Issue.record("\(words) shows the tool's help")
                continue
            }
            #expect(text == Self.mainHelp)
        }
        guard case .version(let line) = demoTool.route(["--version"]) else {
            Issue.record("--version shows the version")
            return
        }
        #expect(line == "demo-tool 1.0")
        guard case .subcommand(let command, let words) = demoTool.route(["list", "a", "--help"]) else {
            Issue.record("list is a subcommand")
            return
        }
        #expect(command is ListCommand.Type)
        #expect(words == ["a", "--help"])
        guard case .subcommand(let hidden, _) = demoTool.route(["child"]) else {
            Issue.record("a hidden subcommand still runs")
            return
        }
        #expect(hidden is ChildCommand.Type)
    }

    @Test func helpExplainsEachSubcommandHiddenOrNot() {
        for (words, name) in [(["help", "list"], "list"), (["help", "child"], "child"), (["help", "help"], "help")] {
            guard case .help(let text) = demoTool.route(words) else {
                Issue.record("\(words) shows help")
                continue
            }
            #expect(text == demoTool.helpText(forSubcommand: name))
            #expect(text.contains("USAGE: demo-tool \(name)"))
        }
        guard case .help(let text) = demoTool.route(["help", "-h"]) else {
            Issue.record("help -h shows help's help")
            return
        }
        #expect(
            text == """
                OVERVIEW: Show demo-tool's help, or a subcommand's.

                USAGE: demo-tool help [<subcommand>]

                ARGUMENTS:
                  <subcommand>            The subcommand to explain.

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                """)
    }

    @Test(arguments: [
        (["inspect"], "Error: Unknown subcommand 'inspect'\n" + toolUsage),
        (["lst"], "Error: Unknown subcommand 'lst'; did you mean 'list'?\n" + toolUsage),
        (["--frob"], "Error: Unknown option '--frob'\n" + toolUsage),
        (
            ["help", "nope"],
            """
            Error: Unknown subcommand 'nope'
            Usage: demo-tool help [<subcommand>]
              See 'demo-tool help help' for more information.

            """
        ),
        (
            ["help", "list", "demo"],
            """
            Error: Unexpected argument 'demo'
            Usage: demo-tool help [<subcommand>]
              See 'demo-tool help help' for more information.

            """
        ),
    ])
    func routingMistakesAreReportedWithTheUsageLine(_ words: [String], _ report: String) {
        guard case .usageError(let text) = demoTool.route(words) else {
            Issue.record("\(words) is a usage error")
            return
        }
        #expect(text == report)
    }

    @Test func aSubcommandsMistakeIsReportedWithItsUsageLine() {
        #expect(
            demoTool.usageReport(UsageError("Missing expected argument '<id>'"), for: ListCommand.self) == """
                Error: Missing expected argument '<id>'
                Usage: demo-tool list <id> ...
                  See 'demo-tool help list' for more information.

                """)
        #expect(
            ChildCommand.usageReport(UsageError("Missing expected option '--store <path>'")) == """
                Error: Missing expected option '--store <path>'
                Usage: child [<name>] --store <path> [--speeds <names> ...] [--repeat <n>] [--output <file>]
                  See 'child --help' for more information.

                """)
    }

    @Test func everySignatureOfTheDemoToolIsSound() {
        for signature in demoTool.signatures {
            #expect(signature.problems == [], "\(signature.configuration.name)")
        }
    }

    @Test func mistakesInDeclarationsAreFound() {
        struct Clashing: ParsableCommand {
            static let configuration = CommandConfiguration(name: "clashing", abstract: "Clashes.")
            struct Arguments: ParsableArguments {
                let rest = Argument<[String]>("rest", help: "The rest.")
                let after = Argument<String>("after", help: "Never filled.")
                let json = Flag.json
                let again = Flag("json", short: "h", help: "JSON again.")
                let help = Flag("help", help: "Help again.")
            }
            init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {}
        }
        #expect(
            Clashing.signature.problems == [
                "'--json' is declared twice", "'-h' is declared twice", "'--help' is declared twice",
                "'<after>' follows an argument that takes the rest",
            ])
    }
}
