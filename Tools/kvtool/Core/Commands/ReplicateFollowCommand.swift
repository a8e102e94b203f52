import CommandLineKit
import KVStore
import KVStoreInspection
import KVStoreReplication
import NATS

/// `kvtool replicate-follow <path> --server <url> ... --stream <name> [--once]`: a replica that applies the primary's
/// commits from the stream.
struct ReplicateFollowCommand: Command {
    static let configuration = CommandConfiguration(
        name: "replicate-follow", abstract: "Apply the primary's commits from a stream to a replica.",
        discussion: """
            A replica starts as a copy of the primary, with its history, that nothing has opened yet: 'kvtool copy \
            <primary> <path>' makes one. The first 'replicate-follow' makes the copy a replica of the stream, for \
            good: from then on programs may read it (fetches, relationships, observation, the history under the \
            primary's tokens), but every write through a container of it is refused, and only its replication \
            writes it. A store that is not a replica yet and has a lock file is refused: a program has opened it, \
            and it may be the primary itself.
            Commits are applied in the groups the primary's publisher sent, each group in one transaction with the \
            replica's progress, so readers only ever see states the primary had, and a replica stopped at any \
            moment goes on where it stood.
            With --once, it applies what the stream holds when it starts and exits, printing how many commits it \
            applied and the token of the last one. Without it, it applies each group as it arrives, printing its \
            progress on standard error, until SIGINT (Ctrl-C) or SIGTERM, then stops cleanly and exits with 0. \
            Failures of the servers are retried; a stream that no longer holds the commits the replica needs (its \
            limits dropped them), one of another primary, and a store that cannot be written stop it with exit \
            status 1: bootstrap the replica again from a new copy of the primary.
            """)

    /// The arguments and options of `kvtool replicate-follow`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let connection = StreamConnection.Arguments()
        let once = Flag("once", help: "Apply what the stream holds, then exit.")
    }

    /// The store's directory.
    let path: String
    /// The servers and the stream.
    let connection: StreamConnection
    /// Whether to apply once and exit.
    let once: Bool

    /// How long one fetch waits for new messages while following.
    static let fetchWait = Duration.milliseconds(500)
    /// How long to wait after a failure of the servers before trying again.
    static let retryDelay = Duration.seconds(1)
    /// How many fetches in a row may apply nothing while the replica is behind, with --once, before it gives up.
    static let idleFetches = 20

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        connection = try StreamConnection(arguments, \.connection)
        once = arguments[\.once]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        // Before any thread starts, so that no thread takes the default action of a signal.
        let stop = once ? nil : StopSignals()
        defer { stop?.cancel() }
        let stream = connection.stream
        let container = try ReplicationStore.open(path, as: .follower, of: stream.name)
        defer { try? container.close() }
        let link = try connection.connect()
        defer { link.close() }
        _ = try connection.requireStream(
            in: link.jetStream,
            advice: "Check its name: the primary's 'kvtool replicate-publish --create-stream' creates it")
        let replica: Replica
        do {
            replica = try Replica(container: container, stream: stream, jetStream: link.jetStream)
        } catch {
            throw StreamConnection.failure(error, stream: stream.name)
        }
        guard let stop else {
            let (applied, token) = try applyAvailable(replica)
            console.print(
                "Applied \(Formatting.count(applied, "commit")) from the stream '\(stream.name)', through \(token).")
            return 0
        }
        console.printError(
            "Following the stream '\(stream.name)' into '\(path)'; stop with SIGINT (Ctrl-C) or SIGTERM.")
        let clock = ContinuousClock()
        var applied = 0
        var unreported = 0
        var reportedAt = clock.now
        var lastWarning: String?
        while stop.received == nil {
            do {
                let count = try replica.applyAvailable(wait: Self.fetchWait)
                applied += count
                unreported += count
                lastWarning = nil
            } catch  where !StreamConnection.isFatal(error) {
                let message = StreamConnection.failure(error, stream: stream.name).message
                if message != lastWarning { console.printError("warning: \(message); retrying") }
                lastWarning = message
                _ = stop.wait(for: Self.retryDelay)
            } catch {
                throw StreamConnection.failure(error, stream: stream.name)
            }
            if unreported > 0 && clock.now - reportedAt >= .seconds(1) {
                console.printError(
                    "Applied \(Formatting.count(unreported, "commit")), through \(try container.lastHistoryToken()).")
                unreported = 0
                reportedAt = clock.now
            }
        }
        console.print(
            "Stopped by \(stop.received.map(StopSignals.name) ?? "a signal"): applied "
                + "\(Formatting.count(applied, "commit")) from the stream '\(stream.name)', through "
                + "\(try container.lastHistoryToken()).")
        return 0
    }

    /// Applies what the stream holds now: until the replica has the commit that was the stream's last when it
    /// began.
    ///
    /// The replica's count of commits applied says nothing of messages read (a group's first parts apply nothing),
    /// so the end is found from the replica's status; a replica that stops getting closer to it fails rather than
    /// waits for ever.
    ///
    /// - Returns: How many commits were applied, and the token of the last commit the replica has.
    /// - Throws: ``ToolError`` when the replica cannot go on.
    private func applyAvailable(_ replica: Replica) throws(ToolError) -> (applied: Int, token: HistoryToken) {
        let stream = connection.stream.name
        do {
            let target = try replica.status().primaryToken?.position ?? 0
            var applied = 0
            var idle = 0
            while true {
                let count = try replica.applyAvailable(wait: idle == 0 ? .zero : Self.fetchWait)
                applied += count
                guard count == 0 else {
                    idle = 0
                    continue
                }
                let status = try replica.status()
                if status.appliedToken.position >= target { return (applied, status.appliedToken) }
                idle += 1
                if idle > Self.idleFetches {
                    throw ToolError(
                        "The stream '\(stream)' holds the primary's commits through position \(target), and the "
                            + "replica applied none after \(status.appliedToken) in \(Self.idleFetches) fetches. "
                            + "Run 'kvtool replicate-follow' again")
                }
            }
        } catch {
            throw StreamConnection.failure(error, stream: stream)
        }
    }
}
