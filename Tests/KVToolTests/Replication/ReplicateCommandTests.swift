import Foundation
import KVStore
import KVStoreInspection
import NATSTestSupport
import Testing

/// `kvtool replicate-publish`, `replicate-follow` and `replicate-status`, in-process, against a real nats-server:
/// a copy of the primary followed through the stream holds what the primary holds.
@Suite(.requiresNATSServer, .serialized)
struct ReplicateCommandTests {
    @Test func aCopyFollowingTheStreamExportsAsThePrimary() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let replica = try setup.copyOfPrimary(named: "replica")
            try setup.commit(3)
            // Every commit of the history goes out, in two groups: the projects' commit, and the tasks' commit with
            // the three after the copy, the last of which updates one of its tasks.
            #expect(
                setup.replicate("publish", setup.primary.path, "--create-stream", "--once")
                    == RunResult(
                        status: 0,
                        output: "Published 2 messages to the stream 'ORDERS', through \(setup.token(5)).\n",
                        errors: "Created the stream 'ORDERS' (subject kvstore.history.ORDERS, 1 replica).\n"))
            #expect(
                setup.replicate("follow", replica, "--once")
                    == RunResult(
                        status: 0, output: "Applied 3 commits from the stream 'ORDERS', through \(setup.token(5)).\n",
                        errors: ""))
            #expect(try HistoryTesting.exportedModels(replica) == HistoryTesting.exportedModels(setup.primary.path))
            #expect(try HistoryTesting.exportedModels(replica).count == 10, "2 projects, 7 tasks, the end line")
            ImportTesting.expectClean(replica)
            // Its history is the primary's, under the primary's tokens.
            let history = kvtool("history", replica, "--since", setup.token(2))
            #expect(history.output.hasSuffix("(3 entries; the store's last token is \(setup.token(5)))\n"))

            // Again: nothing new on either side.
            #expect(
                setup.replicate("publish", setup.primary.path, "--once").output
                    == "Published 0 messages to the stream 'ORDERS', through \(setup.token(5)).\n")
            #expect(
                setup.replicate("follow", replica, "--once").output
                    == "Applied 0 commits from the stream 'ORDERS', through \(setup.token(5)).\n")
            // A second copy, made now, starts where the stream ends.
            let late = try setup.copyOfPrimary(named: "late")
            try setup.commit(1)
            #expect(setup.replicate("publish", setup.primary.path, "--once").status == 0)
            for path in [replica, late] {
                #expect(
                    setup.replicate("follow", path, "--once").output
                        == "Applied 1 commit from the stream 'ORDERS', through \(setup.token(6)).\n")
                #expect(try HistoryTesting.exportedModels(path) == HistoryTesting.exportedModels(setup.primary.path))
            }
        }
    }

    @Test func externalValuesGoToTheReplicaWithTheirModels() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let primary = setup.sibling("notes")
            let container = try HistoryTesting.container(primary)
            try container.enableHistory(retention: .unlimited)
            let folder = SyncFolder(name: "Inbox")
            let kept = SyncNote(
                title: "Kept", folderID: folder.id, attachment: ExternalData(Data(repeating: 1, count: 10)))
            let gone = SyncNote(title: "Gone", attachment: ExternalData(Data(repeating: 2, count: 10)))
            try container.write { txn in
                try txn.insert(folder)
                try txn.insert(kept)
                try txn.insert(gone)
            }
            try container.close()
            let replica = try setup.copyOfPrimary(named: "notes-replica", of: primary)
            let reopened = try HistoryTesting.container(primary)
            // A value of several chunks, a value replaced, a note deleted with its value.
            try reopened.write { txn in
                try txn.insert(
                    SyncNote(title: "Large", attachment: ExternalData(Data((0..<300_000).map { UInt8($0 % 251) }))))
            }
            try reopened.write { txn in
                var changed = kept
                changed.attachment = ExternalData(Data(repeating: 3, count: 5_000))
                try txn.insert(changed)
            }
            try reopened.write { txn in _ = try txn.delete(SyncNote.self, id: gone.id) }
            try reopened.close()
            #expect(setup.replicate("publish", primary, "--create-stream", "--once").status == 0)
            #expect(
                setup.replicate("follow", replica, "--once").output
                    == "Applied 3 commits from the stream 'ORDERS', through \(try Self.lastToken(of: primary)).\n")
            #expect(try HistoryTesting.exportedModels(replica) == HistoryTesting.exportedModels(primary))
            ImportTesting.expectClean(replica)
        }
    }

    /// The last token of the store at `path`, as `kvtool info --json` gives it.
    static func lastToken(of path: String) throws -> String {
        let info = try JSONParser.parse(Array(kvtool("info", path, "--json").output.utf8))
        guard case .string(let token)? = info[member: "history"]?[member: "lastToken"] else {
            throw CocoaError(.coderValueNotFound)
        }
        return token
    }

    @Test func statusCountsTheCommitsAReplicaIsBehind() async throws {
        try await offPool {
            let setup = try ReplicationSetup()
            let replica = try setup.copyOfPrimary(named: "replica")
            #expect(
                setup.replicate("status", replica)
                    == RunResult(
                        status: 1, output: "",
                        errors: "Error: '\(replica)' is not a replica: 'kvtool replicate-follow' makes a copy of the "
                            + "primary a replica of the stream 'ORDERS'\n"))
            try setup.commit(2)
            #expect(setup.replicate("publish", setup.primary.path, "--create-stream", "--once").status == 0)
            #expect(setup.replicate("follow", replica, "--once").status == 0)
            let caughtUp = setup.replicate("status", replica)
            #expect(caughtUp.status == 0)
            #expect(caughtUp.errors == "")
            #expect(
                Self.withoutTimes(caughtUp.output) == """
                    Path              \(replica)
                    Stream            ORDERS
                    Applied token     \(setup.token(4)), committed <time>
                    Stream's token    \(setup.token(4)), committed <time>
                    Commits behind    0
                    Seconds behind    0.000

                    """)

            try setup.commit(3)
            #expect(setup.replicate("publish", setup.primary.path, "--once").status == 0)
            let behind = setup.replicate("status", replica)
            #expect(
                Self.withoutTimes(behind.output) == """
                    Path              \(replica)
                    Stream            ORDERS
                    Applied token     \(setup.token(4)), committed <time>
                    Stream's token    \(setup.token(7)), committed <time>
                    Commits behind    3
                    Seconds behind    <seconds>

                    """)
            let json = setup.replicate("status", replica, "--json")
            #expect(json.status == 0)
            let object = try JSONParser.parse(Array(json.output.utf8))
            #expect(object[member: "appliedToken"] == .string(setup.token(4)))
            #expect(object[member: "streamToken"] == .string(setup.token(7)))
            #expect(object[member: "commitsBehind"] == .number("3"))
            guard case .number(let seconds)? = object[member: "secondsBehind"] else {
                Issue.record("secondsBehind is not a number: \(json.output)")
                return
            }
            #expect((Double(seconds) ?? -1) >= 0)
            // The times are the primary's commits', as its history records them.
            let entries = kvtool("history", setup.primary.path, "--json").output.split(separator: "\n")
            let dates = try entries.map { try JSONParser.parse(Array($0.utf8))[member: "date"] }
            #expect(object[member: "appliedCommitDate"] == dates[3])
            #expect(object[member: "streamCommitDate"] == dates[6])

            #expect(
                setup.replicate("follow", replica, "--once").output
                    == "Applied 3 commits from the stream 'ORDERS', through \(setup.token(7)).\n")
            let after = setup.replicate("status", replica, "--json")
            #expect(try JSONParser.parse(Array(after.output.utf8))[member: "commitsBehind"] == .number("0"))
            #expect(try JSONParser.parse(Array(after.output.utf8))[member: "secondsBehind"] == .number("0.000"))
        }
    }

    /// The output of `replicate-status` with its times and its seconds behind (when not 0) replaced.
    static func withoutTimes(_ text: String) -> String {
        text.replacing(#/committed \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/#, with: "committed <time>")
            .replacing(#/Seconds behind    (?!0\.000\n)\S+/#, with: "Seconds behind    <seconds>")
    }
}
