/// A connection to a NATS server, or to any server of a cluster: publish, subscribe, request.
///
/// The connection runs two threads of its own: one reads what the server sends, answers its `PING`s and sends its
/// own, notices a dead server (``Options/maximumPingsOutstanding`` heartbeats unanswered), reconnects to the next
/// server of the list (and to those the cluster announces) and renews its subscriptions; the other writes. Every
/// method may be called from any thread; those that wait for the server block the calling thread, with a timeout,
/// and have `async` counterparts that wait off Swift's cooperative pool.
///
/// Closing is explicit, with ``close()``; a connection nobody references any more closes itself.
///
/// ```swift
/// let connection = try NATSConnection(servers: ["nats://127.0.0.1:4222"])
/// defer { connection.close() }
/// let subscription = try connection.subscribe(to: "greetings")
/// try connection.publish(subject: "greetings", payload: Array("hello".utf8))
/// let message = try subscription.next(timeout: .seconds(1))
/// ```
public final class NATSConnection: Sendable {
    let core: ConnectionCore

    /// Connects to the first server of `servers` that answers, trying them in order, round after round, until
    /// ``Options/connectDeadline``.
    ///
    /// - Parameters:
    ///   - servers: Addresses as `nats://host:port` (`nats://user:password@host:port` for credentials),
    ///     `host:port` or `host` (port 4222).
    ///   - options: Authentication, timeouts, heartbeats and reconnection.
    /// - Throws: ``NATSError/invalidServerURL(_:reason:)`` for an address that cannot be read,
    ///   ``NATSError/noServerAvailable(servers:timeout:failures:)`` when no server completed the handshake in time
    ///   (its failures say why each attempt failed, a refused password among them).
    public init(servers: [String], options: Options = Options()) throws {
        guard !servers.isEmpty else { throw NATSError.invalidArgument("the list of servers is empty") }
        let addresses = try servers.map(ServerAddress.init(parsing:))
        core = ConnectionCore(servers: addresses, options: options)
        var failures: [String: String] = [:]
        guard let established = core.establish(deadline: .now + options.connectDeadline, failures: &failures),
            core.install(established)
        else {
            let reasons = addresses.compactMap { failures[$0.description] }
            core.close(reason: "the first connection failed")
            throw NATSError.noServerAvailable(
                servers: addresses.map(\.description), timeout: options.connectDeadline, failures: reasons)
        }
        core.startThreads(with: established)
    }

    deinit {
        core.close(reason: "the connection was released")
    }

    /// The connection's options.
    public var options: Options {
        core.options
    }

    /// Whether the connection is up, reconnecting or closed.
    public var status: Status {
        core.state.withLock { $0.status }
    }

    /// The server connected to, as `nats://host:port`, or `nil` while reconnecting or closed.
    public var connectedServer: String? {
        core.state.withLock { $0.status == .connected ? $0.current?.description : nil }
    }

    /// The servers reconnection tries: those given, then those the servers announced.
    public var knownServers: [String] {
        core.state.withLock { $0.servers.map(\.description) }
    }

    /// The largest message, headers and payload together, the server accepts (its `max_payload`).
    public var maximumPayload: Int {
        core.state.withLock { $0.info?.maxPayload ?? 0 }
    }

    /// The name of the server connected to, as its `INFO` gives it.
    public var serverName: String? {
        core.state.withLock { $0.info?.serverName }
    }

    /// How many times the connection reconnected.
    public var reconnections: Int {
        core.state.withLock { $0.reconnections }
    }

    /// The message of the last `-ERR` the server sent, if any.
    public var lastServerError: String? {
        core.state.withLock { $0.lastServerError }
    }

    /// Publishes a message. It returns once the message is queued for sending; ``flush(timeout:)`` waits until the
    /// server has it.
    ///
    /// While the connection is reconnecting, the message waits and goes out after the reconnection (up to
    /// ``Options/outboundBufferLimit`` bytes).
    ///
    /// - Parameters:
    ///   - subject: The subject, without wildcards.
    ///   - replySubject: Where the receiver should answer, if anywhere.
    ///   - headers: Headers, sent with `HPUB`; `nil` sends a plain `PUB`.
    ///   - payload: The bytes.
    /// - Throws: ``NATSError/payloadTooLarge(size:maximumPayload:)`` when headers and payload exceed the server's
    ///   maximum, ``NATSError/invalidSubject(_:reason:)``, ``NATSError/invalidHeader(name:reason:)``,
    ///   ``NATSError/outboundBufferFull(size:limit:)``, ``NATSError/timedOut(operation:timeout:)`` when the server
    ///   does not take the bytes, ``NATSError/connectionClosed(reason:)``.
    public func publish(
        subject: String, replySubject: String? = nil, headers: NATSHeaders? = nil, payload: some Collection<UInt8>
    ) throws {
        try core.publish(subject: subject, replySubject: replySubject, headers: headers, payload: Array(payload))
    }

    /// Subscribes to `subject`, which may hold wildcards (`orders.*`, `orders.>`).
    ///
    /// - Parameters:
    ///   - subject: The subject.
    ///   - queueGroup: A queue group: each message goes to one subscriber of the group.
    /// - Throws: ``NATSError/invalidSubject(_:reason:)``, ``NATSError/connectionClosed(reason:)``.
    public func subscribe(to subject: String, queueGroup: String? = nil) throws -> Subscription {
        try core.subscribe(subject: subject, queueGroup: queueGroup)
    }

    /// Sends a request and waits for the first reply, through an inbox subscription the connection shares among its
    /// requests.
    ///
    /// - Parameters:
    ///   - subject: Where to send it.
    ///   - headers: Headers, if any.
    ///   - payload: The request's bytes.
    ///   - timeout: How long to wait; ``Options/requestTimeout`` if `nil`.
    /// - Returns: The reply.
    /// - Throws: ``NATSError/noResponders(subject:)`` when nothing subscribes to `subject`,
    ///   ``NATSError/timedOut(operation:timeout:)``, and what ``publish(subject:replySubject:headers:payload:)``
    ///   throws.
    public func request(
        subject: String, headers: NATSHeaders? = nil, payload: some Collection<UInt8>, timeout: Duration? = nil
    ) throws -> NATSMessage {
        try core.request(
            subject: subject, headers: headers, payload: Array(payload), timeout: timeout ?? options.requestTimeout)
    }

    /// Waits until the server has processed everything sent before: a `PING` and its `PONG`.
    ///
    /// - Parameter timeout: How long to wait; ``Options/requestTimeout`` if `nil`.
    /// - Throws: ``NATSError/timedOut(operation:timeout:)``, ``NATSError/connectionLost(server:reason:)`` when the
    ///   connection broke first, ``NATSError/connectionClosed(reason:)``.
    public func flush(timeout: Duration? = nil) throws {
        try core.flush(timeout: timeout ?? options.requestTimeout)
    }

    /// Sends what is queued (waiting up to a second), closes the connection and ends its threads. Waiting calls
    /// throw ``NATSError/connectionClosed(reason:)``; closing again does nothing.
    public func close() {
        core.close(reason: "closed by close()")
    }

    /// A JetStream context on this connection.
    ///
    /// - Parameters:
    ///   - prefix: The API prefix, `$JS.API` unless the account imports JetStream under another (a domain's
    ///     `$JS.<domain>.API`).
    ///   - timeout: The timeout of its API calls and publish acknowledgements; ``Options/requestTimeout`` if `nil`.
    public func jetStream(prefix: String = "$JS.API", timeout: Duration? = nil) -> JetStream {
        JetStream(connection: self, prefix: prefix, timeout: timeout ?? options.requestTimeout)
    }
}
