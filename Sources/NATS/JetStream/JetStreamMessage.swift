import Foundation

/// A message a consumer delivered: the message, where it sits in the stream, and the acknowledgements it takes.
public struct JetStreamMessage: Sendable {
    /// Where a delivered message sits, as its reply subject says: `$JS.ACK.<stream>.<consumer>.<delivered>.
    /// <stream sequence>.<consumer sequence>.<timestamp>.<pending>` (or the longer form with a domain and an account
    /// hash).
    public struct Metadata: Sendable, Equatable {
        /// The stream.
        public var stream: String
        /// The consumer.
        public var consumer: String
        /// The JetStream domain, if any.
        public var domain: String?
        /// How many times the message was delivered, this time included: more than 1 for a redelivery.
        public var deliveryCount: Int
        /// The message's sequence in the stream.
        public var streamSequence: UInt64
        /// The delivery's sequence in the consumer.
        public var consumerSequence: UInt64
        /// When the stream stored the message.
        public var timestamp: Date
        /// How many messages of the stream the consumer has not delivered yet.
        public var pending: UInt64

        /// Reads the metadata from a reply subject.
        ///
        /// - Throws: ``NATSError/invalidResponse(subject:reason:)`` when it is not a JetStream acknowledgement
        ///   subject.
        public init(replySubject: String) throws {
            let tokens = replySubject.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else {
                throw NATSError.invalidResponse(
                    subject: replySubject, reason: "not a JetStream acknowledgement subject ($JS.ACK.…)")
            }
            // The older form has 9 tokens; the newer inserts a domain and an account hash after ACK, and may end
            // with a random token.
            let fields: ArraySlice<String>
            if tokens.count == 9 {
                domain = nil
                fields = tokens[2...]
            } else if tokens.count >= 11 {
                domain = tokens[2] == "_" ? nil : tokens[2]
                fields = tokens[4..<11]
            } else {
                throw NATSError.invalidResponse(subject: replySubject, reason: "\(tokens.count) tokens, not 9 or 11+")
            }
            let values = Array(fields)
            guard let delivered = Int(values[2]), let streamSequence = UInt64(values[3]),
                let consumerSequence = UInt64(values[4]), let nanoseconds = Int64(values[5]),
                let pending = UInt64(values[6])
            else {
                throw NATSError.invalidResponse(subject: replySubject, reason: "a numeric field is not a number")
            }
            stream = values[0]
            consumer = values[1]
            deliveryCount = delivered
            self.streamSequence = streamSequence
            self.consumerSequence = consumerSequence
            timestamp = Date(timeIntervalSince1970: Double(nanoseconds) / 1_000_000_000)
            self.pending = pending
        }
    }

    /// The message as it arrived.
    public let message: NATSMessage
    /// Where it sits in the stream.
    public let metadata: Metadata
    private let connection: NATSConnection
    private let replySubject: String

    /// Wraps a delivered message.
    ///
    /// - Throws: ``NATSError/invalidResponse(subject:reason:)`` when it has no JetStream reply subject.
    init(_ message: NATSMessage, connection: NATSConnection) throws {
        guard let reply = message.replySubject else {
            throw NATSError.invalidResponse(
                subject: message.subject, reason: "a delivered message has no reply subject")
        }
        self.message = message
        self.metadata = try Metadata(replySubject: reply)
        self.connection = connection
        self.replySubject = reply
    }

    /// The subject it was published to.
    public var subject: String {
        message.subject
    }

    /// The payload.
    public var payload: [UInt8] {
        message.payload
    }

    /// The headers, if it had any.
    public var headers: NATSHeaders? {
        message.headers
    }

    /// Acknowledges the message, without waiting for the server.
    ///
    /// - Throws: The connection's ``NATSError``s.
    public func ack() throws {
        try connection.publish(subject: replySubject, payload: Array("+ACK".utf8))
    }

    /// Acknowledges the message and waits until the server recorded it.
    ///
    /// - Throws: ``NATSError/timedOut(operation:timeout:)`` and the connection's other ``NATSError``s.
    public func ackSync(timeout: Duration? = nil) throws {
        _ = try connection.request(subject: replySubject, payload: Array("+ACK".utf8), timeout: timeout)
    }

    /// Tells the server the message was not handled: it delivers it again, after `delay` if given.
    ///
    /// - Throws: The connection's ``NATSError``s.
    public func nak(delay: Duration? = nil) throws {
        let payload = delay.map { "-NAK {\"delay\":\($0.nanoseconds)}" } ?? "-NAK"
        try connection.publish(subject: replySubject, payload: Array(payload.utf8))
    }

    /// Tells the server never to deliver the message again.
    ///
    /// - Throws: The connection's ``NATSError``s.
    public func term() throws {
        try connection.publish(subject: replySubject, payload: Array("+TERM".utf8))
    }

    /// Tells the server the message is still being worked on: its acknowledgement wait starts over.
    ///
    /// - Throws: The connection's ``NATSError``s.
    public func inProgress() throws {
        try connection.publish(subject: replySubject, payload: Array("+WPI".utf8))
    }
}
