import Foundation
import KVStore
import KVStoreInspection
import Testing

@testable import KVToolCore

/// `kvtool history` and the history lines of `kvtool info`.
@Suite struct HistoryCommandTests {
    static let folder = SyncFolder(id: fixedID(1, entity: 3), name: "Inbox")
    static let label = SyncLabel(id: fixedID(1, entity: 5), text: "urgent")
    static let note = SyncNote(
        id: fixedID(1, entity: 4), title: "Plan", tags: ["work"], folderID: folder.id, labelIDs: [label.id])

    /// A store with four commits: an insert by `importer`, an update by `app`, a label's delete by `sync` (which
    /// nullifies the note), and the folder's delete (which cascades to the note).
    static func makeStore(at path: String) throws -> HistoryToken {
        let container = try HistoryTesting.container(path, author: "app")
        defer { try? container.close() }
        let start = try container.enableHistory(retention: .unlimited)
        let context = ModelContext(container)
        context.author = "importer"
        context.insert(folder)
        context.insert(label)
        context.insert(note)
        try context.save()
        var renamed = note
        renamed.title = "Plan more"
        try container.write { txn in try txn.insert(renamed) }
        try container.write { txn in
            txn.historyAuthor = "sync"
            _ = try txn.delete(SyncLabel.self, id: label.id)
        }
        try container.write { txn in _ = try txn.delete(SyncFolder.self, id: folder.id) }
        return start
    }

    /// The output with each entry's time replaced by `<time>`, after checking it is ISO 8601 in UTC.
    static func withoutTimes(_ text: String) -> String {
        let pattern = #/  \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z  /#
        return text.replacing(pattern, with: "  <time>  ")
    }

    @Test func listsEveryEntryWithItsChanges() throws {
        let store = TemporaryStore()
        let id = try Self.makeStore(at: store.path).storeID.uuidString
        let result = kvtool("history", store.path)
        #expect(result.status == 0)
        #expect(result.errors == "")
        #expect(
            Self.withoutTimes(result.output) == """
                \(id):1  <time>  importer
                  inserted   Folder 01900000-0000-7000-8000-000000000301
                  inserted   Label 01900000-0000-7000-8000-000000000501
                  inserted   Note 01900000-0000-7000-8000-000000000401
                \(id):2  <time>  app
                  updated    Note 01900000-0000-7000-8000-000000000401
                \(id):3  <time>  sync
                  deleted    Label 01900000-0000-7000-8000-000000000501
                  nullified  Note 01900000-0000-7000-8000-000000000401  by Label 01900000-0000-7000-8000-000000000501
                \(id):4  <time>  app
                  deleted    Folder 01900000-0000-7000-8000-000000000301  kept {"name":"Inbox"}
                  cascaded   Note 01900000-0000-7000-8000-000000000401  from Folder 01900000-0000-7000-8000-000000000301  \
                kept {"tags":["work"],"title":"Plan more"}
                (4 entries; the store's last token is \(id):4)

                """)
        // Each time is the commit's, to the microsecond.
        let times = result.output.matches(of: #/  (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)  /#).map {
            String($0.1)
        }
        #expect(times.count == 4)
        #expect(times == times.sorted())
    }

    @Test func jsonLinesCarryKindsCausesAndKeptValues() throws {
        let store = TemporaryStore()
        let id = try Self.makeStore(at: store.path).storeID.uuidString
        let result = kvtool("history", store.path, "--json", "--since", "\(id):2")
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 2)
        let third = try JSONParser.parse(Array(lines[0].utf8))
        #expect(third[member: "token"] == .string("\(id):3"))
        #expect(third[member: "author"] == .string("sync"))
        let date = try #require(third[member: "date"].flatMap { if case .string(let text) = $0 { text } else { nil } })
        #expect(date.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/#) != nil)
        #expect(
            lines[1].replacing(#/"date":"[^"]*"/#, with: #""date":"…""#)
                == #"{"token":"\#(id):4","date":"…","author":"app","changes":["#
                + #"{"kind":"deleted","entity":"Folder","id":"01900000-0000-7000-8000-000000000301","#
                + #""kept":{"name":"Inbox"}},{"kind":"cascaded","entity":"Note","#
                + #""id":"01900000-0000-7000-8000-000000000401","cause":{"entity":"Folder","#
                + #""id":"01900000-0000-7000-8000-000000000301"},"kept":{"tags":["work"],"title":"Plan more"}}]}"#)
        guard case .array(let changes)? = third[member: "changes"] else {
            Issue.record("no changes")
            return
        }
        #expect(changes.map { $0[member: "kind"] } == [.string("deleted"), .string("nullified")])
        #expect(changes[0][member: "kept"] == .object([]), "Label keeps nothing")
        #expect(changes[1][member: "cause"]?[member: "entity"] == .string("Label"))
        #expect(changes[1][member: "kept"] == nil)
    }

    @Test func entityAuthorSinceAndLimitChooseEntries() throws {
        let store = TemporaryStore()
        let id = try Self.makeStore(at: store.path).storeID.uuidString
        func positions(_ arguments: String...) -> [String] {
            let result = kvtool(arguments: ["history", store.path, "--json"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.errors)")
            return result.output.matches(of: #/"token":"[^:]*:(\d+)"/#).map { String($0.1) }
        }
        #expect(positions() == ["1", "2", "3", "4"])
        #expect(positions("--entity", "Label") == ["1", "3"])
        #expect(positions("--entity", "Label", "--entity", "Folder") == ["1", "3", "4"])
        #expect(positions("--author", "app") == ["2", "4"])
        #expect(positions("--author", "app", "--entity", "Folder") == ["4"])
        #expect(positions("--author", "nobody") == [])
        #expect(positions("--limit", "2") == ["1", "2"])
        #expect(positions("--since", "\(id):1", "--entity", "Note", "--limit", "2") == ["2", "3"])
        #expect(positions("--since", "\(id):4") == [])
        #expect(positions("--limit", "0") == [])
        #expect(
            kvtool("history", store.path, "--since", "\(id):4")
                == RunResult(status: 0, output: "(0 entries; the store's last token is \(id):4)\n", errors: ""))
        #expect(
            kvtool("history", store.path, "--entity", "Tag")
                == RunResult(
                    status: 1, output: "",
                    errors:
                        "Error: Unknown entity 'Tag': the store's catalog has no such entity (it has Folder, Label, "
                        + "Note)\n"))
    }

    @Test func infoShowsWhetherHistoryIsOnItsRetentionLastTokenAndEntries() throws {
        let store = TemporaryStore()
        let id = try Self.makeStore(at: store.path).storeID.uuidString
        let lines = kvtool("info", store.path).output.split(separator: "\n").map(String.init)
        let history = lines.filter { $0.hasPrefix("History") || $0.hasPrefix("Last token") }
        try #require(history.count == 3)
        #expect(history[0].wholeMatch(of: #/History           on since \d{4}-[-0-9T:.]*Z, keeps every entry/#) != nil)
        #expect(history[1] == "Last token        \(id):4")
        #expect(history[2] == "History entries   4")
        let json = try JSONParser.parse(Array(kvtool("info", store.path, "--json").output.utf8))
        #expect(json[member: "history"]?[member: "storeID"] == .string(id))
        #expect(json[member: "history"]?[member: "lastToken"] == .string("\(id):4"))
        #expect(json[member: "history"]?[member: "entries"] == .number("4"))
        #expect(
            json[member: "history"]?[member: "retention"]
                == .object([JSONMember("maximumAge", .null), JSONMember("maximumCount", .null)]))

        let container = try HistoryTesting.container(store.path)
        try container.enableHistory(retention: HistoryRetention(maximumAge: 3 * 86_400, maximumCount: 2))
        try container.write { txn in try txn.insert(SyncLabel(text: "later")) }
        try container.close()
        let pruned = kvtool("info", store.path).output
        #expect(pruned.contains(", keeps the last 2 entries of the last 3 days\n"))
        #expect(pruned.contains("\nLast token        \(id):5\nHistory entries   2\n"))
        let retention = try JSONParser.parse(Array(kvtool("info", store.path, "--json").output.utf8))[
            member: "history"]?[member: "retention"]
        #expect(
            retention
                == .object([JSONMember("maximumAge", .number("259200")), JSONMember("maximumCount", .number("2"))]))

        let plain = TemporaryStore()
        try Sample.makeStore(at: plain.path)
        #expect(kvtool("info", plain.path).output.contains("\nHistory           off\n"))
        #expect(
            try JSONParser.parse(Array(kvtool("info", plain.path, "--json").output.utf8))[member: "history"] == .null)
    }
}
