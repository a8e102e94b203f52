/// Publishes to JetStream without waiting for each acknowledgement: up to a number of publishes wait at once, and
/// their acknowledgements are collected in the order of the publishes.
///
/// The server handles a connection's messages in order, so a stream stores pipelined messages in the order they
/// were published, and their sequences follow that order. When a publish fails (its acknowledgement is an error or
/// does not come), the pipeline throws that error from the call that collected it, drops the publishes still in
/// flight, and ``acknowledgements`` holds those that succeeded before: publish the rest again, with the same
/// message IDs so that the stream drops those it already has.
///
/// A pipeline belongs to one thread at a time.
///
/// ```swift
/// let pipeline = try jetStream.makePipeline(maximumInFlight: 512)
/// for entry in entries {
///     try pipeline.publish(subject: "history.store", payload: entry.bytes,
///                          options: PublishOptions(messageID: entry.id))
/// }
/// let acks = try pipeline.finish()
/// ```
public final class PublishPipeline {
    /// The JetStream context it publishes through.
    public let jetStream: JetStream

    /// How many publishes may wait for their acknowledgement at once.
    public let maximumInFlight: Int

    /// How long each publish may wait for its acknowledgement.
    public let timeout: Duration

    /// The acknowledgements collected so far, in the order of the publishes, since the pipeline was made or last
    /// finished.
    public private(set) var acknowledgements: [PublishAck] = []

    private struct InFlight {
        var ticket: ResponseRouter.Ticket
        var subject: String
        var deadline: ContinuousClock.Instant
    }

    private var inFlight: [InFlight] = []
    private var head = 0

    init(jetStream: JetStream, maximumInFlight: Int, timeout: Duration) {
        self.jetStream = jetStream
        self.maximumInFlight = maximumInFlight
        self.timeout = timeout
    }

    deinit {
        dropInFlight()
    }

    /// How many publishes wait for their acknowledgement.
    public var inFlightCount: Int {
        inFlight.count - head
    }

    /// Publishes a message; when ``maximumInFlight`` publishes already wait, it first waits for the oldest
    /// acknowledgement.
    ///
    /// - Parameters:
    ///   - subject: A subject a stream captures.
    ///   - payload: The bytes.
    ///   - headers: Headers of the caller's own.
    ///   - options: The message ID and expectations.
    /// - Throws: The error of an earlier publish whose acknowledgement it collected, as
    ///   ``JetStream/publish(subject:payload:headers:options:timeout:)`` throws it, and what sending throws
    ///   (``NATSError/payloadTooLarge(size:maximumPayload:)`` among them).
    public func publish(
        subject: String, payload: some Collection<UInt8>, headers: NATSHeaders? = nil,
        options: PublishOptions = PublishOptions()
    ) throws {
        while inFlightCount >= maximumInFlight { try collectOldest() }
        let core = jetStream.connection.core
        let ticket = try core.router.register(on: core)
        do {
            try core.publish(
                subject: subject, replySubject: ticket.subject, headers: options.applied(to: headers),
                payload: Array(payload))
        } catch {
            core.router.cancel(ticket)
            throw error
        }
        inFlight.append(InFlight(ticket: ticket, subject: subject, deadline: .now + timeout))
    }

    /// Waits for every acknowledgement, and returns them all, in order; the pipeline starts over empty.
    ///
    /// - Throws: The error of the first publish that failed; ``acknowledgements`` then holds those before it.
    public func finish() throws -> [PublishAck] {
        while inFlightCount > 0 { try collectOldest() }
        defer { acknowledgements = [] }
        return acknowledgements
    }

    /// Waits for the oldest publish's acknowledgement and appends it; on an error, drops the rest and throws.
    private func collectOldest() throws {
        let oldest = inFlight[head]
        head += 1
        if head == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            head = 0
        }
        let router = jetStream.connection.core.router
        do {
            let reply = try router.wait(
                for: oldest.ticket, until: oldest.deadline, subject: oldest.subject, timeout: timeout)
            if reply.status == 503 { throw NATSError.noResponders(subject: oldest.subject) }
            acknowledgements.append(try JetStream.decode(PublishAck.self, from: reply.payload, subject: oldest.subject))
        } catch {
            dropInFlight()
            throw error
        }
    }

    /// Frees the slots of the publishes still waiting.
    private func dropInFlight() {
        let router = jetStream.connection.core.router
        for entry in inFlight[head...] { router.cancel(entry.ticket) }
        inFlight.removeAll()
        head = 0
    }
}

@available(*, unavailable)
extension PublishPipeline: Sendable {}
