/// An error that JetStream's API returned: its HTTP-like ``code``, its ``errorCode`` (the server's own numbering,
/// stable across versions) and its ``serverDescription``.
///
/// Two errors are equal when their error codes are, so the static members work as patterns:
///
/// ```swift
/// do {
///     _ = try jetStream.publish(subject: "orders.1", payload: bytes, options: .init(expectedLastMessageID: "41"))
/// } catch JetStreamError.wrongLastMessageID {
///     // Someone else published since: read the stream's last message ID again.
/// }
/// ```
public struct JetStreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP-like status: 400 for a bad request, 404 for something missing, 503 for unavailable.
    public let code: Int

    /// The server's error code, such as 10059 for a stream that does not exist.
    public let errorCode: Int

    /// The server's description, such as `stream not found`.
    public let serverDescription: String

    /// The API subject of the request that failed.
    public var subject: String?

    /// Creates an error.
    public init(code: Int, errorCode: Int, description: String, subject: String? = nil) {
        self.code = code
        self.errorCode = errorCode
        self.serverDescription = description
        self.subject = subject
    }

    /// Errors are equal when their error codes are.
    public static func == (lhs: JetStreamError, rhs: JetStreamError) -> Bool {
        lhs.errorCode == rhs.errorCode
    }

    /// Hashes the error code only, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(errorCode)
    }

    /// Matches any error that is a ``JetStreamError`` with the same error code, so `catch
    /// JetStreamError.streamNotFound` works.
    public static func ~= (pattern: JetStreamError, value: any Error) -> Bool {
        (value as? JetStreamError)?.errorCode == pattern.errorCode
    }

    /// The server's description, its codes, the request's subject, and what to do when the code says.
    public var description: String {
        var text = "JetStream error \(errorCode) (status \(code)): \(serverDescription)"
        if let subject { text += " (on '\(subject)')" }
        if let advice = Self.advice[errorCode] { text += ". " + advice }
        return text
    }

    private static let advice: [Int: String] = [
        10059: "Create the stream first, or check its name.",
        10014: "Create the consumer first, or check its name and stream.",
        10037: "The stream holds no message there.",
        10070: "Another message was stored since the one expected: read the stream's last message ID again.",
        10071: "Another message was stored since the sequence expected: read the stream's last sequence again.",
        10058: "A stream of that name exists with another configuration: update it, or choose another name.",
        10054: "Send smaller messages, or raise the stream's maximum message size.",
        10008: "The cluster is electing a leader, or lost its quorum: retry shortly.",
        10076: "Start the server with JetStream enabled (nats-server -js).",
        10023: "The servers lack the storage or memory the request needs.",
    ]

    /// A stream that does not exist (10059).
    public static let streamNotFound = JetStreamError(code: 404, errorCode: 10059, description: "stream not found")
    /// A consumer that does not exist (10014).
    public static let consumerNotFound = JetStreamError(code: 404, errorCode: 10014, description: "consumer not found")
    /// No message at the sequence or subject asked for (10037).
    public static let noMessageFound = JetStreamError(code: 404, errorCode: 10037, description: "no message found")
    /// The stream's last message ID is not the one `Nats-Expected-Last-Msg-Id` expected (10070).
    public static let wrongLastMessageID = JetStreamError(
        code: 400, errorCode: 10070, description: "wrong last msg ID")
    /// The stream's last sequence is not the one `Nats-Expected-Last-Sequence` expected (10071).
    public static let wrongLastSequence = JetStreamError(
        code: 400, errorCode: 10071, description: "wrong last sequence")
    /// A stream of that name exists with another configuration (10058).
    public static let streamNameInUse = JetStreamError(
        code: 400, errorCode: 10058, description: "stream name already in use with a different configuration")
    /// The message is larger than the stream's maximum message size (10054).
    public static let messageTooLarge = JetStreamError(
        code: 400, errorCode: 10054, description: "message size exceeds maximum allowed")
    /// The JetStream cluster cannot answer now: no leader, or no quorum (10008).
    public static let temporarilyUnavailable = JetStreamError(
        code: 503, errorCode: 10008, description: "JetStream system temporarily unavailable")
    /// JetStream is not enabled on the server (10076).
    public static let notEnabled = JetStreamError(code: 503, errorCode: 10076, description: "JetStream not enabled")
    /// The servers lack the resources for the request (10023).
    public static let insufficientResources = JetStreamError(
        code: 503, errorCode: 10023, description: "insufficient resources")
}
