import NATS

/// The JetStream stream a store's history goes to, and the subject it captures.
///
/// One stream carries one primary's history, in order; nothing else may publish to its subject. Create it once with
/// ``configuration(replicas:maximumAge:maximumBytes:duplicateWindow:)`` (three replicas on a three-node cluster keep
/// every acknowledged message through the loss of a node), or let ``ReplicationPublisher`` create it.
///
/// ```swift
/// let stream = ReplicationStream(name: "ORDERS")
/// _ = try jetStream.createStream(stream.configuration(replicas: 3))
/// ```
public struct ReplicationStream: Sendable, Hashable {
    /// The stream's name.
    public let name: String
    /// The subject its messages are published to.
    public let subject: String

    /// Names a stream, and its subject: `kvstore.history.<name>` unless given.
    ///
    /// - Parameters:
    ///   - name: A JetStream stream name (no spaces, dots, `*`, `>`).
    ///   - subject: The subject the stream captures and the publisher publishes to.
    public init(name: String, subject: String? = nil) {
        self.name = name
        self.subject = subject ?? "kvstore.history.\(name)"
    }

    /// A configuration for the stream: file storage, limits retention, and the given replicas and limits.
    ///
    /// A replica that falls further behind than `maximumAge` or `maximumBytes` keep must be bootstrapped again from
    /// a copy of the primary; the primary's own history retention should be at least as long, so that a publisher
    /// kept from the stream for a while catches up from it.
    ///
    /// - Parameters:
    ///   - replicas: Copies of the stream in the cluster: 1, or 3 on a cluster of three or more nodes.
    ///   - maximumAge: How long the stream keeps a message; `nil` for ever.
    ///   - maximumBytes: How many bytes it keeps; `nil` for no limit.
    ///   - duplicateWindow: How long the stream remembers message IDs to drop a publisher's repeats.
    public func configuration(
        replicas: Int = 1, maximumAge: Duration? = nil, maximumBytes: Int? = nil,
        duplicateWindow: Duration = .seconds(120)
    ) -> StreamConfiguration {
        StreamConfiguration(
            name: name, subjects: [subject], storage: .file, replicas: replicas, maximumAge: maximumAge,
            maximumBytes: maximumBytes, duplicateWindow: duplicateWindow)
    }
}
