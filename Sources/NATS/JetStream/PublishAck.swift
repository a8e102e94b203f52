/// The acknowledgement of a message JetStream stored: the stream that took it, its sequence there, and whether it
/// was a duplicate of a message already stored under the same `Nats-Msg-Id` (then the sequence is the first one's).
public struct PublishAck: Sendable, Equatable, Decodable {
    /// The stream that stored the message.
    public var stream: String
    /// The message's sequence in the stream.
    public var sequence: UInt64
    /// Whether the stream already had a message with this `Nats-Msg-Id`, within its duplicate window, and dropped
    /// this one.
    public var duplicate: Bool
    /// The JetStream domain, when the server has one.
    public var domain: String?

    /// Creates an acknowledgement.
    public init(stream: String, sequence: UInt64, duplicate: Bool = false, domain: String? = nil) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
        self.domain = domain
    }

    enum CodingKeys: String, CodingKey {
        case stream
        case sequence = "seq"
        case duplicate
        case domain
    }

    /// Decodes the server's JSON, where `duplicate` is left out when false.
    ///
    /// - Throws: `DecodingError` when `stream` or `seq` is missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stream = try container.decode(String.self, forKey: .stream)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        duplicate = try container.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false
        domain = try container.decodeIfPresent(String.self, forKey: .domain)
    }
}

/// The conditions and identity of a JetStream publish, sent as headers.
public struct PublishOptions: Sendable, Equatable {
    /// `Nats-Msg-Id`: the stream drops a second message with this ID within its duplicate window, and acknowledges
    /// it as a duplicate.
    public var messageID: String?
    /// `Nats-Expected-Last-Msg-Id`: the stream refuses the message unless its last message has this ID.
    public var expectedLastMessageID: String?
    /// `Nats-Expected-Last-Sequence`: the stream refuses the message unless its last sequence is this.
    public var expectedLastSequence: UInt64?
    /// `Nats-Expected-Stream`: the message is refused unless this stream captures it.
    public var expectedStream: String?

    /// Creates options; all are optional.
    public init(
        messageID: String? = nil, expectedLastMessageID: String? = nil, expectedLastSequence: UInt64? = nil,
        expectedStream: String? = nil
    ) {
        self.messageID = messageID
        self.expectedLastMessageID = expectedLastMessageID
        self.expectedLastSequence = expectedLastSequence
        self.expectedStream = expectedStream
    }

    /// `headers` with these options' headers set.
    func applied(to headers: NATSHeaders?) -> NATSHeaders? {
        if messageID == nil && expectedLastMessageID == nil && expectedLastSequence == nil && expectedStream == nil {
            return headers
        }
        var result = headers ?? NATSHeaders()
        if let messageID { result[NATSHeaders.Name.messageID] = messageID }
        if let expectedLastMessageID { result[NATSHeaders.Name.expectedLastMessageID] = expectedLastMessageID }
        if let expectedLastSequence { result[NATSHeaders.Name.expectedLastSequence] = String(expectedLastSequence) }
        if let expectedStream { result[NATSHeaders.Name.expectedStream] = expectedStream }
        return result
    }
}
