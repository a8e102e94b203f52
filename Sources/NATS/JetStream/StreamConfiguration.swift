/// A stream's configuration: its name, the subjects it captures, where and how many times it stores them, and its
/// limits.
///
/// `nil` limits are unlimited (the server's `-1`, or `0` for the age). The duplicate window is how long the stream
/// remembers the `Nats-Msg-Id` of each message to drop a second publish of it; `nil` takes the server's default
/// (two minutes).
public struct StreamConfiguration: Sendable, Equatable, Codable {
    /// Where the stream keeps its messages.
    public enum Storage: String, Sendable, Codable {
        /// On disk, in the server's store directory.
        case file
        /// In memory: lost when the server stops.
        case memory
    }

    /// When the stream lets a message go.
    public enum Retention: String, Sendable, Codable {
        /// At its limits only (age, count, bytes).
        case limits
        /// Once every consumer has acknowledged it.
        case interest
        /// Once one consumer has acknowledged it.
        case workQueue = "workqueue"
    }

    /// What the stream does when a limit is reached.
    public enum Discard: String, Sendable, Codable {
        /// It drops its oldest messages.
        case old
        /// It refuses new messages.
        case new
    }

    /// The stream's name: letters, digits, `-` and `_`.
    public var name: String
    /// The subjects it captures; wildcards allowed.
    public var subjects: [String]
    /// What the stream is for, as monitoring shows it.
    public var description: String?
    /// When messages go.
    public var retention: Retention
    /// Disk or memory.
    public var storage: Storage
    /// How many servers of the cluster keep a copy: 1, 3 or 5 (at most 5).
    public var replicas: Int
    /// How long a message stays; `nil` for ever.
    public var maximumAge: Duration?
    /// How many messages the stream keeps; `nil` for no limit.
    public var maximumMessages: Int?
    /// How many bytes the stream keeps; `nil` for no limit.
    public var maximumBytes: Int?
    /// The largest message the stream accepts; `nil` for the server's maximum payload.
    public var maximumMessageSize: Int?
    /// How many messages it keeps per subject; `nil` for no limit.
    public var maximumMessagesPerSubject: Int?
    /// How long `Nats-Msg-Id`s are remembered to drop duplicates; `nil` for the server's default of two minutes.
    public var duplicateWindow: Duration?
    /// What happens at a limit.
    public var discard: Discard

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - name: The stream's name.
    ///   - subjects: The subjects it captures.
    ///   - storage: Disk (the default) or memory.
    ///   - replicas: Copies in a cluster, 1 by default.
    ///   - maximumAge: How long a message stays; `nil` for ever.
    ///   - maximumMessages: A limit on the count of messages.
    ///   - maximumBytes: A limit on their bytes.
    ///   - maximumMessageSize: A limit on one message's size.
    ///   - duplicateWindow: How long message IDs are remembered.
    ///   - retention: When messages go, at the limits by default.
    ///   - discard: What a limit drops, the oldest messages by default.
    public init(
        name: String, subjects: [String], storage: Storage = .file, replicas: Int = 1,
        maximumAge: Duration? = nil, maximumMessages: Int? = nil, maximumBytes: Int? = nil,
        maximumMessageSize: Int? = nil, duplicateWindow: Duration? = nil, retention: Retention = .limits,
        discard: Discard = .old
    ) {
        self.name = name
        self.subjects = subjects
        self.description = nil
        self.retention = retention
        self.storage = storage
        self.replicas = replicas
        self.maximumAge = maximumAge
        self.maximumMessages = maximumMessages
        self.maximumBytes = maximumBytes
        self.maximumMessageSize = maximumMessageSize
        self.maximumMessagesPerSubject = nil
        self.duplicateWindow = duplicateWindow
        self.discard = discard
    }

    enum CodingKeys: String, CodingKey {
        case name
        case subjects
        case description
        case retention
        case storage
        case replicas = "num_replicas"
        case maximumAge = "max_age"
        case maximumMessages = "max_msgs"
        case maximumBytes = "max_bytes"
        case maximumMessageSize = "max_msg_size"
        case maximumMessagesPerSubject = "max_msgs_per_subject"
        case duplicateWindow = "duplicate_window"
        case discard
        case maximumConsumers = "max_consumers"
    }

    /// Encodes the configuration as the API's JSON: durations in nanoseconds, no limit as `-1`.
    ///
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(subjects, forKey: .subjects)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encode(retention, forKey: .retention)
        try container.encode(storage, forKey: .storage)
        try container.encode(replicas, forKey: .replicas)
        try container.encode(maximumAge?.nanoseconds ?? 0, forKey: .maximumAge)
        try container.encode(maximumMessages ?? -1, forKey: .maximumMessages)
        try container.encode(maximumBytes ?? -1, forKey: .maximumBytes)
        try container.encode(maximumMessageSize ?? -1, forKey: .maximumMessageSize)
        try container.encode(maximumMessagesPerSubject ?? -1, forKey: .maximumMessagesPerSubject)
        try container.encode(-1, forKey: .maximumConsumers)
        try container.encodeIfPresent(duplicateWindow?.nanoseconds, forKey: .duplicateWindow)
        try container.encode(discard, forKey: .discard)
    }

    /// Decodes the API's JSON.
    ///
    /// - Throws: `DecodingError` when a member has the wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func limit(_ key: CodingKeys) throws -> Int? {
            guard let value = try container.decodeIfPresent(Int.self, forKey: key), value >= 0 else { return nil }
            return value
        }
        func duration(_ key: CodingKeys) throws -> Duration? {
            guard let value = try container.decodeIfPresent(Int64.self, forKey: key), value > 0 else { return nil }
            return .nanoseconds(value)
        }
        name = try container.decode(String.self, forKey: .name)
        subjects = try container.decodeIfPresent([String].self, forKey: .subjects) ?? []
        description = try container.decodeIfPresent(String.self, forKey: .description)
        retention = try container.decodeIfPresent(Retention.self, forKey: .retention) ?? .limits
        storage = try container.decodeIfPresent(Storage.self, forKey: .storage) ?? .file
        replicas = try container.decodeIfPresent(Int.self, forKey: .replicas) ?? 1
        maximumAge = try duration(.maximumAge)
        maximumMessages = try limit(.maximumMessages)
        maximumBytes = try limit(.maximumBytes)
        maximumMessageSize = try limit(.maximumMessageSize)
        maximumMessagesPerSubject = try limit(.maximumMessagesPerSubject)
        duplicateWindow = try duration(.duplicateWindow)
        discard = try container.decodeIfPresent(Discard.self, forKey: .discard) ?? .old
    }
}
