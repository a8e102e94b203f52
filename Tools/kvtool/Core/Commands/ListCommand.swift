import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection

/// `kvtool list <path> <entity> [--where …] [--sort …] [--limit n] [--offset n] [--fields a,b] [--json | --table]
/// [--explain]`.
struct ListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "list", abstract: "List an entity's records, as a table or as JSON Lines.",
        discussion: """
            The output is an aligned table when standard output is a terminal, and JSON Lines (one record per line, \
            in the form 'export' writes records) otherwise; --table and --json choose. A table holds its rows in \
            memory to align them, and cuts long cells; JSON Lines are streamed.
            Records come in ID order (creation order for time-ordered IDs), or in the index's order (by value, then \
            ID) when order or prefix conditions read a range of an index, unless --sort is given; a sort keeps only \
            offset + limit records in memory when --limit is given, every matching record otherwise. The conditions \
            are planned as 'count' plans them; --explain prints the plan instead of the records.
            A walk of the record table skips a key that is not a record key (a 16-byte ID), and once it has read \
            the whole table, compares the entries read with the table's own count of them (when no program \
            committed during the walk). Either damage is reported after the records, and the exit status is 1. A \
            record that does not decode stops the listing, with exit status 1.
            """)

    /// The arguments and options of `kvtool list`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let entity = CommonOptions.entity
        let conditions = CommonOptions.condition
        let sort = Option<String?>(
            "sort", valueName: "field[:desc]", help: "Sort by a field, ascending, or descending with ':desc'.")
        let limit = Option<Int?>(
            "limit", valueName: "n", help: "Print at most n records.", parser: .integer(in: 0...))
        let offset = Option<Int>(
            "offset", valueName: "n", help: "Skip the first n records.", default: 0, parser: .integer(in: 0...))
        let fields = Option<String?>("fields", valueName: "a,b", help: "Print only these fields, in this order.")
        let json = Flag("json", help: "Print JSON Lines (the default when standard output is not a terminal).")
        let table = Flag("table", help: "Print an aligned table (the default on a terminal).")
        let explain = CommonOptions.explain
    }

    /// The store's directory.
    let path: String
    /// The entity to list.
    let entity: String
    /// The `--where` conditions, as given.
    let conditions: [String]
    /// The sort field and whether it is descending.
    let sort: (field: String, descending: Bool)?
    /// The most records to print.
    let limit: Int?
    /// How many records to skip.
    let offset: Int
    /// The fields to print, or `nil` for all.
    let fields: [String]?
    /// `true` for JSON Lines, `false` for a table, `nil` to decide by the terminal.
    let prefersJSON: Bool?
    /// Whether to print the plan instead of the records.
    let explain: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        entity = try arguments[\.entity]
        conditions = try arguments[\.conditions]
        for condition in conditions { _ = try Condition.split(condition) }
        if let text = try arguments[\.sort] {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard !parts[0].isEmpty, parts.count <= 2, parts.count == 1 || ["asc", "desc"].contains(parts[1]) else {
                throw UsageError("The value '\(text)' is invalid for '--sort <field[:desc]>'")
            }
            sort = (String(parts[0]), parts.count == 2 && parts[1] == "desc")
        } else {
            sort = nil
        }
        limit = try arguments[\.limit]
        offset = try arguments[\.offset]
        fields = try arguments[\.fields].map { $0.split(separator: ",").map(String.init) }
        if fields?.isEmpty == true { throw UsageError("The value '' is invalid for '--fields <a,b>'") }
        if arguments[\.json] && arguments[\.table] {
            throw UsageError("--json and --table cannot be used together")
        }
        prefersJSON = arguments[\.json] ? true : arguments[\.table] ? false : nil
        explain = arguments[\.explain]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let entity = try store.entity(named: entity)
            for field in (fields ?? []) + (sort.map { [$0.field] } ?? []) where field != "id" {
                guard IndexEntries.fieldExists(field, in: entity.fields) else {
                    throw ToolError("Unknown field '\(field)': \(entity.name) has no such field")
                }
            }
            let conditions = try conditions.map { try Condition(parsing: $0, entity: entity) }
            let query = try RecordQuery(store: store, entity: entity, conditions: conditions)
            if explain {
                let explanation = QueryExplanation(query)
                if prefersJSON == true {
                    console.print(explanation.json.serialized())
                } else {
                    console.output.write(explanation.text)
                }
                return 0
            }
            let printer = RecordPrinter(
                kinds: RecordJSON.kinds(of: entity.fields), fields: fields,
                asJSON: prefersJSON ?? !console.outputIsTerminal, console: console)
            let damage: [InspectionError]
            if let sort {
                let (records, found) = try sorted(query, by: sort)
                for (id, record) in records {
                    printer.add(id, record)
                    try console.checkOutput()
                }
                damage = found
            } else {
                var skipped = 0
                var printed = 0
                damage = try query.forEach { id, record in
                    if skipped < offset {
                        skipped += 1
                        return true
                    }
                    if let limit, printed >= limit { return false }
                    printer.add(id, record)
                    // A write that failed (a full disk, a closed pipe) stops the scan.
                    try console.checkOutput()
                    printed += 1
                    return limit.map { printed < $0 } ?? true
                }
            }
            printer.finish()
            // After the records that could be read: what the scan found wrong with the table itself.
            for problem in damage { console.printError("Error: \(problem.message)") }
            return damage.isEmpty ? 0 : 1
        }
    }

    /// The matching records in sort order, after the offset and within the limit, and the damage the scan found;
    /// with a limit, only the best `offset + limit` are kept as the scan goes.
    private func sorted(
        _ query: RecordQuery, by sort: (field: String, descending: Bool)
    ) throws -> (records: [(id: UUID, record: RecordValue)], damage: [InspectionError]) {
        typealias Candidate = (key: [UInt8], id: UUID, record: RecordValue)
        let keep = limit.map { offset + $0 }
        var kept: [Candidate] = []
        func ascending(_ left: Candidate, _ right: Candidate) -> Bool {
            guard left.key == right.key else { return left.key.lexicographicallyPrecedes(right.key) }
            return RecordKey.bytes(left.id).lexicographicallyPrecedes(RecordKey.bytes(right.id))
        }
        func precedes(_ left: Candidate, _ right: Candidate) -> Bool {
            sort.descending ? ascending(right, left) : ascending(left, right)
        }
        let damage = try query.forEach { id, record in
            let value = sort.field == "id" ? RecordValue.uuid(id) : RecordIndexKeys.value(of: sort.field, in: record)
            kept.append((IndexEntries.sortKey(value), id, record))
            if let keep, kept.count >= 2 * keep + 64 {
                kept.sort(by: precedes)
                kept.removeLast(kept.count - keep)
            }
            return true
        }
        kept.sort(by: precedes)
        return (kept.dropFirst(offset).prefix(limit ?? Int.max).map { ($0.id, $0.record) }, damage)
    }
}
