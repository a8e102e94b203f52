extension NATSConnection {
    /// How a connection authenticates, times its attempts and heartbeats, and reconnects.
    ///
    /// The defaults suit a service on a local network. A test shortens the intervals:
    ///
    /// ```swift
    /// var options = NATSConnection.Options()
    /// options.pingInterval = .milliseconds(200)
    /// options.reconnectWait = .milliseconds(50)
    /// let connection = try NATSConnection(servers: ["nats://127.0.0.1:4222"], options: options)
    /// ```
    public struct Options: Sendable {
        /// The name the server shows for this client (in its monitoring).
        public var name: String?

        /// The user, when the server requires user and password; a `nats://user:pass@host` address overrides it.
        public var user: String?

        /// The password that goes with ``user``.
        public var password: String?

        /// The token, when the server requires token authentication.
        public var token: String?

        /// How long one attempt may take, from the TCP connection to the handshake's `PONG`.
        public var connectTimeout: Duration = .seconds(2)

        /// How long the first connection tries the servers, round after round, before it throws
        /// ``NATSError/noServerAvailable(servers:timeout:failures:)``.
        public var connectDeadline: Duration = .seconds(10)

        /// Whether a lost connection reconnects, to the same server or to another of the list.
        public var reconnects = true

        /// The pause after the first round of reconnection attempts that all failed; it doubles after each further
        /// round, up to ``maximumReconnectWait``, with up to a quarter more at random so that clients spread out.
        public var reconnectWait: Duration = .milliseconds(250)

        /// The longest pause between rounds of reconnection attempts.
        public var maximumReconnectWait: Duration = .seconds(4)

        /// How long reconnecting goes on before the connection closes for good; `nil` reconnects forever.
        public var reconnectDeadline: Duration? = nil

        /// Whether the servers that the servers announce (`connect_urls` in `INFO`, the other members of their
        /// cluster) join the list that reconnection tries.
        public var discoversServers = true

        /// How often the client sends `PING` to check that the server is alive.
        public var pingInterval: Duration = .seconds(20)

        /// How many `PING`s may go unanswered: when one more interval passes with this many outstanding, the
        /// connection is declared dead and reconnects.
        public var maximumPingsOutstanding = 2

        /// The timeout of requests that do not give their own, such as JetStream's API calls.
        public var requestTimeout: Duration = .seconds(5)

        /// How many bytes may wait to be sent while the connection is down; a publish past it throws
        /// ``NATSError/outboundBufferFull(size:limit:)``.
        public var outboundBufferLimit = 8 * 1024 * 1024

        /// Whether the server sends this connection the messages it publishes itself, when it subscribes to them.
        public var echo = true

        /// Called with each change of the connection (disconnected, reconnected, closed) and each `-ERR` the server
        /// reports, on the connection's reading thread: it must return quickly and must not wait for the
        /// connection.
        public var eventHandler: (@Sendable (Event) -> Void)? = nil

        /// Creates the default options.
        public init() {}
    }

    /// Something that happened to a connection, as ``Options/eventHandler`` receives it.
    public enum Event: Sendable, Equatable {
        /// The connection to `server` broke, for `reason`; it is reconnecting unless reconnection is off.
        case disconnected(server: String, reason: String)
        /// The connection is back, to `server`, and its subscriptions are renewed.
        case reconnected(server: String)
        /// The servers announced servers the list did not have.
        case discoveredServers([String])
        /// The server sent `-ERR` with this message.
        case serverError(String)
        /// The connection closed for good, for `reason`.
        case closed(reason: String)
    }

    /// Where a connection stands.
    public enum Status: Sendable, Equatable {
        /// Connected to a server.
        case connected
        /// The connection broke and the client is trying the servers.
        case reconnecting
        /// Closed for good.
        case closed
    }
}
