import CommandLineKit
import KVStoreInspection

/// `kvtool readers <path> [--clear-stale]`: the reader slots in use, and clearing those of dead processes.
struct ReadersCommand: Command {
    static let configuration = CommandConfiguration(
        name: "readers", abstract: "List the reader slots in use; clear those of dead processes.",
        discussion: """
            Each read transaction holds a reader slot, across all processes that have the store open. A process \
            that died inside a read transaction leaves its slot behind, which keeps LMDB from reusing the pages of \
            its snapshot: the file grows with every update. --clear-stale frees such slots.
            The slots live in the store's lock.mdb. A store without one (a copy, a store whose programs never ran \
            since it was restored) has no process using it: kvtool says so, and creates none.
            """)

    /// The arguments and options of `kvtool readers`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let clearsStale = Flag("clear-stale", help: "Clear the slots of processes that no longer exist, first.")
        let json = Flag.json
    }

    /// The store's directory.
    let path: String
    /// Whether to clear stale slots first.
    let clearsStale: Bool
    /// Whether to print JSON.
    let json: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        clearsStale = arguments[\.clearsStale]
        json = arguments[\.json]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let cleared = clearsStale ? try store.environment.clearStaleReaders() : nil
            let readers = try store.environment.readers()
            let maxReaders = try store.environment.info().maxReaders
            if json {
                let slots = readers.map { reader in
                    JSONValue.object([
                        JSONMember("pid", .number(String(reader.processID))),
                        JSONMember("thread", .string("0x" + String(reader.thread, radix: 16))),
                        JSONMember("transaction", reader.transactionID.map { .number(String($0)) } ?? .null),
                    ])
                }
                var members = [
                    JSONMember("readers", .array(slots)), JSONMember("maxReaders", .number(String(maxReaders))),
                ]
                if let cleared { members.append(JSONMember("cleared", .number(String(cleared)))) }
                console.print(JSONValue.object(members).serialized(pretty: true))
                return 0
            }
            if let cleared { console.print("Cleared \(Formatting.count(cleared, "stale reader slot")).") }
            if store.readsWithoutLockFile {
                console.print("No lock file: no process has the store open, and no reader slot is in use.")
                return 0
            }
            console.print("\(Formatting.count(readers.count, "reader slot")) in use of \(maxReaders).")
            guard !readers.isEmpty else { return 0 }
            var table = TextTable(headers: ["PID", "Thread", "Transaction"], rightAligned: [0, 2])
            for reader in readers {
                table.append([
                    String(reader.processID), "0x" + String(reader.thread, radix: 16),
                    reader.transactionID.map(String.init) ?? "-",
                ])
            }
            console.output.write(table.rendered())
            return 0
        }
    }
}
