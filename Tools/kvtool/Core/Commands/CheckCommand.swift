/// `kvtool check <path>`: a full integrity check, streamed with bounded memory.
struct CheckCommand: Command {
    static let spec = CommandSpec(
        name: "check", abstract: "Check the store's integrity: catalog, records, indexes, references.",
        discussion: """
            The catalog must be consistent: every entity has its record table, every index its table with the \
            right flags, index and relationship fields fit, relationship targets exist. Every record must decode \
            and hold its key as its id field; every index entry must point to a record that holds the indexed \
            value, and every record have its entries; unique indexes must hold; every reference of a relationship \
            with a stored field must name a record of its target (a dangling reference is a warning when the \
            delete rule is noAction or the relationship allows dangling references, an error otherwise).
            Record and index tables are walked in key order, a chunk of entries per short read transaction, with \
            point lookups for the other direction, so memory stays bounded and a live store is not held back.
            Problems are printed as they are found. The exit status is 0 when there is no error (warnings \
            allowed), 1 otherwise.
            """,
        arguments: [CommonOptions.path],
        options: [CommonOptions.json, CommonOptions.chunkSize(default: CommonOptions.readChunkSize, unit: "entries")])

    /// How many problems `--json` holds in memory; later ones are counted only.
    static let jsonProblemLimit = 10_000

    /// The store's directory.
    let path: String
    /// Whether to print JSON.
    let json: Bool
    /// Entries per read transaction.
    let chunkSize: Int

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.argument("path")
        json = arguments.flag("json")
        chunkSize = try arguments.positiveCount("chunk-size", default: CommonOptions.readChunkSize)
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let checker = try check(store, console: console)
            return checker.errors == 0 ? 0 : 1
        }
    }

    /// Runs the check on an open store, prints the report, and returns the checker with its counts.
    func check(_ store: InspectedStore, console: Console) throws -> IntegrityChecker {
        var problems: [JSONValue] = []
        var isTruncated = false
        let progress = Progress(console: console)
        let checker = IntegrityChecker(store: store, chunkSize: chunkSize, progress: progress) { [json] problem in
            if json {
                if problems.count < Self.jsonProblemLimit { problems.append(problem.json) } else { isTruncated = true }
            } else {
                progress.finish()
                console.print(problem.text)
            }
        }
        try checker.run()
        let statistics = checker.statistics
        if json {
            let members: [JSONMember] = [
                JSONMember("path", .string(store.path)), JSONMember("ok", .bool(checker.errors == 0)),
                JSONMember("errors", .number(String(checker.errors))),
                JSONMember("warnings", .number(String(checker.warnings))),
                JSONMember("entities", .number(String(statistics.entities))),
                JSONMember("records", .number(String(statistics.records))),
                JSONMember("indexEntries", .number(String(statistics.indexEntries))),
                JSONMember("references", .number(String(statistics.references))),
                JSONMember("problems", .array(problems)), JSONMember("problemsTruncated", .bool(isTruncated)),
            ]
            console.print(JSONValue.object(members).serialized(pretty: true))
        } else {
            let checked =
                "\(Formatting.count(statistics.entities, "entity", plural: "entities")), "
                + "\(Formatting.count(statistics.records, "record")), "
                + "\(Formatting.count(statistics.indexEntries, "index entry", plural: "index entries")), "
                + "\(Formatting.count(statistics.references, "reference")) checked"
            if checker.errors == 0 && checker.warnings == 0 {
                console.print("No problems: \(checked).")
            } else {
                console.print(
                    "\(Formatting.count(checker.errors, "error")), \(Formatting.count(checker.warnings, "warning")): "
                        + "\(checked).")
            }
        }
        return checker
    }
}
