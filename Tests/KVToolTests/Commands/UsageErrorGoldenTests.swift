import Testing

/// The usage errors kvtool gets from the command-line kit, pinned as kvtool prints them: a suggestion for a
/// misspelled option or subcommand, an option given twice, a value outside its choices.
@Suite struct UsageErrorGoldenTests {
    @Test func aMisspelledOptionOrSubcommandGetsASuggestion() {
        #expect(
            kvtool("count", "/tmp", "Task", "--jsn")
                == RunResult(
                    status: 64, output: "",
                    errors: "Error: Unknown option '--jsn'; did you mean '--json'?\n" + ErrorGoldenTests.countUsage))
        #expect(
            kvtool("chek", "/tmp")
                == RunResult(
                    status: 64, output: "",
                    errors: """
                        Error: Unknown subcommand 'chek'; did you mean 'check'?
                        Usage: kvtool <subcommand> [<options>] <arguments>
                          See 'kvtool --help' for more information.

                        """))
    }

    @Test func anOptionGivenTwiceIsAUsageError() {
        #expect(
            kvtool("count", "/tmp", "Task", "--json", "--json").errors
                == "Error: The flag '--json' was given more than once\n" + ErrorGoldenTests.countUsage)
        let result = kvtool("list", "/tmp", "Task", "--limit", "1", "--limit=2")
        #expect(result.status == 64)
        #expect(result.errors.hasPrefix("Error: The option '--limit <n>' was given more than once\n"))
    }

    @Test func aValueOutsideItsChoicesIsAUsageError() {
        let result = kvtool("import", "/nonexistent", "in.jsonl", "--on-conflict", "maybe")
        #expect(result.status == 64)
        #expect(
            result.errors
                == """
                Error: The value 'maybe' is invalid for '--on-conflict <policy>': expected fail, replace or skip
                Usage: kvtool import <path> [<file>] [--on-conflict <policy>] [--resume] [--abandon] [--dry-run]
                                     [--chunk-size <n>] [--chunk-bytes <n>] [--scratch-directory <dir>]
                  See 'kvtool help import' for more information.

                """)
    }
}
