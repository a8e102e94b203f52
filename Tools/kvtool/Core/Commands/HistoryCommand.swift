import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection

/// `kvtool history <path> [--since <token>] [--entity <name> ...] [--author <name>] [--limit <n>] [--json]`: the
/// store's persistent change history, entry by entry.
struct HistoryCommand: Command {
    static let configuration = CommandConfiguration(
        name: "history", abstract: "List the store's change history: what each commit changed.",
        discussion: """
            A store whose history a program switched on (ModelContainer.enableHistory(retention:)) records an \
            entry for every commit that changed models, in the commit's transaction, by every writer ('kvtool \
            import' included): its token (<store ID>:<position>, one more for each commit), its time (by the clock \
            of the process that committed, in ISO 8601), its author, and each model it inserted, updated or deleted, \
            with the models a delete rule reached: 'cascaded' (deleted by a cascade from the model named) and \
            'nullified' (a reference to the deleted model removed). A deleted model's line shows the values its \
            entity keeps on deletion, as 'export' writes records. The store keeps what its retention says; the last \
            line tells the store's last token, which 'kvtool export --since' takes.
            Entries come oldest first, after --since (a token 'history' or an export's header gave), or from the \
            oldest one kept. --entity, --author and --limit choose among them: an entry that changed a model of one \
            of the entities is listed whole. The entries are read in one read transaction and held in memory, so \
            --limit bounds both.
            A token of another store's history (or of a history switched off since), one after which entries were \
            pruned, one past the last commit (a store restored from an older copy), and a damaged entry are \
            errors, exit status 1; a store without history is one too.
            """)

    /// The arguments and options of `kvtool history`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let since = HistoryCommand.sinceOption(
            help: "List the entries after this token (as 'history' or an export's header gives it); from the "
                + "oldest entry kept by default.")
        let entities = Option<[String]>(
            "entity", valueName: "name", help: "Only entries that changed a model of this entity; repeatable.")
        let author = Option<String?>("author", valueName: "name", help: "Only the entries of commits by this author.")
        let limit = Option<Int?>(
            "limit", valueName: "n", help: "List at most n entries.", parser: .integer(in: 0...))
        let json = Flag("json", help: "Print JSON Lines, an entry per line, instead of text for people.")
    }

    /// The store's directory.
    let path: String
    /// The token to list after, or `nil` for the oldest entry kept.
    let since: HistoryToken?
    /// The entities whose entries to list; empty for all.
    let entities: [String]
    /// The author whose entries to list, or `nil` for all.
    let author: String?
    /// The most entries to list.
    let limit: Int?
    /// Whether to print JSON Lines.
    let json: Bool

    /// `--since <token>`, as `history` and `export` declare it.
    static func sinceOption(help: String) -> Option<String?> {
        Option("since", valueName: "token", help: help)
    }

    /// Reads a `--since` value as a token.
    ///
    /// - Throws: ``UsageError`` for text that is not a token.
    static func token(_ text: String?) throws(UsageError) -> HistoryToken? {
        guard let text else { return nil }
        guard let token = HistoryToken(text) else {
            throw UsageError(
                "The value '\(text)' is invalid for '--since <token>': expected a history token, <store ID>:<position> "
                    + "(such as 5F0C1E2A-7A35-4C7B-9D64-2B8C3E1A0F11:42), as 'kvtool history' prints it")
        }
        return token
    }

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        since = try Self.token(try arguments[\.since])
        entities = try arguments[\.entities]
        author = try arguments[\.author]
        limit = try arguments[\.limit]
        json = arguments[\.json]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            for name in entities { _ = try store.entity(named: name) }
            let wanted = Set(entities)
            let history = try StoreHistory(store: store)
            let (entries, last) = try store.environment.read { txn in
                let state = try history.requiredState(in: txn)
                let entries = try history.entries(
                    after: since, state: state, limit: limit,
                    advice: "List from the oldest entry kept: leave out --since", in: txn
                ) { entry in
                    if let author, entry.author != author { return false }
                    return wanted.isEmpty || entry.changes.contains { wanted.contains($0.entity) }
                }
                return (entries, state.lastToken)
            }
            let printer = HistoryPrinter(entities: store.entities)
            for entry in entries {
                console.output.write(json ? printer.json(entry).serialized() + "\n" : printer.text(entry))
                try console.checkOutput()
            }
            if !json {
                console.print(
                    "(\(Formatting.count(entries.count, "entry", plural: "entries")); the store's last token is "
                        + "\(last))")
            }
            return 0
        }
    }
}
