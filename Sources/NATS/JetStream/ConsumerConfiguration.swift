/// A pull consumer's configuration: where in the stream it starts, how it wants acknowledgements, and how often it
/// redelivers a message nobody acknowledged.
///
/// With a ``durableName`` the consumer outlives its clients and remembers what was acknowledged; without one it is
/// ephemeral, and the server removes it after ``inactiveThreshold`` without a pull. A replica that records the last
/// sequence it applied creates an ephemeral consumer that starts after it:
///
/// ```swift
/// let info = try jetStream.createConsumer(
///     stream: "HISTORY",
///     configuration: ConsumerConfiguration(deliverPolicy: .byStartSequence(lastApplied + 1), ackPolicy: .none))
/// ```
public struct ConsumerConfiguration: Sendable, Equatable, Codable {
    /// Where the consumer starts.
    public enum DeliverPolicy: Sendable, Equatable {
        /// At the stream's first message.
        case all
        /// At its last message.
        case last
        /// With the messages stored after the consumer was created.
        case new
        /// At this sequence (or the first one after it that exists).
        case byStartSequence(UInt64)
        /// At the last message of each subject.
        case lastPerSubject
    }

    /// What the server expects of the client for each message.
    public enum AckPolicy: String, Sendable, Codable {
        /// Nothing: a message counts as handled once delivered.
        case none
        /// An acknowledgement of every message; one not acknowledged within ``ackWait`` is delivered again.
        case explicit
        /// An acknowledgement that covers every message before it too.
        case all
    }

    /// The durable name, for a consumer that outlives its clients; `nil` for an ephemeral one.
    public var durableName: String?
    /// What the consumer is for, as monitoring shows it.
    public var description: String?
    /// Where it starts.
    public var deliverPolicy: DeliverPolicy
    /// What acknowledgements it expects.
    public var ackPolicy: AckPolicy
    /// How long the server waits for an acknowledgement before delivering the message again; `nil` for its default
    /// of 30 seconds.
    public var ackWait: Duration?
    /// How many times a message is delivered at most; `nil` for no limit.
    public var maximumDeliveries: Int?
    /// Only the stream's messages on this subject.
    public var filterSubject: String?
    /// How many messages may wait for an acknowledgement at once; `nil` for the server's default.
    public var maximumAckPending: Int?
    /// How many pull requests may wait at once; `nil` for the server's default.
    public var maximumWaiting: Int?
    /// How long an ephemeral consumer lives without a pull; `nil` for the server's default.
    public var inactiveThreshold: Duration?
    /// How many copies of its state a cluster keeps; `nil` for the stream's count.
    public var replicas: Int?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - durableName: A durable name, or `nil` for an ephemeral consumer.
    ///   - deliverPolicy: Where it starts, at the first message by default.
    ///   - ackPolicy: What it expects, an acknowledgement of each message by default.
    ///   - ackWait: How long until an unacknowledged message is delivered again.
    ///   - maximumDeliveries: A limit on deliveries of one message.
    ///   - filterSubject: Only this subject's messages.
    ///   - inactiveThreshold: How long an ephemeral consumer lives unused.
    public init(
        durableName: String? = nil, deliverPolicy: DeliverPolicy = .all, ackPolicy: AckPolicy = .explicit,
        ackWait: Duration? = nil, maximumDeliveries: Int? = nil, filterSubject: String? = nil,
        inactiveThreshold: Duration? = nil
    ) {
        self.durableName = durableName
        self.description = nil
        self.deliverPolicy = deliverPolicy
        self.ackPolicy = ackPolicy
        self.ackWait = ackWait
        self.maximumDeliveries = maximumDeliveries
        self.filterSubject = filterSubject
        self.maximumAckPending = nil
        self.maximumWaiting = nil
        self.inactiveThreshold = inactiveThreshold
        self.replicas = nil
    }

    enum CodingKeys: String, CodingKey {
        case durableName = "durable_name"
        case description
        case deliverPolicy = "deliver_policy"
        case startSequence = "opt_start_seq"
        case ackPolicy = "ack_policy"
        case ackWait = "ack_wait"
        case maximumDeliveries = "max_deliver"
        case filterSubject = "filter_subject"
        case maximumAckPending = "max_ack_pending"
        case maximumWaiting = "max_waiting"
        case inactiveThreshold = "inactive_threshold"
        case replicas = "num_replicas"
        case replayPolicy = "replay_policy"
    }

    /// Encodes the configuration as the API's JSON.
    ///
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(durableName, forKey: .durableName)
        try container.encodeIfPresent(description, forKey: .description)
        switch deliverPolicy {
        case .all: try container.encode("all", forKey: .deliverPolicy)
        case .last: try container.encode("last", forKey: .deliverPolicy)
        case .new: try container.encode("new", forKey: .deliverPolicy)
        case .lastPerSubject: try container.encode("last_per_subject", forKey: .deliverPolicy)
        case .byStartSequence(let sequence):
            try container.encode("by_start_sequence", forKey: .deliverPolicy)
            try container.encode(sequence, forKey: .startSequence)
        }
        try container.encode(ackPolicy, forKey: .ackPolicy)
        try container.encodeIfPresent(ackWait?.nanoseconds, forKey: .ackWait)
        try container.encode(maximumDeliveries ?? -1, forKey: .maximumDeliveries)
        try container.encodeIfPresent(filterSubject, forKey: .filterSubject)
        try container.encodeIfPresent(maximumAckPending, forKey: .maximumAckPending)
        try container.encodeIfPresent(maximumWaiting, forKey: .maximumWaiting)
        try container.encodeIfPresent(inactiveThreshold?.nanoseconds, forKey: .inactiveThreshold)
        try container.encodeIfPresent(replicas, forKey: .replicas)
        try container.encode("instant", forKey: .replayPolicy)
    }

    /// Decodes the API's JSON.
    ///
    /// - Throws: `DecodingError` when a member has the wrong type or the deliver policy is unknown.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func duration(_ key: CodingKeys) throws -> Duration? {
            guard let value = try container.decodeIfPresent(Int64.self, forKey: key), value > 0 else { return nil }
            return .nanoseconds(value)
        }
        durableName = try container.decodeIfPresent(String.self, forKey: .durableName)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        switch try container.decodeIfPresent(String.self, forKey: .deliverPolicy) ?? "all" {
        case "all": deliverPolicy = .all
        case "last": deliverPolicy = .last
        case "new": deliverPolicy = .new
        case "last_per_subject": deliverPolicy = .lastPerSubject
        case "by_start_sequence":
            deliverPolicy = .byStartSequence(try container.decode(UInt64.self, forKey: .startSequence))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .deliverPolicy, in: container, debugDescription: "unknown deliver policy '\(other)'")
        }
        ackPolicy = try container.decodeIfPresent(AckPolicy.self, forKey: .ackPolicy) ?? .explicit
        ackWait = try duration(.ackWait)
        let deliveries = try container.decodeIfPresent(Int.self, forKey: .maximumDeliveries) ?? -1
        maximumDeliveries = deliveries > 0 ? deliveries : nil
        filterSubject = try container.decodeIfPresent(String.self, forKey: .filterSubject)
        maximumAckPending = try container.decodeIfPresent(Int.self, forKey: .maximumAckPending)
        maximumWaiting = try container.decodeIfPresent(Int.self, forKey: .maximumWaiting)
        inactiveThreshold = try duration(.inactiveThreshold)
        replicas = try container.decodeIfPresent(Int.self, forKey: .replicas)
    }
}

/// What the server says of a consumer: its configuration and how far it got.
public struct ConsumerInfo: Sendable, Decodable {
    /// A position: the consumer's own sequence and the stream's.
    public struct Position: Sendable, Equatable, Decodable {
        /// The consumer's sequence: its deliveries, counted.
        public var consumerSequence: UInt64
        /// The stream's sequence of the message.
        public var streamSequence: UInt64

        enum CodingKeys: String, CodingKey {
            case consumerSequence = "consumer_seq"
            case streamSequence = "stream_seq"
        }
    }

    /// The stream it reads.
    public var stream: String
    /// Its name: the durable name, or the one the server gave an ephemeral consumer.
    public var name: String
    /// Its configuration, as the server completed it.
    public var configuration: ConsumerConfiguration
    /// The last message delivered.
    public var delivered: Position
    /// The point up to which every message is acknowledged.
    public var ackFloor: Position
    /// How many delivered messages wait for an acknowledgement.
    public var ackPendingCount: Int
    /// How many messages were delivered more than once.
    public var redeliveredCount: Int
    /// How many pull requests wait.
    public var waitingCount: Int
    /// How many messages of the stream it has not delivered yet.
    public var pendingCount: UInt64

    enum CodingKeys: String, CodingKey {
        case stream = "stream_name"
        case name
        case configuration = "config"
        case delivered
        case ackFloor = "ack_floor"
        case ackPendingCount = "num_ack_pending"
        case redeliveredCount = "num_redelivered"
        case waitingCount = "num_waiting"
        case pendingCount = "num_pending"
    }
}
