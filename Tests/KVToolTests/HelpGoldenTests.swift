import Testing

@testable import KVToolCore

/// Help texts and the version, pinned.
@Suite struct HelpGoldenTests {
    static let mainHelp = """
        OVERVIEW: Inspects KVStore stores from their catalog alone: schema, records, integrity, export and import.

        Stores are opened read-only, except by 'import'. Results go to standard output; errors, warnings and
        progress to standard error. Exit status: 0 on success, 1 on failure (a write that failed included: a full
        disk, a closed pipe), 64 for a usage mistake.

        SAFETY: Read-only commands create nothing in the store's directory, and write nothing there but their
        reader slot in an existing lock.mdb. A store without a lock file (a copy, the store of a stopped program)
        is read without one, so none is created; the command fails if a program opened the store meanwhile. Run
        as another user than the store's owner (root, say), kvtool never leaves a lock.mdb the owner cannot
        open: 'import' refuses a store without one unless run as its owner. A lock.mdb that is a symbolic link,
        a hard link, a FIFO or a device, and a data.mdb that is not a regular file, are refused: a check right
        before the open, not a guarantee against someone who swaps the files meanwhile. Files kvtool writes are
        new (written under a temporary name, renamed into place once complete), mode 0600 unless --mode is
        given, and replace an existing file only with --force, and only a regular file of your own.

        USAGE: kvtool <subcommand> [<options>] <arguments>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          info                    Show the store's format, sizes, readers and tables.
          schema                  Show each entity's fields, indexes, constraints and
                                  relationships.
          count                   Count an entity's records, or those that meet
                                  conditions.
          list                    List an entity's records, as a table or as JSON Lines.
          get                     Print records by ID as pretty JSON, with their related
                                  records.
          extract                 Write a record's external value to a file, chunk by
                                  chunk.
          export                  Export records as JSON Lines, losslessly.
          import                  Import JSON Lines (as 'export' writes them) into an
                                  existing store.
          check                   Check the store's integrity: catalog, records,
                                  indexes, references.
          copy                    Copy the store to a new directory as a consistent
                                  snapshot.
          readers                 List the reader slots in use; clear those of dead
                                  processes.
          help                    Show kvtool's help, or a subcommand's.

          See 'kvtool help <subcommand>' for detailed help.

        """

    static let countHelp = """
        OVERVIEW: Count an entity's records, or those that meet conditions.

        USAGE: kvtool count <path> <entity> [--where <field=value> ...] [--json]

        ARGUMENTS:
          <path>                  The store's directory (the one that holds data.mdb).
          <entity>                The entity, as the catalog names it (see 'kvtool
                                  schema').

        OPTIONS:
          --where <field=value>   Only records whose field equals the value (parsed as
                                  the field's kind: int, uint, double, bool, string,
                                  uuid, ISO 8601 date, or null); repeat to require
                                  several.
          --json                  Print JSON for scripts instead of text for people.
          --version               Show the version.
          -h, --help              Show help information.

        Without conditions the count is the record table's size. An equality on the
        fields of a ready index is looked up in the index (its entries are counted
        without reading records when the index covers every condition); other conditions
        are checked on each record of a scan.

        """

    @Test func mainHelpIsPinned() {
        for arguments in [[], ["--help"], ["-h"], ["help"]] {
            #expect(kvtool(arguments: arguments) == RunResult(status: 0, output: Self.mainHelp, errors: ""))
        }
    }

    @Test func subcommandHelpIsPinned() {
        #expect(kvtool("help", "count") == RunResult(status: 0, output: Self.countHelp, errors: ""))
        #expect(kvtool("count", "--help") == RunResult(status: 0, output: Self.countHelp, errors: ""))
        #expect(kvtool("count", "/no/such/store", "Task", "--frobnicate", "-h").output == Self.countHelp)
    }

    @Test(arguments: KVTool.commandNames)
    func everySubcommandHasHelpAndVersion(_ name: String) {
        let help = kvtool("help", name)
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("OVERVIEW: "))
        #expect(help.output.contains("USAGE: kvtool \(name)"))
        #expect(help.output.contains("  -h, --help              Show help information.\n"))
        #expect(kvtool(name, "--help") == help)
        #expect(kvtool(name, "-h") == help)
        #expect(
            kvtool(name, "--version") == RunResult(status: 0, output: "kvtool 0.1.0 (KVStore format 2)\n", errors: ""))
        for line in help.output.split(separator: "\n") where !line.hasPrefix("USAGE:") {
            #expect(line.count <= 80, "\(name): \(line)")
        }
    }

    @Test func versionIsPinned() {
        #expect(kvtool("--version") == RunResult(status: 0, output: "kvtool 0.1.0 (KVStore format 2)\n", errors: ""))
    }

    @Test func helpOfAnUnknownSubcommandIsAUsageError() {
        let result = kvtool("help", "nope")
        #expect(result.status == 64)
        #expect(
            result.errors == """
                Error: Unknown subcommand 'nope'
                Usage: kvtool help [<subcommand>]
                  See 'kvtool help help' for more information.

                """)
    }
}
