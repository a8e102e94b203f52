import CommandLineKit
import Testing

/// The help layout: sections, two columns, defaults and choices, flags of a choice, wrapping at 100 columns.
@Suite struct HelpLayoutTests {
    static let demoHelp = """
        OVERVIEW: Shows every kind of declaration.

        USAGE: demo-tool demo <path> [<rest> ...] [--json] [--verbose] [--limit <n>]
                              [--where <field=value> ...] [--chunk-size <n>] [--scratch-directory <dir>]
                              [--force] [--speed <speed>] [--sync | --no-sync]

        ARGUMENTS:
          <path>                  A path.
          <rest>                  More words.

        OPTIONS:
          --json                  Print JSON for scripts instead of text for people.
          -v, --verbose           Say more.
          --limit <n>             At most n.
          --where <field=value>   A condition; repeat for several.
          --chunk-size <n>        Items per chunk. (default: 1000)
          --scratch-directory <dir>
                                  Where scratch files go. (default: $TMPDIR)
          --force                 Replace the file.
          --speed <speed>         How fast to write. (values: fast, safe, slow; default: safe)
          --sync                  Wait for the disk.
          --no-sync               Do not wait for the disk. (default)
          --version               Show the version.
          -h, --help              Show help information.

        The first paragraph of the discussion, long enough to be wrapped at the width of the help text,
        which is a hundred columns wide.

        The second paragraph.

        """

    @Test func aCommandsHelpIsPinned() throws {
        #expect(demoTool.helpText(forSubcommand: "demo") == Self.demoHelp)
        guard case .help(let text) = try demoTool.parse(DemoCommand.self, ["--help"]) else {
            Issue.record("--help shows the help")
            return
        }
        #expect(text == Self.demoHelp)
    }

    @Test func aToolThatIsOneCommandNamesItselfInUsageAndHelp() {
        #expect(ListCommand.helpText.hasPrefix("OVERVIEW: Lists IDs.\n\nUSAGE: list <id> ...\n"))
        #expect(
            ListCommand.usageReport(UsageError("Unexpected argument '--'")) == """
                Error: Unexpected argument '--'
                Usage: list <id> ...
                  See 'list --help' for more information.

                """)
    }

    @Test func longHelpWrapsInItsColumn() {
        struct Wordy: ParsableCommand {
            static let configuration = CommandConfiguration(
                name: "wordy",
                abstract: "An abstract long enough that the overview line wraps before it reaches the hundredth column."
            )
            struct Arguments: ParsableArguments {
                let flag = Flag(
                    "flag",
                    help: "A help text long enough to need two lines in its column, which starts at the twenty-sixth "
                        + "column and ends at the hundredth.")
            }
            init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {}
        }
        #expect(
            Wordy.helpText == """
                OVERVIEW: An abstract long enough that the overview line wraps before it reaches the hundredth
                column.

                USAGE: wordy [--flag]

                OPTIONS:
                  --flag                  A help text long enough to need two lines in its column, which starts at
                                          the twenty-sixth column and ends at the hundredth.
                  -h, --help              Show help information.

                """)
        for line in Wordy.helpText.split(separator: "\n") { #expect(line.count <= 100) }
    }
}
