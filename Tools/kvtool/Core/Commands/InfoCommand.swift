import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// `kvtool info <path>`: the store's format, sizes, readers, and the entries of every table.
struct InfoCommand: Command {
    static let configuration = CommandConfiguration(
        name: "info", abstract: "Show the store's format, sizes, readers and tables.",
        discussion: """
            The schema version is the version of the program's versioned schema the store holds, 'none' until a \
            program opens it with one; the migrations applied to it follow, with a migration under way if one was \
            interrupted. The map size is the one the store was last committed with; the used size is the pages in use times the page size. Readers are the \
            reader slots held, across all processes.
            History is the persistent change history: off, or on with its retention (what each commit keeps of it), \
            the token of the last commit recorded (which 'kvtool export --since' and 'kvtool history --since' take) \
            and how many entries the store keeps; 'kvtool history' lists them. A history that cannot be read (a \
            damaged counter or catalog entry) shows as unreadable, with the reason.
            """)

    /// The arguments and options of `kvtool info`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let json = Flag.json
    }

    /// The store's directory.
    let path: String
    /// Whether to print JSON.
    let json: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        json = arguments[\.json]
    }

    /// One table's statistics.
    private struct TableFacts {
        let name: String
        let statistics: Environment.Statistics
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let environment = store.environment
            let info = try environment.info()
            let main = try environment.statistics()
            let readers = try environment.readers().count
            let history = try StoreHistory(store: store)
            // The history's damage is one more fact about the store, not a reason to show none of the others.
            let historyState: Result<StoreHistory.State?, ToolError>
            do {
                historyState = .success(try environment.read { txn in try history.state(in: txn) })
            } catch let error as ToolError {
                historyState = .failure(error)
            }
            let tables = try store.tableNames().map { name in
                let table = try store.anyTable(named: name)
                return TableFacts(name: name, statistics: try environment.read { txn in try txn.statistics(of: table) })
            }
            let pageSize = store.dataFile.header?.pageSize ?? environment.pageSize
            let pages = info.lastPageNumber + 1
            let mapSize = store.dataFile.header?.mapSize ?? info.mapSize
            if json {
                var members: [JSONMember] = [
                    JSONMember("path", .string(store.path)),
                    JSONMember("formatVersion", .number(String(store.format.formatVersion))),
                    JSONMember("created", .string(ISO8601.displayString(store.format.created))),
                    JSONMember("fileSize", .number(String(store.dataFile.fileSize))),
                    JSONMember("mapSize", .number(String(mapSize))),
                    JSONMember("usedSize", .number(String(pages * pageSize))),
                    JSONMember("pages", .number(String(pages))),
                    JSONMember("pageSize", .number(String(pageSize))),
                    JSONMember("treeDepth", .number(String(main.depth))),
                    JSONMember("readersInUse", .number(String(readers))),
                    JSONMember("maxReaders", .number(String(info.maxReaders))),
                    JSONMember("lastTransaction", .number(String(info.lastTransactionID))),
                    JSONMember("history", Self.json(historyState)),
                    JSONMember("tables", .array(tables.map(Self.json))),
                ]
                members.insert(contentsOf: SchemaHistory.jsonMembers(store.schema), at: 2)
                console.print(JSONValue.object(members).serialized(pretty: true))
                return 0
            }
            var lines: [(String, String)] = [
                ("Path", store.path),
                ("Format version", String(store.format.formatVersion)),
                ("Schema version", SchemaHistory.versionText(store.schema)),
                ("Created", ISO8601.displayString(store.format.created)),
                ("File size", Self.size(store.dataFile.fileSize)),
                ("Map size", Self.size(mapSize)),
                ("Used size", "\(Self.size(pages * pageSize)), \(Formatting.count(pages, "page"))"),
                ("Page size", "\(Formatting.grouped(pageSize)) bytes"),
                ("Tree depth", String(main.depth)),
                ("Readers in use", "\(readers) of \(info.maxReaders)"),
                ("Last transaction", Formatting.grouped(info.lastTransactionID)),
            ]
            lines += Self.historyLines(historyState)
            if let migration = SchemaHistory.migrationText(store.schema) {
                lines.insert(("Migration", migration), at: 3)
            }
            for (label, value) in lines {
                console.print(label + String(repeating: " ", count: 18 - label.count) + value)
            }
            if let history = SchemaHistory.table(store.schema) { console.output.write("\n" + history) }
            var table = TextTable(
                headers: ["Table", "Entries", "Depth", "Pages"], rightAligned: [1, 2, 3], maximumWidth: 60)
            for facts in tables {
                let statistics = facts.statistics
                let pages = statistics.branchPages + statistics.leafPages + statistics.overflowPages
                table.append([
                    facts.name, Formatting.grouped(statistics.entries), String(statistics.depth),
                    Formatting.grouped(pages),
                ])
            }
            console.output.write("\n" + table.rendered())
            return 0
        }
    }

    /// `64.0 MiB (67,108,864 bytes)`.
    private static func size(_ bytes: Int) -> String {
        bytes < 1024 ? "\(bytes) bytes" : "\(Formatting.byteSize(bytes)) (\(Formatting.grouped(bytes)) bytes)"
    }

    /// `History  on since …, keeps …`, the last token and the entries kept; `History  off`; `History  unreadable: …`.
    private static func historyLines(_ result: Result<StoreHistory.State?, ToolError>) -> [(String, String)] {
        let state: StoreHistory.State
        switch result {
        case .failure(let error): return [("History", "unreadable: \(error.message)")]
        case .success(nil): return [("History", "off")]
        case .success(let read?): state = read
        }
        return [
            (
                "History",
                "on since \(ISO8601.displayString(state.catalog.enabled)), keeps "
                    + StoreHistory.describe(state.catalog.retention)
            ),
            ("Last token", state.lastToken.description),
            ("History entries", Formatting.grouped(state.entryCount)),
        ]
    }

    /// The history's JSON: `null` when it is off, `{"error":…}` when it cannot be read.
    private static func json(_ result: Result<StoreHistory.State?, ToolError>) -> JSONValue {
        let state: StoreHistory.State
        switch result {
        case .failure(let error): return .object([JSONMember("error", .string(error.message))])
        case .success(nil): return .null
        case .success(let read?): state = read
        }
        let retention = state.catalog.retention
        return .object([
            JSONMember("storeID", .string(state.catalog.storeID.uuidString)),
            JSONMember("enabled", .string(ISO8601.displayString(state.catalog.enabled))),
            JSONMember(
                "retention",
                .object([
                    JSONMember("maximumAge", retention.maximumAge.map(Self.seconds) ?? .null),
                    JSONMember("maximumCount", retention.maximumCount.map { .number(String($0)) } ?? .null),
                ])),
            JSONMember("lastToken", .string(state.lastToken.description)),
            JSONMember("entries", .number(String(state.entryCount))),
        ])
    }

    /// Seconds as a JSON number: whole ones without a fraction.
    private static func seconds(_ value: TimeInterval) -> JSONValue {
        value == value.rounded() && abs(value) < 1e15 ? .number(String(Int64(value))) : .number(String(value))
    }

    private static func json(_ facts: TableFacts) -> JSONValue {
        let statistics = facts.statistics
        return .object([
            JSONMember("name", .string(facts.name)),
            JSONMember("entries", .number(String(statistics.entries))),
            JSONMember("depth", .number(String(statistics.depth))),
            JSONMember("branchPages", .number(String(statistics.branchPages))),
            JSONMember("leafPages", .number(String(statistics.leafPages))),
            JSONMember("overflowPages", .number(String(statistics.overflowPages))),
        ])
    }
}
