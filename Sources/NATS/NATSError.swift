/// An error of the NATS client: a connection that could not be made or was lost, a refused argument, a reply that
/// did not come, or an error the server reported.
///
/// Errors that JetStream's API returns in its replies are ``JetStreamError``s instead. Each case's ``description``
/// says what happened and what to do about it.
///
/// ```swift
/// do {
///     let reply = try connection.request(subject: "time.now", payload: [], timeout: .seconds(1))
/// } catch NATSError.noResponders(let subject) {
///     print("nothing listens on \(subject)")
/// }
/// ```
public enum NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A server address could not be read: it must look like `nats://host:port`, `host:port` or `host`.
    case invalidServerURL(String, reason: String)

    /// One attempt to connect to a server failed: the name did not resolve, the TCP connection was refused or timed
    /// out, or the server did not complete the handshake.
    case connectionFailed(server: String, reason: String)

    /// No server of the list completed the handshake within the deadline; `failures` says why each attempt failed.
    case noServerAvailable(servers: [String], timeout: Duration, failures: [String])

    /// The connection broke while the operation waited for the server, which may or may not have acted on it.
    case connectionLost(server: String, reason: String)

    /// The connection is closed, by ``NATSConnection/close()`` or because reconnecting gave up; `reason` says which.
    case connectionClosed(reason: String)

    /// The server did not answer in time.
    case timedOut(operation: String, timeout: Duration)

    /// A request found no subscriber on its subject: the server answered with status 503.
    case noResponders(subject: String)

    /// A message is larger than the server accepts: its headers and payload together take `size` bytes, and the
    /// server's `max_payload` is `maximumPayload`.
    case payloadTooLarge(size: Int, maximumPayload: Int)

    /// A subject is empty, holds white space or an empty token (`a..b`), or uses a wildcard where none is allowed.
    case invalidSubject(String, reason: String)

    /// A header's name or value cannot be sent: a name must be non-empty, without `:`, white space or control
    /// characters; a value must not hold a line break.
    case invalidHeader(name: String, reason: String)

    /// An argument is out of range, such as a batch of zero messages.
    case invalidArgument(String)

    /// While reconnecting, the bytes waiting to be sent reached the limit the options set.
    case outboundBufferFull(size: Int, limit: Int)

    /// The server sent `-ERR` with this message: during the handshake (a refused user or password), or about an
    /// operation of an established connection (a permissions violation), or before it closed the connection.
    case serverError(String)

    /// The server sent bytes that are not the NATS protocol.
    case protocolError(String)

    /// A reply could not be decoded: `subject` is what the request was sent to.
    case invalidResponse(subject: String, reason: String)

    /// A pull request with idle heartbeats went `interval` twice over without a message or heartbeat from the
    /// server.
    case missedHeartbeats(subject: String, interval: Duration)

    /// The server ended a pull request with a status other than "no messages" or "request timeout", such as
    /// `409 Consumer Deleted` or `409 Exceeded MaxWaiting`.
    case pullRequestEnded(consumer: String, status: Int, description: String)

    /// What happened and what to do about it.
    public var description: String {
        switch self {
        case .invalidServerURL(let url, let reason):
            return "Invalid server address '\(url)': \(reason). Write it as nats://host:port, host:port or host."
        case .connectionFailed(let server, let reason):
            return "Could not connect to \(server): \(reason)."
        case .noServerAvailable(let servers, let timeout, let failures):
            let tried = failures.isEmpty ? "" : " Attempts: " + failures.joined(separator: "; ") + "."
            return "No NATS server answered within \(timeout) (servers: \(servers.joined(separator: ", "))).\(tried)"
                + " Check that a server runs at one of these addresses and accepts this client's credentials."
        case .connectionLost(let server, let reason):
            return "The connection to \(server) was lost (\(reason)) before the server answered; the operation may"
                + " or may not have taken effect. Retry it once the connection is back (it reconnects by itself)."
        case .connectionClosed(let reason):
            return "The NATS connection is closed: \(reason). Open a new connection."
        case .timedOut(let operation, let timeout):
            return "No answer to \(operation) within \(timeout). Check that the server and the responder run, or"
                + " allow more time."
        case .noResponders(let subject):
            return "No responder listens on '\(subject)' (status 503). Start the service that answers it; for"
                + " JetStream, check that a stream captures the subject and that JetStream is enabled."
        case .payloadTooLarge(let size, let maximumPayload):
            return "The message takes \(size) bytes with its headers, more than the server's maximum payload of"
                + " \(maximumPayload) bytes. Split it, or raise max_payload in the server's configuration."
        case .invalidSubject(let subject, let reason):
            return "Invalid subject '\(subject)': \(reason)."
        case .invalidHeader(let name, let reason):
            return "Invalid header '\(name)': \(reason)."
        case .invalidArgument(let reason):
            return "Invalid argument: \(reason)."
        case .outboundBufferFull(let size, let limit):
            return "The connection is reconnecting and \(size) bytes already wait to be sent, over the limit of"
                + " \(limit) bytes. Wait for the connection to come back, or raise Options.outboundBufferLimit."
        case .serverError(let message):
            return "The server reported an error: \(message)."
        case .protocolError(let reason):
            return "The server sent data that is not the NATS protocol: \(reason). Check that the address is a"
                + " NATS server's client port."
        case .invalidResponse(let subject, let reason):
            return "The reply to '\(subject)' could not be decoded: \(reason). Check that the server's version"
                + " supports this request."
        case .missedHeartbeats(let subject, let interval):
            return "The server sent no message nor heartbeat for the pull request on '\(subject)' for twice"
                + " \(interval). The consumer's server may be down; retry the request."
        case .pullRequestEnded(let consumer, let status, let description):
            return "The server ended the pull request of consumer '\(consumer)' with status \(status)"
                + " (\(description)). Check that the consumer exists and that fewer requests wait on it."
        }
    }
}
