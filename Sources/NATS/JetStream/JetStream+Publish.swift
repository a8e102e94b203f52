extension JetStream {
    /// Publishes a message to a stream's subject and waits for the stream's acknowledgement.
    ///
    /// A message the server acknowledged is stored (on a majority of the replicas, in a cluster). When the call
    /// throws a timeout or a lost connection, the message may or may not be stored: publish it again with the same
    /// ``PublishOptions/messageID`` and the stream drops the second copy if the first made it.
    ///
    /// - Parameters:
    ///   - subject: A subject a stream captures.
    ///   - payload: The bytes.
    ///   - headers: Headers of the caller's own, sent beside those of `options`.
    ///   - options: The message ID and the expected last message ID, sequence or stream.
    ///   - timeout: How long to wait for the acknowledgement; ``timeout`` if `nil`.
    /// - Returns: The stream, the sequence and whether it was a duplicate.
    /// - Throws: ``JetStreamError/wrongLastMessageID`` and ``JetStreamError/wrongLastSequence`` when an
    ///   expectation fails, ``JetStreamError/messageTooLarge``, ``NATSError/noResponders(subject:)`` when no
    ///   stream captures the subject, ``NATSError/timedOut(operation:timeout:)``,
    ///   ``NATSError/payloadTooLarge(size:maximumPayload:)``, and the connection's other ``NATSError``s.
    public func publish(
        subject: String, payload: some Collection<UInt8>, headers: NATSHeaders? = nil,
        options: PublishOptions = PublishOptions(), timeout: Duration? = nil
    ) throws -> PublishAck {
        let reply = try connection.request(
            subject: subject, headers: options.applied(to: headers), payload: payload, timeout: timeout ?? self.timeout)
        return try Self.decode(PublishAck.self, from: reply.payload, subject: subject)
    }

    /// A pipeline that keeps up to `maximumInFlight` publishes waiting for their acknowledgements, for throughput.
    ///
    /// - Parameters:
    ///   - maximumInFlight: How many publishes may wait for their acknowledgement at once.
    ///   - timeout: How long each may wait; ``timeout`` if `nil`.
    /// - Throws: ``NATSError/invalidArgument(_:)`` when `maximumInFlight` is less than 1.
    public func makePipeline(maximumInFlight: Int = 256, timeout: Duration? = nil) throws -> PublishPipeline {
        guard maximumInFlight >= 1 else {
            throw NATSError.invalidArgument("a pipeline needs at least one publish in flight, not \(maximumInFlight)")
        }
        return PublishPipeline(jetStream: self, maximumInFlight: maximumInFlight, timeout: timeout ?? self.timeout)
    }
}
