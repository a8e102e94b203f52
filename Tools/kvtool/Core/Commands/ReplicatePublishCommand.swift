import CommandLineKit
import KVStore
import KVStoreInspection
import KVStoreReplication
import NATS

/// `kvtool replicate-publish <path> --server <url> ... --stream <name> [--subject <subject>] [--create-stream]
/// [--replicas <n>] [--once]`: the primary's history, published to a JetStream stream for replicas to follow.
struct ReplicatePublishCommand: Command {
    static let configuration = CommandConfiguration(
        name: "replicate-publish", abstract: "Publish the store's change history to a stream, for replicas.",
        discussion: """
            The store is a primary whose history is on (ModelContainer.enableHistory(retention:)). Its commits go to \
            the JetStream stream in groups, each message naming the previous one, so the stream holds the history \
            in order and once: the publisher finds the stream's last commit when it starts and goes on after it, \
            from the store's history, so it may be stopped and started again at any time, and programs go on \
            committing meanwhile. The store is opened through the library (with a lock file, which it creates only \
            when run as the store's owner); the publisher writes one catalog entry, which marks the store as the \
            stream's primary so that it is never made a replica, and otherwise only reads.
            With --once, it publishes what the stream lacks and exits, printing how many messages it published and \
            the token of the last commit the stream holds. Without it, it publishes each commit soon after it is \
            made, printing its progress on standard error, until SIGINT (Ctrl-C) or SIGTERM, then stops cleanly \
            and exits with 0. Failures of the servers are retried; a stream that holds commits the store does not \
            have (a primary restored from an older copy, or two primaries on one stream), a history pruned before \
            it was published, and a record larger than the stream's largest message stop it with exit status 1.
            The stream must exist, unless --create-stream is given: it is then created, if missing, with file \
            storage, --replicas copies in the cluster, no limits, and the subject. A replica starts as a copy of \
            this store ('kvtool copy'), followed with 'kvtool replicate-follow'.
            """)

    /// The arguments and options of `kvtool replicate-publish`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let connection = StreamConnection.Arguments()
        let subject = Option<String?>(
            "subject", valueName: "subject", help: "The subject the stream captures and the messages go to.",
            defaultDescription: "kvstore.history.<stream>")
        let createsStream = Flag("create-stream", help: "Create the stream if it does not exist.")
        let replicas = Option<Int?>(
            "replicas", valueName: "n",
            help: "The stream's copies in the cluster, for --create-stream: 1, or 3 on a cluster of three or more.",
            defaultDescription: "1", parser: .integer(in: 1...5))
        let once = Flag("once", help: "Publish what the stream lacks, then exit.")
    }

    /// The store's directory.
    let path: String
    /// The servers and the stream.
    let connection: StreamConnection
    /// Whether to create the stream when it is missing.
    let createsStream: Bool
    /// The stream's replicas when it is created.
    let replicas: Int
    /// Whether to publish once and exit.
    let once: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        connection = try StreamConnection(arguments, \.connection, subject: try arguments[\.subject])
        createsStream = arguments[\.createsStream]
        let replicas = try arguments[\.replicas]
        if replicas != nil && !createsStream { throw UsageError("--replicas applies only with --create-stream") }
        self.replicas = replicas ?? 1
        once = arguments[\.once]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        // Before any thread starts, so that no thread takes the default action of a signal.
        let stop = once ? nil : StopSignals()
        defer { stop?.cancel() }
        let stream = connection.stream
        let container = try ReplicationStore.open(path, as: .publisher, of: stream.name)
        defer { try? container.close() }
        let link = try connection.connect()
        defer { link.close() }
        try prepareStream(link.jetStream, console)
        let publisher: ReplicationPublisher
        do {
            publisher = try ReplicationPublisher(container: container, stream: stream, jetStream: link.jetStream)
        } catch {
            throw StreamConnection.failure(error, stream: stream.name)
        }
        guard let stop else {
            let count: Int
            do {
                count = try publisher.publishPending()
            } catch {
                throw StreamConnection.failure(error, stream: stream.name)
            }
            console.print(
                "Published \(Formatting.count(count, "message")) to the stream '\(stream.name)', through "
                    + "\(Self.describe(publisher.status.publishedToken)).")
            return 0
        }
        defer { publisher.stop() }
        publisher.start()
        console.printError(
            "Publishing the history of '\(path)' to the stream '\(stream.name)' (subject \(stream.subject)); stop "
                + "with SIGINT (Ctrl-C) or SIGTERM.")
        var reported = publisher.status.publishedToken
        var lastWarning: String?
        while stop.wait(for: .seconds(1)) == nil {
            let status = publisher.status
            if let error = status.lastError {
                if status.isStopped { throw StreamConnection.failure(error, stream: stream.name) }
                let message = StreamConnection.failure(error, stream: stream.name).message
                if message != lastWarning { console.printError("warning: \(message); retrying") }
                lastWarning = message
            }
            if let token = status.publishedToken, token != reported {
                console.printError(
                    "The stream holds the history through \(token) "
                        + "(\(Formatting.count(status.messagesPublished, "message")) published).")
                reported = token
            }
        }
        publisher.stop()
        let status = publisher.status
        console.print(
            "Stopped by \(stop.received.map(StopSignals.name) ?? "a signal"): published "
                + "\(Formatting.count(status.messagesPublished, "message")) to the stream '\(stream.name)', through "
                + "\(Self.describe(status.publishedToken)).")
        return 0
    }

    /// Creates the stream when asked and it is missing; checks that it exists and captures the subject.
    ///
    /// - Throws: ``ToolError`` for a missing stream (without --create-stream), one that does not capture the subject,
    ///   or one the servers refuse to create.
    private func prepareStream(_ jetStream: JetStream, _ console: Console) throws {
        let stream = connection.stream
        var info = try connection.existingStream(in: jetStream)
        if info == nil && createsStream {
            do {
                info = try jetStream.createStream(stream.configuration(replicas: replicas))
            } catch {
                throw ToolError(
                    "Cannot create the stream '\(stream.name)': "
                        + StreamConnection.failure(error, stream: stream.name).message)
            }
            console.printError(
                "Created the stream '\(stream.name)' (subject \(stream.subject), "
                    + "\(Formatting.count(replicas, "replica"))).")
        }
        guard let info else {
            throw connection.missingStream(
                advice: "Create it with --create-stream, or give the name of the stream the replicas follow")
        }
        let subjects = info.configuration.subjects
        guard subjects.contains(where: { StreamConnection.subject($0, captures: stream.subject) }) else {
            throw ToolError(
                "The stream '\(stream.name)' captures \(subjects.isEmpty ? "no subject" : subjects.joined(separator: ", ")), not "
                    + "\(stream.subject): give the subject it captures with --subject")
        }
    }

    /// A token, or `none yet` before the publisher found the stream's place.
    static func describe(_ token: HistoryToken?) -> String {
        token?.description ?? "none yet"
    }
}
