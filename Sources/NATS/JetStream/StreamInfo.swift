import Foundation

/// What the server says of a stream: its configuration, what it holds, and its cluster's members.
public struct StreamInfo: Sendable, Decodable {
    /// What the stream holds.
    public struct State: Sendable, Equatable, Decodable {
        /// How many messages.
        public var messages: UInt64
        /// How many bytes.
        public var bytes: UInt64
        /// The sequence of the first message (1 in a new stream, more once messages went).
        public var firstSequence: UInt64
        /// The sequence of the last message stored, 0 in a new stream.
        public var lastSequence: UInt64
        /// How many consumers read it.
        public var consumerCount: Int

        enum CodingKeys: String, CodingKey {
            case messages
            case bytes
            case firstSequence = "first_seq"
            case lastSequence = "last_seq"
            case consumerCount = "consumer_count"
        }
    }

    /// A stream's place in a cluster.
    public struct Cluster: Sendable, Equatable, Decodable {
        /// A server that keeps a copy, other than the leader.
        public struct Replica: Sendable, Equatable, Decodable {
            /// The server's name.
            public var name: String
            /// Whether its copy is up to date.
            public var current: Bool
        }

        /// The cluster's name.
        public var name: String?
        /// The name of the server that leads the stream: it orders and acknowledges the writes.
        public var leader: String?
        /// The other servers that keep a copy.
        public var replicas: [Replica]?
    }

    /// The configuration, as the server completed it.
    public var configuration: StreamConfiguration
    /// What it holds.
    public var state: State
    /// Its leader and replicas, in a cluster.
    public var cluster: Cluster?

    enum CodingKeys: String, CodingKey {
        case configuration = "config"
        case state
        case cluster
    }
}

/// A message as a stream stores it, read back by sequence or by subject.
public struct StoredMessage: Sendable, Equatable, Decodable {
    /// The subject it was published to.
    public var subject: String
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// Its headers, if it had any.
    public var headers: NATSHeaders?
    /// Its payload.
    public var payload: [UInt8]

    /// The `Nats-Msg-Id` it was published with, if any.
    public var messageID: String? {
        headers?[NATSHeaders.Name.messageID]
    }

    enum CodingKeys: String, CodingKey {
        case subject
        case sequence = "seq"
        case headers = "hdrs"
        case payload = "data"
    }

    /// Decodes the API's JSON, whose headers and payload are base64.
    ///
    /// - Throws: `DecodingError` when a member has the wrong type or the headers cannot be parsed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subject = try container.decode(String.self, forKey: .subject)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        payload = Array(try container.decodeIfPresent(Data.self, forKey: .payload) ?? Data())
        if let block = try container.decodeIfPresent(Data.self, forKey: .headers), !block.isEmpty {
            do {
                headers = try NATSHeaders(parsing: Array(block)[...])
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: .headers, in: container, debugDescription: "unreadable headers: \(error)")
            }
        } else {
            headers = nil
        }
    }
}
