import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection
import KVStoreReplication

/// `kvtool replicate-status <path> --server <url> ... --stream <name> [--json]`: how far a replica is behind its
/// primary's stream.
struct ReplicateStatusCommand: Command {
    static let configuration = CommandConfiguration(
        name: "replicate-status", abstract: "Show how far a replica is behind the stream it follows.",
        discussion: """
            The applied token is the last commit of the primary the replica applied, with the time the primary \
            made it; the stream's token is the last commit the stream holds whole, with its time. Commits behind \
            counts the commits between; seconds behind is how much older the applied commit is than the stream's \
            last, 0 when the replica is caught up. What the primary committed and has not published yet is not \
            counted: 'kvtool info' on the primary shows its last token.
            The store must be a replica of the stream ('kvtool replicate-follow' makes one). It is opened through \
            the library as its replication opens it, which writes nothing of its data.
            """)

    /// The arguments and options of `kvtool replicate-status`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let connection = StreamConnection.Arguments()
        let json = Flag.json
    }

    /// The store's directory.
    let path: String
    /// The servers and the stream.
    let connection: StreamConnection
    /// Whether to print JSON.
    let json: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        connection = try StreamConnection(arguments, \.connection)
        json = arguments[\.json]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        let stream = connection.stream
        let container = try ReplicationStore.open(path, as: .observer, of: stream.name)
        defer { try? container.close() }
        let link = try connection.connect()
        defer { link.close() }
        _ = try connection.requireStream(in: link.jetStream, advice: "Check its name")
        let status: Replica.Status
        do {
            status = try Replica(container: container, stream: stream, jetStream: link.jetStream).status()
        } catch {
            throw StreamConnection.failure(error, stream: stream.name)
        }
        let seconds = String(format: "%.3f", status.secondsBehind)
        if json {
            let members = [
                JSONMember("path", .string(path)),
                JSONMember("stream", .string(stream.name)),
                JSONMember("appliedToken", .string(status.appliedToken.description)),
                JSONMember(
                    "appliedCommitDate", status.appliedCommitDate.map { .string(HistoryPrinter.time($0)) } ?? .null),
                JSONMember("streamToken", status.primaryToken.map { .string($0.description) } ?? .null),
                JSONMember(
                    "streamCommitDate", status.primaryCommitDate.map { .string(HistoryPrinter.time($0)) } ?? .null),
                JSONMember("commitsBehind", .number(String(status.commitsBehind))),
                JSONMember("secondsBehind", .number(seconds)),
            ]
            console.print(JSONValue.object(members).serialized(pretty: true))
            return 0
        }
        let lines = [
            ("Path", path),
            ("Stream", stream.name),
            ("Applied token", Self.describe(status.appliedToken, committed: status.appliedCommitDate)),
            (
                "Stream's token",
                status.primaryToken.map { Self.describe($0, committed: status.primaryCommitDate) }
                    ?? "none (the stream is empty)"
            ),
            ("Commits behind", Formatting.grouped(status.commitsBehind)),
            ("Seconds behind", seconds),
        ]
        for (label, value) in lines {
            console.print(label + String(repeating: " ", count: 18 - label.count) + value)
        }
        return 0
    }

    /// `<token>, committed <time>`, or the token alone when the time is not known (a replica that applied nothing
    /// yet knows its copy's last token only).
    private static func describe(_ token: HistoryToken, committed: Date?) -> String {
        committed.map { "\(token), committed \(HistoryPrinter.time($0))" } ?? token.description
    }
}
