import CommandLineKit
import KVStoreInspection

/// `kvtool check <path>`: a full integrity check, streamed with bounded memory.
struct CheckCommand: Command {
    static let configuration = CommandConfiguration(
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
            Before any of that, every page of the file is read with a bounds-checked parser, never through LMDB, \
            which trusts its pages: the meta pages, each table's branch, leaf and overflow pages, duplicate \
            sub-pages and sub-databases, and the free list (offsets, key order, depths, counts, every page used \
            once). That walk holds one read transaction, so it sees one consistent snapshot of a live store, and \
            holds back the reuse of that snapshot's pages while it runs. A table with a damaged page is reported \
            and not read further. Records, external chunks and catalog entries carry checksums, which are \
            verified. A migration under way and a streamed external write under way are reported as such.
            Problems are printed as they are found. The exit status is 0 when there is no error (warnings \
            allowed), 1 when damage or inconsistency was found, 2 when the store could not be read at all (a damaged \
            meta page, main table or catalog), 64 for a usage mistake.
            """)

    /// The arguments and options of `kvtool check`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let json = Flag.json
        let chunkSize = CommonOptions.chunkSize(default: CommonOptions.readChunkSize, unit: "entries")
    }

    /// How many problems `--json` holds in memory; later ones are counted only.
    static let jsonProblemLimit = 10_000

    /// The exit status when the store could not be read at all.
    static let unreadableStatus: Int32 = 2

    /// The store's directory.
    let path: String
    /// Whether to print JSON.
    let json: Bool
    /// Entries per read transaction.
    let chunkSize: Int

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        json = arguments[\.json]
        chunkSize = try arguments[\.chunkSize]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        let store: InspectedStore
        do {
            store = try InspectedStore.open(path, pages: .full)
        } catch let error as InspectionError {
            console.printError("Error: \(error.message)")
            return Self.unreadableStatus
        }
        defer { store.close() }
        let summary = try check(store, console: console)
        try store.checkNoProgramOpenedIt()
        return summary.isConsistent ? 0 : 1
    }

    /// Runs the check on an open store, prints the report, and returns its counts.
    func check(_ store: InspectedStore, console: Console) throws -> CheckSummary {
        var problems: [JSONValue] = []
        var isTruncated = false
        let progress = Progress(console: console)
        let checker = IntegrityChecker(store: store, chunkSize: chunkSize) { [json] problem in
            if json {
                if problems.count < Self.jsonProblemLimit { problems.append(problem.json) } else { isTruncated = true }
            } else {
                progress.finish()
                console.print(problem.description)
            }
        }
        checker.progress = { progress.update("check: \($0.label) \(Formatting.grouped($0.visited))") }
        try checker.run()
        progress.finish()
        let summary = checker.summary
        if json {
            console.print(Self.json(summary, path: store.path, problems: problems, isTruncated: isTruncated))
        } else {
            console.print(Self.text(summary))
        }
        return summary
    }

    /// The report `--json` prints: the counts, and the problems kept.
    private static func json(
        _ summary: CheckSummary, path: String, problems: [JSONValue], isTruncated: Bool
    ) -> String {
        let statistics = summary.statistics
        let members: [JSONMember] = [
            JSONMember("path", .string(path)), JSONMember("ok", .bool(summary.isConsistent)),
            JSONMember("errors", .number(String(summary.errorCount))),
            JSONMember("warnings", .number(String(summary.warningCount))),
            JSONMember("entities", .number(String(statistics.entities))),
            JSONMember("records", .number(String(statistics.records))),
            JSONMember("indexEntries", .number(String(statistics.indexEntries))),
            JSONMember("references", .number(String(statistics.references))),
            JSONMember("problems", .array(problems)), JSONMember("problemsTruncated", .bool(isTruncated)),
        ]
        return JSONValue.object(members).serialized(pretty: true)
    }

    /// The line that ends the text report: the counts, and what was checked.
    private static func text(_ summary: CheckSummary) -> String {
        let statistics = summary.statistics
        let checked =
            "\(Formatting.count(statistics.entities, "entity", plural: "entities")), "
            + "\(Formatting.count(statistics.records, "record")), "
            + "\(Formatting.count(statistics.indexEntries, "index entry", plural: "index entries")), "
            + "\(Formatting.count(statistics.references, "reference")) checked"
        if summary.errorCount == 0 && summary.warningCount == 0 { return "No problems: \(checked)." }
        return
            "\(Formatting.count(summary.errorCount, "error")), \(Formatting.count(summary.warningCount, "warning")): "
            + "\(checked)."
    }
}
