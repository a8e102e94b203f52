/// A consumer that the client pulls from: each ``fetch(batch:expires:noWait:heartbeat:)`` asks the server for up to a
/// batch of messages and collects them as they come.
///
/// ```swift
/// let consumer = jetStream.pullConsumer(stream: "HISTORY", consumer: "replica-1")
/// for message in try consumer.fetch(batch: 100, expires: .seconds(5)) {
///     try apply(message.payload, sequence: message.metadata.streamSequence)
///     try message.ack()
/// }
/// ```
public struct PullConsumer: Sendable {
    /// The JetStream context it pulls through.
    public let jetStream: JetStream
    /// The stream.
    public let stream: String
    /// The consumer's name.
    public let name: String

    private struct NextRequest: Encodable {
        var batch: Int
        var expires: Int64?
        var noWait: Bool?
        var idleHeartbeat: Int64?

        enum CodingKeys: String, CodingKey {
            case batch
            case expires
            case noWait = "no_wait"
            case idleHeartbeat = "idle_heartbeat"
        }
    }

    /// Pulls up to `batch` messages.
    ///
    /// Without `noWait`, the server sends messages as the stream has them until the batch is full or `expires`
    /// passes, then ends the request (status 408); with `noWait`, it sends those it has at once and ends (status
    /// 404 when it has none). The call returns what came, which may be nothing.
    ///
    /// The corresponding API is `$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`.
    ///
    /// - Parameters:
    ///   - batch: The most messages to return.
    ///   - expires: How long the server holds the request open.
    ///   - noWait: Whether to return at once with what the stream has.
    ///   - heartbeat: An interval at which the server sends heartbeats (status 100) while it has nothing, so that a
    ///     server that went away is noticed before `expires`; it must be under half of `expires`.
    /// - Returns: The messages, in the order of delivery.
    /// - Throws: ``NATSError/missedHeartbeats(subject:interval:)`` when heartbeats stop and nothing came,
    ///   ``NATSError/timedOut(operation:timeout:)`` when the server does not end the request within `expires` and
    ///   the context's timeout (a server that went away, or a consumer that does not exist, whose pulls the server
    ///   drops), ``NATSError/pullRequestEnded(consumer:status:description:)`` for a `409` before any message (the
    ///   consumer was deleted, too many requests wait), ``NATSError/noResponders(subject:)`` when JetStream does not
    ///   answer, ``NATSError/invalidArgument(_:)`` for a batch under 1, and the connection's other ``NATSError``s.
    public func fetch(
        batch: Int, expires: Duration = .seconds(1), noWait: Bool = false, heartbeat: Duration? = nil
    )
        throws -> [JetStreamMessage]
    {
        guard batch >= 1 else {
            throw NATSError.invalidArgument("a batch must ask for at least 1 message, not \(batch)")
        }
        try JetStream.checkName(stream)
        try JetStream.checkName(name)
        let subject = "\(jetStream.prefix).CONSUMER.MSG.NEXT.\(stream).\(name)"
        let core = jetStream.connection.core
        let inbox = Nuid.inbox()
        let subscription = try core.subscribe(subject: inbox, queueGroup: nil)
        defer { subscription.unsubscribe() }
        let request = NextRequest(
            batch: batch, expires: noWait ? nil : expires.nanoseconds, noWait: noWait ? true : nil,
            idleHeartbeat: heartbeat?.nanoseconds)
        try core.publish(
            subject: subject, replySubject: inbox, headers: nil, payload: Array(try JetStream.encoder.encode(request)))
        // The server ends the request itself at `expires`; the connection's timeout covers the way back.
        let allowed = noWait ? jetStream.timeout : expires + jetStream.timeout
        let deadline = ContinuousClock.now + allowed
        var heard = ContinuousClock.now
        var messages: [JetStreamMessage] = []
        while messages.count < batch {
            let now = ContinuousClock.now
            if now >= deadline {
                if messages.isEmpty {
                    throw NATSError.timedOut(operation: "the pull request on '\(subject)'", timeout: allowed)
                }
                return messages
            }
            var wait = deadline - now
            if let heartbeat {
                let silence = heard + heartbeat * 2 - now
                if silence <= .zero {
                    if messages.isEmpty { throw NATSError.missedHeartbeats(subject: subject, interval: heartbeat) }
                    return messages
                }
                wait = min(wait, silence)
            }
            guard let message = try subscription.next(timeout: wait) else { continue }
            heard = .now
            if let status = message.status {
                let description = message.headers?.statusDescription ?? ""
                switch status {
                case 100:
                    continue
                case 404, 408:
                    return messages
                case 503:
                    throw NATSError.noResponders(subject: subject)
                default:
                    if messages.isEmpty {
                        throw NATSError.pullRequestEnded(consumer: name, status: status, description: description)
                    }
                    return messages
                }
            }
            messages.append(try JetStreamMessage(message, connection: jetStream.connection))
        }
        return messages
    }

    /// Reads the consumer's configuration and progress.
    ///
    /// - Throws: What ``JetStream/consumerInfo(stream:consumer:)`` throws.
    public func info() throws -> ConsumerInfo {
        try jetStream.consumerInfo(stream: stream, consumer: name)
    }
}
