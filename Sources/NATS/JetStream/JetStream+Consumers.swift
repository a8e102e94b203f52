extension JetStream {
    private struct CreateConsumerRequest: Encodable {
        var stream: String
        var configuration: ConsumerConfiguration

        enum CodingKeys: String, CodingKey {
            case stream = "stream_name"
            case configuration = "config"
        }
    }

    private struct DeleteResponse: Decodable {
        var success: Bool
    }

    /// Creates a consumer on `stream`: durable when the configuration has a durable name (creating it again with the
    /// same configuration changes nothing), ephemeral otherwise.
    ///
    /// The corresponding APIs are `$JS.API.CONSUMER.DURABLE.CREATE.<stream>.<durable>` and
    /// `$JS.API.CONSUMER.CREATE.<stream>`.
    ///
    /// - Returns: The consumer's information; its ``ConsumerInfo/name`` is the one to pull with.
    /// - Throws: ``JetStreamError/streamNotFound``, another ``JetStreamError`` for a configuration the server
    ///   refuses (a durable consumer that exists with another configuration), and the connection's
    ///   ``NATSError``s.
    public func createConsumer(stream: String, configuration: ConsumerConfiguration) throws -> ConsumerInfo {
        try Self.checkName(stream)
        let request = CreateConsumerRequest(stream: stream, configuration: configuration)
        if let durable = configuration.durableName {
            try Self.checkName(durable)
            return try call("CONSUMER.DURABLE.CREATE.\(stream).\(durable)", body: request, as: ConsumerInfo.self)
        }
        return try call("CONSUMER.CREATE.\(stream)", body: request, as: ConsumerInfo.self)
    }

    /// Reads a consumer's configuration and progress.
    ///
    /// The corresponding API is `$JS.API.CONSUMER.INFO.<stream>.<consumer>`.
    ///
    /// - Throws: ``JetStreamError/consumerNotFound``, ``JetStreamError/streamNotFound``, and the connection's
    ///   ``NATSError``s.
    public func consumerInfo(stream: String, consumer: String) throws -> ConsumerInfo {
        try Self.checkName(stream)
        try Self.checkName(consumer)
        return try call("CONSUMER.INFO.\(stream).\(consumer)", body: Self.noBody, as: ConsumerInfo.self)
    }

    /// Deletes a consumer.
    ///
    /// The corresponding API is `$JS.API.CONSUMER.DELETE.<stream>.<consumer>`.
    ///
    /// - Throws: ``JetStreamError/consumerNotFound``, ``JetStreamError/streamNotFound``, and the connection's
    ///   ``NATSError``s.
    public func deleteConsumer(stream: String, consumer: String) throws {
        try Self.checkName(stream)
        try Self.checkName(consumer)
        let response = try call("CONSUMER.DELETE.\(stream).\(consumer)", body: Self.noBody, as: DeleteResponse.self)
        if !response.success {
            throw NATSError.invalidResponse(
                subject: "\(prefix).CONSUMER.DELETE.\(stream).\(consumer)", reason: "success is false")
        }
    }

    /// A handle to pull messages from an existing consumer.
    public func pullConsumer(stream: String, consumer: String) -> PullConsumer {
        PullConsumer(jetStream: self, stream: stream, name: consumer)
    }
}
