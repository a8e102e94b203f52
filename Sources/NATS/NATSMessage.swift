/// A message received on a subscription, or the reply to a request.
public struct NATSMessage: Sendable, Equatable {
    /// The subject the message was published to.
    public var subject: String

    /// The subject to answer to, when the publisher expects a reply.
    public var replySubject: String?

    /// The headers, when the message had any (an `HMSG`).
    public var headers: NATSHeaders?

    /// The payload.
    public var payload: [UInt8]

    /// The status code of the headers' status line, such as 503 (no responders), 408 (request timeout), 404 (no
    /// messages) or 100 (idle heartbeat); `nil` for an ordinary message.
    public var status: Int? {
        headers?.status
    }

    /// The payload read as UTF-8.
    public var string: String {
        String(decoding: payload, as: UTF8.self)
    }

    /// Creates a message.
    public init(subject: String, replySubject: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8]) {
        self.subject = subject
        self.replySubject = replySubject
        self.headers = headers
        self.payload = payload
    }
}
