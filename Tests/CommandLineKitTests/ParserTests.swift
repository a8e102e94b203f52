import CommandLineKit
import Testing

/// Parses `words` as the arguments of `command` in the demo tool, and makes the command.
func parse<Command: ParsableCommand>(_ command: Command.Type, _ words: [String]) throws(UsageError) -> Command {
    guard case .run(let parsed) = try demoTool.parse(command, words) else { throw UsageError("help or version") }
    return parsed
}

/// Parses `words` as the arguments of the demo command.
func demo(_ words: String...) throws(UsageError) -> DemoCommand {
    try parse(DemoCommand.self, words)
}

/// The parser: both spellings of options, positional arguments around them, `--`, defaults, and each value type.
@Suite struct ParserTests {
    @Test func readsOptionsInEitherSpellingAndPositionalsAround() throws {
        let command = try demo(
            "--limit=3", "p", "--where", "a=1", "x", "--json", "-v", "--where", "b=-2", "--", "--json", "-")
        #expect(command.path == "p")
        #expect(command.rest == ["x", "--json", "-"])
        #expect(command.limit == 3)
        #expect(command.conditions == ["a=1", "b=-2"])
        #expect(command.json)
        #expect(command.verbose)
        #expect(try demo("p", "--where", "-1", "--limit", "0").conditions == ["-1"])
        #expect(try demo("p", "--scratch-directory", "-").scratchDirectory == "-")
        #expect(try demo("p", "--where=").conditions == [""])
    }

    @Test func givesDefaultsForWhatIsNotGiven() throws {
        let command = try demo("p")
        #expect(command.rest == [])
        #expect(!command.json && !command.verbose && !command.force)
        #expect(command.limit == nil)
        #expect(command.conditions == [])
        #expect(command.chunkSize == 1000)
        #expect(command.scratchDirectory == nil)
        #expect(command.speed == .safe)
        #expect(command.durability == .noSync)
    }

    @Test func readsGroupsChoicesAndLists() throws {
        let command = try demo("p", "--force", "--speed", "fast", "--sync", "--chunk-size", "7")
        #expect(command.force)
        #expect(command.speed == .fast)
        #expect(command.durability == .sync)
        #expect(command.chunkSize == 7)
        #expect(try demo("p", "--no-sync").durability == .noSync)
        let child = try parse(ChildCommand.self, ["--speeds", "fast,slow", "--store=s", "--speeds", "safe", "n"])
        #expect(child.speeds == [.fast, .slow, .safe])
        #expect(child.store == "s")
        #expect(child.name == "n")
        #expect(child.repeats == 5)
        #expect(try parse(ChildCommand.self, ["--store", "s"]).name == nil)
        #expect(try parse(ChildCommand.self, ["--store", "s", "--repeat", "100"]).repeats == 100)
        #expect(try parse(ListCommand.self, ["a", "b"]).ids == ["a", "b"])
    }

    @Test func helpAndVersionWinBeforeTheTerminator() throws {
        for words in [["--bogus", "-h"], ["--help"], ["p", "--limit", "ten", "--help"]] {
            guard case .help(let text) = try demoTool.parse(DemoCommand.self, words) else {
                Issue.record("\(words): help wins over other mistakes")
                continue
            }
            #expect(text.hasPrefix("OVERVIEW: Shows every kind of declaration.\n"))
        }
        guard case .version(let line) = try demoTool.parse(DemoCommand.self, ["--nope", "--version"]) else {
            Issue.record("the version wins over other mistakes")
            return
        }
        #expect(line == "demo-tool 1.0")
        #expect(try demo("p", "--", "--help", "-h", "--version").rest == ["--help", "-h", "--version"])
    }

    @Test func aToolWithoutAVersionHasNoVersionOption() {
        #expect(throws: UsageError("Unknown option '--version'")) { try ListCommand.parse(["a", "--version"]) }
        #expect(ListCommand.helpText.contains("  -h, --help") && !ListCommand.helpText.contains("--version"))
    }

    @Test func theCommandsInitializerMayRefuseACombination() {
        #expect(throws: UsageError("'nobody' is not a name")) {
            try parse(ChildCommand.self, ["nobody", "--store", "s"])
        }
    }

    @Test(arguments: [
        (["p", "--limt", "3"], "Unknown option '--limt'; did you mean '--limit'?"),
        (["p", "--jsn"], "Unknown option '--jsn'; did you mean '--json'?"),
        (["p", "--frobnicate=3"], "Unknown option '--frobnicate'"),
        (["p", "-x"], "Unknown option '-x'"),
        (["p", "-json"], "Unknown option '-json'; did you mean '--json'?"),
        (["p", "-1"], "Unknown option '-1'"),
        (["p", "--json=yes"], "The flag '--json' does not take a value"),
        (["p", "--help=yes"], "The flag '--help' does not take a value"),
        (["p", "--json", "--json"], "The flag '--json' was given more than once"),
        (["p", "-v", "--verbose"], "The flag '--verbose' was given more than once"),
        (["p", "--limit"], "Missing value for '--limit <n>'"),
        (["p", "--limit", "--json"], "Missing value for '--limit <n>'"),
        (["p", "--limit", "1", "--limit=2"], "The option '--limit <n>' was given more than once"),
        (["--json"], "Missing expected argument '<path>'"),
        (["p", "--limit", "ten"], "The value 'ten' is invalid for '--limit <n>': expected a non-negative integer"),
        (["p", "--limit", "-1"], "The value '-1' is invalid for '--limit <n>': expected a non-negative integer"),
        (["p", "--chunk-size=0"], "The value '0' is invalid for '--chunk-size <n>': expected a positive integer"),
        (["p", "--speed", "warp"], "The value 'warp' is invalid for '--speed <speed>': expected fast, safe or slow"),
        (["p", "--sync", "--no-sync"], "--sync and --no-sync cannot be used together"),
        (["p", "--no-sync", "--sync"], "--sync and --no-sync cannot be used together"),
        (["p", "--sync", "--sync"], "The flag '--sync' was given more than once"),
    ])
    func usageMistakesOfTheDemoCommand(_ words: [String], _ message: String) {
        #expect(throws: UsageError(message)) { try parse(DemoCommand.self, words) }
    }

    @Test(arguments: [
        ([String](), "Missing expected option '--store <path>'"),
        (["n", "m", "--store", "s"], "Unexpected argument 'm'"),
        (
            ["--store", "s", "--speeds", "fast,"],
            "The value '' is invalid for '--speeds <names>': expected fast, safe or slow"
        ),
        (
            ["--store", "s", "--repeat", "101"],
            "The value '101' is invalid for '--repeat <n>': expected an integer from 1 to 100"
        ),
        (["--store", "s", "--output="], "The value '' is invalid for '--output <file>': expected a file name"),
        (["--store", "a", "--store", "b"], "The option '--store <path>' was given more than once"),
    ])
    func usageMistakesOfTheChildCommand(_ words: [String], _ message: String) {
        #expect(throws: UsageError(message)) { try parse(ChildCommand.self, words) }
    }

    /// A command whose repeatable option must be given at least once.
    struct ServersCommand: ParsableCommand {
        static let configuration = CommandConfiguration(name: "servers", abstract: "Connects.")

        struct Arguments: ParsableArguments {
            let servers = Option<[String]>(
                "server", valueName: "url", help: "A server; repeat for several.", isRequired: true)
        }

        let servers: [String]

        init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
            servers = try arguments[\.servers]
        }
    }

    @Test func aRequiredRepeatableOptionNeedsOneValue() throws {
        #expect(throws: UsageError("Missing expected option '--server <url>'")) {
            try ServersCommand.parse([])
        }
        guard case .run(let command) = try ServersCommand.parse(["--server", "a", "--server=b"]) else {
            Issue.record("not run")
            return
        }
        #expect(command.servers == ["a", "b"])
        #expect(ServersCommand.helpText.contains("USAGE: servers --server <url> ...\n"))
    }

    @Test func aRequiredRepeatingArgumentNeedsOneWord() {
        #expect(throws: UsageError("Missing expected argument '<id>'")) { try parse(ListCommand.self, []) }
        #expect(throws: UsageError("Missing expected argument '<id>'")) { try parse(ListCommand.self, ["--"]) }
    }

    @Test func valueParsersSayWhatTheyExpect() {
        #expect(ValueParser<Int>.integer.parse("-7") == -7)
        #expect(ValueParser<Int>.integer.parse("7x") == nil)
        #expect(ValueParser<Int>.integer(in: 3...).expectation == "an integer of at least 3")
        #expect(ValueParser<UInt64>.unsigned.parse("18446744073709551615") == UInt64.max)
        #expect(ValueParser<UInt64>.unsigned.parse("-1") == nil)
        #expect(ValueParser<Speed>.choice.choices == ["fast", "safe", "slow"])
        #expect(ValueParser<Speed>.choice.describe(.fast) == "fast")
    }
}
