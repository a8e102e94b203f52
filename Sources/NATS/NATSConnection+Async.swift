// The `async` counterparts of the blocking calls: each runs the blocking call off the cooperative pool and throws
// what it throws.

extension NATSConnection {
    /// Connects as ``init(servers:options:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``init(servers:options:)`` throws.
    public static func connect(servers: [String], options: Options = Options()) async throws -> NATSConnection {
        try await Blocking.run { try NATSConnection(servers: servers, options: options) }
    }

    /// Sends a request and waits for the first reply, as
    /// ``request(subject:headers:payload:timeout:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``request(subject:headers:payload:timeout:)`` throws.
    public func request(
        subject: String, headers: NATSHeaders? = nil, payload: some Collection<UInt8>, timeout: Duration? = nil
    ) async throws -> NATSMessage {
        let bytes = Array(payload)
        return try await Blocking.run {
            try self.request(subject: subject, headers: headers, payload: bytes, timeout: timeout)
        }
    }

    /// Waits until the server has processed everything sent before, as ``flush(timeout:)`` does, without blocking a
    /// task's thread.
    ///
    /// - Throws: What ``flush(timeout:)`` throws.
    public func flush(timeout: Duration? = nil) async throws {
        try await Blocking.run { try self.flush(timeout: timeout) }
    }
}

extension Subscription {
    /// Takes the next message, waiting up to `timeout`, as ``next(timeout:)`` does, without blocking a task's
    /// thread.
    ///
    /// - Throws: What ``next(timeout:)`` throws.
    public func next(timeout: Duration) async throws -> NATSMessage? {
        try await Blocking.run { try self.next(timeout: timeout) }
    }
}

extension JetStream {
    /// Publishes and waits for the acknowledgement, as ``publish(subject:payload:headers:options:timeout:)`` does,
    /// without blocking a task's thread.
    ///
    /// - Throws: What ``publish(subject:payload:headers:options:timeout:)`` throws.
    public func publish(
        subject: String, payload: some Collection<UInt8>, headers: NATSHeaders? = nil,
        options: PublishOptions = PublishOptions(), timeout: Duration? = nil
    ) async throws -> PublishAck {
        let bytes = Array(payload)
        return try await Blocking.run {
            try self.publish(subject: subject, payload: bytes, headers: headers, options: options, timeout: timeout)
        }
    }

    /// Creates a stream, as ``createStream(_:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``createStream(_:)`` throws.
    public func createStream(_ configuration: StreamConfiguration) async throws -> StreamInfo {
        try await Blocking.run { try self.createStream(configuration) }
    }

    /// Changes a stream, as ``updateStream(_:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``updateStream(_:)`` throws.
    public func updateStream(_ configuration: StreamConfiguration) async throws -> StreamInfo {
        try await Blocking.run { try self.updateStream(configuration) }
    }

    /// Reads a stream's information, as ``streamInfo(_:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``streamInfo(_:)`` throws.
    public func streamInfo(_ name: String) async throws -> StreamInfo {
        try await Blocking.run { try self.streamInfo(name) }
    }

    /// Deletes a stream, as ``deleteStream(_:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``deleteStream(_:)`` throws.
    public func deleteStream(_ name: String) async throws {
        try await Blocking.run { try self.deleteStream(name) }
    }

    /// Reads a stored message, as ``message(stream:sequence:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``message(stream:sequence:)`` throws.
    public func message(stream: String, sequence: UInt64) async throws -> StoredMessage {
        try await Blocking.run { try self.message(stream: stream, sequence: sequence) }
    }

    /// Reads the last message on a subject, as ``lastMessage(stream:subject:)`` does, without blocking a task's
    /// thread.
    ///
    /// - Throws: What ``lastMessage(stream:subject:)`` throws.
    public func lastMessage(stream: String, subject: String) async throws -> StoredMessage? {
        try await Blocking.run { try self.lastMessage(stream: stream, subject: subject) }
    }

    /// Creates a consumer, as ``createConsumer(stream:configuration:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``createConsumer(stream:configuration:)`` throws.
    public func createConsumer(stream: String, configuration: ConsumerConfiguration) async throws -> ConsumerInfo {
        try await Blocking.run { try self.createConsumer(stream: stream, configuration: configuration) }
    }

    /// Reads a consumer's information, as ``consumerInfo(stream:consumer:)`` does, without blocking a task's
    /// thread.
    ///
    /// - Throws: What ``consumerInfo(stream:consumer:)`` throws.
    public func consumerInfo(stream: String, consumer: String) async throws -> ConsumerInfo {
        try await Blocking.run { try self.consumerInfo(stream: stream, consumer: consumer) }
    }

    /// Deletes a consumer, as ``deleteConsumer(stream:consumer:)`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``deleteConsumer(stream:consumer:)`` throws.
    public func deleteConsumer(stream: String, consumer: String) async throws {
        try await Blocking.run { try self.deleteConsumer(stream: stream, consumer: consumer) }
    }
}

extension PullConsumer {
    /// Pulls up to `batch` messages, as ``fetch(batch:expires:noWait:heartbeat:)`` does, without blocking a task's
    /// thread.
    ///
    /// - Throws: What ``fetch(batch:expires:noWait:heartbeat:)`` throws.
    public func fetch(
        batch: Int, expires: Duration = .seconds(1), noWait: Bool = false, heartbeat: Duration? = nil
    )
        async throws -> [JetStreamMessage]
    {
        try await Blocking.run { try self.fetch(batch: batch, expires: expires, noWait: noWait, heartbeat: heartbeat) }
    }

    /// Reads the consumer's configuration and progress, as ``info()`` does, without blocking a task's thread.
    ///
    /// - Throws: What ``info()`` throws.
    public func info() async throws -> ConsumerInfo {
        try await Blocking.run { try self.info() }
    }
}

extension JetStreamMessage {
    /// Acknowledges and waits until the server recorded it, as ``ackSync(timeout:)`` does, without blocking a
    /// task's thread.
    ///
    /// - Throws: What ``ackSync(timeout:)`` throws.
    public func ackSync(timeout: Duration? = nil) async throws {
        try await Blocking.run { try self.ackSync(timeout: timeout) }
    }
}
