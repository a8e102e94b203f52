import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// What `history` and `export --since` say, and exit with, when the history cannot be read from a token.
@Suite struct HistoryErrorTests {
    static let historyUsage = """
        Usage: kvtool history <path> [--since <token>] [--entity <name> ...] [--author <name>] [--limit <n>]
                              [--json]
          See 'kvtool help history' for more information.

        """

    static let exportUsage = """
        Usage: kvtool export <path> [<entity> ...] [--output <file>] [--force] [--mode <mode>]
                             [--chunk-size <n>] [--since <token>]
          See 'kvtool help export' for more information.

        """

    /// What `export --since` advises when it cannot read the history after its token.
    static func exportAdvice(_ path: String) -> String {
        "Export the store in full ('kvtool export \(path)') into a new copy, and go on from the token its header records"
    }

    @Test func aStoreWithoutHistory() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let message =
            "Error: '\(store.path)' records no change history: a program switches it on with "
            + "ModelContainer.enableHistory(retention:), and it starts then\n"
        #expect(kvtool("history", store.path) == RunResult(status: 1, output: "", errors: message))
        let token = "\(UUID().uuidString):0"
        #expect(kvtool("export", store.path, "--since", token) == RunResult(status: 1, output: "", errors: message))
        let file = store.sibling("changes.jsonl")
        #expect(kvtool("export", store.path, "--since", token, "--output", file).status == 1)
        #expect(!FileManager.default.fileExists(atPath: file), "no file is left")
    }

    @Test func aMalformedTokenIsAUsageMistake() {
        for text in [
            "42", "not-a-uuid:3", "5F0C1E2A-7A35-4C7B-9D64-2B8C3E1A0F11", "5F0C1E2A-7A35-4C7B-9D64-2B8C3E1A0F11:-1",
        ] {
            let message =
                "Error: The value '\(text)' is invalid for '--since <token>': expected a history token, "
                + "<store ID>:<position> (such as 5F0C1E2A-7A35-4C7B-9D64-2B8C3E1A0F11:42), as 'kvtool history' prints "
                + "it\n"
            #expect(
                kvtool("history", "/nonexistent", "--since", text)
                    == RunResult(status: 64, output: "", errors: message + Self.historyUsage))
            #expect(
                kvtool("export", "/nonexistent", "--since", text)
                    == RunResult(status: 64, output: "", errors: message + Self.exportUsage))
        }
    }

    @Test func anotherStoresToken() throws {
        let store = TemporaryStore()
        let id = try HistoryCommandTests.makeStore(at: store.path).storeID
        let other = UUID()
        let message =
            "Error: The token \(other):2 is of the history \(other), and the history of '\(store.path)' is \(id): the "
            + "token is another store's, or of a history switched off since. "
        #expect(
            kvtool("history", store.path, "--since", "\(other):2")
                == RunResult(
                    status: 1, output: "",
                    errors: message + "List from the oldest entry kept: leave out --since\n"))
        #expect(
            kvtool("export", store.path, "--since", "\(other):2")
                == RunResult(status: 1, output: "", errors: message + Self.exportAdvice(store.path) + "\n"))
    }

    @Test func aTokenPastTheLastCommit() throws {
        let store = TemporaryStore()
        let id = try HistoryCommandTests.makeStore(at: store.path).storeID
        let message =
            "Error: The token \(id):9 is past the last commit of the history of '\(store.path)' (position 4): the "
            + "store was restored from a copy older than the token, or the token was made up. "
        #expect(
            kvtool("history", store.path, "--since", "\(id):9")
                == RunResult(
                    status: 1, output: "", errors: message + "List from the oldest entry kept: leave out --since\n"))
        #expect(
            kvtool("export", store.path, "--since", "\(id):9")
                == RunResult(status: 1, output: "", errors: message + Self.exportAdvice(store.path) + "\n"))
    }

    @Test func aPrunedToken() throws {
        let store = TemporaryStore()
        let container = try HistoryTesting.container(store.path)
        let start = try container.enableHistory(retention: HistoryRetention(maximumAge: nil, maximumCount: 2))
        for number in 1...4 { try container.write { txn in try txn.insert(SyncLabel(text: "label \(number)")) } }
        let id = start.storeID
        // Entries 3 and 4 are kept: a reader at 2 reads on, one at 1 missed entry 2.
        #expect(try container.history(after: HistoryToken(storeID: id, position: 2)).count == 2)
        try container.close()
        let message =
            "Error: The history of '\(store.path)' after the token \(id):1 was pruned: the store keeps the entries "
            + "after position 2 (its retention, the last 2 entries, or a program's deleteHistory(before:) deleted the "
            + "others), so the changes since the token cannot be read. "
        #expect(
            kvtool("history", store.path, "--since", "\(id):1")
                == RunResult(
                    status: 1, output: "", errors: message + "List from the oldest entry kept: leave out --since\n"))
        #expect(
            kvtool("export", store.path, "--since", "\(id):1")
                == RunResult(status: 1, output: "", errors: message + Self.exportAdvice(store.path) + "\n"))
        #expect(kvtool("history", store.path, "--since", "\(id):2", "--json").output.split(separator: "\n").count == 2)
        #expect(kvtool("export", store.path, "--since", "\(id):2").status == 0)
        let listed = kvtool("history", store.path)
        #expect(listed.status == 0)
        #expect(listed.output.hasSuffix("(2 entries; the store's last token is \(id):4)\n"))
    }

    @Test func aDamagedEntry() throws {
        let store = TemporaryStore()
        let id = try HistoryCommandTests.makeStore(at: store.path).storeID
        try HistoryTesting.overwriteEntry(2, with: [1, 2, 3, 4, 5, 6], at: store.path)
        let message =
            "Error: The history entry 2 is damaged: its checksum does not match its bytes. Run 'kvtool check'; delete "
            + "the history up to it with deleteHistory(before:) to read past it\n"
        #expect(kvtool("history", store.path) == RunResult(status: 1, output: "", errors: message))
        #expect(kvtool("history", store.path, "--since", "\(id):1").errors == message)
        #expect(kvtool("export", store.path, "--since", "\(id):1") == RunResult(status: 1, output: "", errors: message))
        // Past it, the history reads on.
        let after = kvtool("history", store.path, "--since", "\(id):2")
        #expect(after.status == 0)
        #expect(after.output.hasSuffix("(2 entries; the store's last token is \(id):4)\n"))
        #expect(kvtool("export", store.path, "--since", "\(id):2").status == 0)
    }

    @Test func aDamagedCounterStopsHistoryAndExportButNotInfo() throws {
        let store = TemporaryStore()
        let id = try HistoryCommandTests.makeStore(at: store.path).storeID
        // The counter is the row at position 0's key.
        try HistoryTesting.overwriteEntry(0, with: [9, 9, 9], at: store.path)
        let message =
            "The store's history counter is damaged; run 'kvtool check', and switch history off and on again to start "
            + "a new history (its tokens are then refused)"
        #expect(kvtool("history", store.path) == RunResult(status: 1, output: "", errors: "Error: \(message)\n"))
        #expect(kvtool("export", store.path, "--since", "\(id):1").errors == "Error: \(message)\n")
        let info = kvtool("info", store.path)
        #expect(info.status == 0)
        #expect(info.output.contains("\nHistory           unreadable: \(message)\n"))
        let json = try JSONParser.parse(Array(kvtool("info", store.path, "--json").output.utf8))
        #expect(json[member: "history"] == .object([JSONMember("error", .string(message))]))
        // A full export goes on, without a token, and says so.
        let full = kvtool("export", store.path)
        #expect(full.status == 0)
        #expect(
            full.errors
                == "warning: \(message). The export's header records no history token: a copy made from it cannot go "
                + "on with 'kvtool export --since'\n")
        #expect(!full.output.contains("\"through\""))
    }
}
