import CommandLineKit
import KVStore
import KVStoreReplication
import NATS

/// The NATS servers and the JetStream stream of a `replicate-*` command: `--server`, `--stream` and
/// `--connect-timeout`, the connection made from them, and the errors of the connection and the stream as kvtool
/// prints them.
///
/// ```swift
/// let connection = try StreamConnection(arguments, \.connection)
/// let link = try connection.connect()
/// defer { link.close() }
/// let info = try connection.requireStream(in: link.jetStream, advice: "Check its name")
/// ```
struct StreamConnection {
    /// The options, as a group of declarations a command's arguments include.
    struct Arguments: ParsableArguments {
        let servers = Option<[String]>(
            "server", valueName: "url",
            help: "A NATS server, as nats://host:port (nats://user:password@host:port with credentials), host:port "
                + "or host; repeat for the servers of a cluster.",
            isRequired: true)
        let stream = Option<String>(
            "stream", valueName: "name", help: "The JetStream stream the primary's history goes to.",
            parser: StreamConnection.streamName)
        let connectTimeout = Option<Int>(
            "connect-timeout", valueName: "seconds",
            help: "How long to try the servers, round after round, before giving up on the first connection.",
            default: 10, parser: .integer(in: 1...))
    }

    /// A stream name as JetStream takes it.
    static let streamName = ValueParser<String>(
        expecting: "a JetStream stream name: not empty, without white space, '.', '*', '>', '/' or '\\'"
    ) { text in
        let forbidden: Set<Character> = [".", "*", ">", "/", "\\"]
        let isValid =
            !text.isEmpty && !text.contains { forbidden.contains($0) || $0.isWhitespace }
            && !text.unicodeScalars.contains { $0.value < 32 || $0.value == 127 }
        return isValid ? text : nil
    }

    /// The servers, as given.
    let servers: [String]
    /// The stream.
    let stream: ReplicationStream
    /// How long the first connection tries the servers.
    let connectTimeout: Duration

    /// Reads the group `group` of a command's arguments.
    ///
    /// - Parameters:
    ///   - arguments: The command's parsed arguments.
    ///   - group: The group's key path.
    ///   - subject: The subject the stream captures, or `nil` for the library's default.
    /// - Throws: ``UsageError`` for a value the parser has reported already.
    init<Declarations>(
        _ arguments: ParsedArguments<Declarations>, _ group: KeyPath<Declarations, Arguments>,
        subject: String? = nil
    ) throws(UsageError) {
        servers = try arguments[group.appending(path: \.servers)]
        stream = ReplicationStream(name: try arguments[group.appending(path: \.stream)], subject: subject)
        connectTimeout = .seconds(try arguments[group.appending(path: \.connectTimeout)])
    }

    /// A connection and its JetStream context.
    struct Link {
        let connection: NATSConnection
        let jetStream: JetStream

        /// Closes the connection.
        func close() {
            connection.close()
        }
    }

    /// Connects to the first server that answers.
    ///
    /// - Throws: ``ToolError`` when no server answered within `--connect-timeout`, or a server address does not
    ///   read.
    func connect() throws(ToolError) -> Link {
        var options = NATSConnection.Options()
        options.name = "kvtool"
        options.connectDeadline = connectTimeout
        options.connectTimeout = min(options.connectTimeout, connectTimeout)
        do {
            let connection = try NATSConnection(servers: servers, options: options)
            return Link(connection: connection, jetStream: connection.jetStream())
        } catch let error as NATSError {
            throw ToolError(error.description)
        } catch {
            throw ToolError("Cannot connect to \(servers.joined(separator: ", ")): \(error)")
        }
    }

    /// The stream's information, or `nil` when the stream does not exist.
    ///
    /// - Throws: ``ToolError`` when the servers cannot tell.
    func existingStream(in jetStream: JetStream) throws(ToolError) -> StreamInfo? {
        do {
            return try jetStream.streamInfo(stream.name)
        } catch JetStreamError.streamNotFound {
            return nil
        } catch {
            throw Self.failure(error, stream: stream.name)
        }
    }

    /// The stream's information.
    ///
    /// - Parameter advice: What to do when the stream does not exist, ending the error's message.
    /// - Throws: ``ToolError`` when the stream does not exist, or the servers cannot tell.
    func requireStream(in jetStream: JetStream, advice: String) throws(ToolError) -> StreamInfo {
        guard let info = try existingStream(in: jetStream) else { throw missingStream(advice: advice) }
        return info
    }

    /// The error of a stream that does not exist, ending with `advice`.
    func missingStream(advice: String) -> ToolError {
        ToolError("There is no stream '\(stream.name)' on \(servers.joined(separator: ", ")). \(advice)")
    }

    /// Whether the subject `pattern` (a stream's, with `*` for one token and `>` for the rest) captures `subject`.
    static func subject(_ pattern: String, captures subject: String) -> Bool {
        let patternTokens = pattern.split(separator: ".", omittingEmptySubsequences: false)
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        for (index, token) in patternTokens.enumerated() {
            if token == ">" { return tokens.count > index }
            guard index < tokens.count, token == "*" || token == tokens[index] else { return false }
        }
        return patternTokens.count == tokens.count
    }

    /// Whether a failure of replication stops it for good: what replication itself found (a divergence, a history
    /// gap, a store of the wrong kind) and what the store says (it cannot be written or read). The connection's and
    /// the stream's failures are retried.
    static func isFatal(_ error: any Error) -> Bool {
        error is ReplicationError || error is KVStoreError || error is ToolError
    }

    /// A failure of replication as kvtool prints it: the library's message, which says what happened and what to do,
    /// and for the connection and the stream which stream it was about.
    static func failure(_ error: any Error, stream: String) -> ToolError {
        switch error {
        case let error as ToolError: error
        case let error as ReplicationError: ToolError(error.message)
        case let error as KVStoreError: ToolError(error.description)
        case NATSError.noResponders(let subject) where subject.hasPrefix("$JS.API."):
            ToolError(
                "JetStream does not answer (no responder on '\(subject)'): the server runs without JetStream (start it "
                    + "with -js), or this client may not use it")
        case let error as NATSError: ToolError("The stream '\(stream)' cannot be reached: \(error.description)")
        case let error as JetStreamError: ToolError("The stream '\(stream)' failed: \(error.description)")
        default: ToolError("\(error)")
        }
    }
}
