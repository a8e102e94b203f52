import Foundation

/// JetStream on a connection: streams that keep what is published to their subjects, publishing with an
/// acknowledgement, and pull consumers that read a stream from where they choose.
///
/// Every call is a request to the server's API (`$JS.API.…`) and blocks until it answers, up to ``timeout``; each
/// has an `async` counterpart. A `JetStream` is a value: copy it freely, across threads too.
///
/// ```swift
/// let jetStream = connection.jetStream()
/// _ = try jetStream.createStream(StreamConfiguration(name: "HISTORY", subjects: ["history.>"]))
/// let ack = try jetStream.publish(
///     subject: "history.store", payload: entry, options: PublishOptions(messageID: "entry-42"))
/// print(ack.sequence)
/// ```
public struct JetStream: Sendable {
    /// The connection the requests go through.
    public let connection: NATSConnection

    /// The API prefix, `$JS.API` by default.
    public let prefix: String

    /// How long an API call or a publish acknowledgement may take.
    public let timeout: Duration

    init(connection: NATSConnection, prefix: String, timeout: Duration) {
        self.connection = connection
        self.prefix = prefix
        self.timeout = timeout
    }

    /// Sends a request to `$JS.API.<path>` with `body` as JSON (or an empty payload) and decodes the reply.
    ///
    /// - Throws: ``JetStreamError`` when the server answers with an error, ``NATSError/noResponders(subject:)``
    ///   when JetStream does not answer (not enabled), ``NATSError/invalidResponse(subject:reason:)``, and what
    ///   ``NATSConnection/request(subject:headers:payload:timeout:)`` throws.
    func call<Response: Decodable>(_ path: String, body: (some Encodable)?, as type: Response.Type) throws -> Response {
        let subject = prefix + "." + path
        let payload = try body.map { Array(try Self.encoder.encode($0)) } ?? []
        let reply = try connection.request(subject: subject, payload: payload, timeout: timeout)
        return try Self.decode(type, from: reply.payload, subject: subject)
    }

    /// Decodes an API reply: its `error` as a ``JetStreamError``, or the response.
    ///
    /// - Throws: ``JetStreamError``, ``NATSError/invalidResponse(subject:reason:)``.
    static func decode<Response: Decodable>(
        _ type: Response.Type, from payload: [UInt8], subject: String
    ) throws
        -> Response
    {
        let data = Data(payload)
        let envelope: ErrorEnvelope
        do {
            envelope = try decoder.decode(ErrorEnvelope.self, from: data)
        } catch {
            throw NATSError.invalidResponse(subject: subject, reason: "not a JSON object: \(error)")
        }
        if let error = envelope.error {
            throw JetStreamError(
                code: error.code, errorCode: error.errorCode ?? 0, description: error.description ?? "",
                subject: subject)
        }
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw NATSError.invalidResponse(subject: subject, reason: "\(error)")
        }
    }

    static let encoder = JSONEncoder()
    static let decoder = JSONDecoder()

    /// The `error` member of an API reply.
    struct ErrorEnvelope: Decodable {
        struct Body: Decodable {
            var code: Int
            var errorCode: Int?
            var description: String?

            enum CodingKeys: String, CodingKey {
                case code
                case errorCode = "err_code"
                case description
            }
        }

        var error: Body?
    }

    /// An API request without a body.
    static let noBody: String? = nil
}

extension Duration {
    /// The duration in whole nanoseconds, as JetStream's JSON writes durations.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
