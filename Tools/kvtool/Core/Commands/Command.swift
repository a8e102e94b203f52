import CommandLineKit
import KVStoreInspection

/// A kvtool subcommand: its configuration and declared arguments (``ParsableCommand``), and what it does.
protocol Command: ParsableCommand {
    /// Runs the command and returns its exit status.
    ///
    /// - Throws: ``UsageError`` (exit status 64) for a usage mistake found late, such as a `--where` value that
    ///   does not parse as its field's kind; ``ToolError`` or any other error (exit status 1) for a failure.
    func run(_ console: Console) throws -> Int32
}

/// Options and arguments several subcommands share.
enum CommonOptions {
    /// `<path>`, the store's directory.
    static let path = Argument<String>("path", help: "The store's directory (the one that holds data.mdb).")
    /// `<entity>`.
    static let entity = Argument<String>(
        "entity", help: "The entity, as the catalog names it (see 'kvtool schema').")
    /// `--where <condition>`.
    static let condition = Option<[String]>(
        "where", valueName: "condition",
        help: "Only records that meet a condition: field=value, field!=value, field<value, field<=value, "
            + "field>value, field>=value, or field^=prefix for a string's prefix (quote < and > in a shell). The "
            + "value is parsed as the field's kind (int, uint, double, bool, string, uuid, ISO 8601 date, or null); "
            + "strings compare by the bytes of their NFC form, as the index orders them. Repeat to require several.")
    /// `--explain`.
    static let explain = Flag(
        "explain",
        help: "Print the plan (the index, its keys or range, whether the count is exact) instead of the "
            + "results.")
    /// `--chunk-size <n>`.
    static func chunkSize(default value: Int, unit: String) -> Option<Int> {
        Option(
            "chunk-size", valueName: "n", help: "How many \(unit) one transaction handles.", default: value,
            parser: .integer(in: 1...))
    }

    /// The default number of records one read transaction visits.
    static let readChunkSize = 1000
}

extension Command {
    /// Opens the store at `path` read-only (unless `writable`), runs `body`, and closes the store.
    ///
    /// A store read without a lock file (it had none) is checked afterwards for a program that opened it meanwhile.
    func withStore<R>(_ path: String, writable: Bool = false, _ body: (InspectedStore) throws -> R) throws -> R {
        let store = try InspectedStore.open(path, writable: writable)
        defer { store.close() }
        let result = try body(store)
        try store.checkNoProgramOpenedIt()
        return result
    }
}
