/// A subscription to a subject: the messages the server sends for it wait in a queue until ``next(timeout:)`` takes
/// them.
///
/// The connection keeps a subscription until ``unsubscribe()`` or its own closing: call it when done. The queue has
/// no bound: a subscriber that falls behind holds its messages in memory. A subscription is renewed by itself when
/// the connection reconnects; messages published while it was down are not delivered (core NATS is at most once:
/// JetStream keeps what must not be lost).
///
/// ```swift
/// let subscription = try connection.subscribe(to: "orders.>")
/// while let message = try subscription.next(timeout: .seconds(1)) {
///     print(message.subject, message.string)
/// }
/// ```
public final class Subscription: Sendable {
    /// The subject, which may hold wildcards.
    public let subject: String

    /// The queue group: the server gives each message to one member of the group only.
    public let queueGroup: String?

    let sid: UInt64
    private let core: ConnectionCore
    private let handler: (@Sendable (NATSMessage) -> Void)?
    private let queue = ConditionLock(Queue())

    private struct Queue {
        var messages: [NATSMessage] = []
        var head = 0
        var ended = false
        var error: NATSError?
    }

    init(
        subject: String, queueGroup: String?, sid: UInt64, core: ConnectionCore,
        handler: (@Sendable (NATSMessage) -> Void)?
    ) {
        self.subject = subject
        self.queueGroup = queueGroup
        self.sid = sid
        self.core = core
        self.handler = handler
    }

    /// Takes the next message, waiting up to `timeout` for one.
    ///
    /// - Returns: The message, or `nil` when `timeout` passed without one or the subscription was ended by
    ///   ``unsubscribe()`` and its queue is empty.
    /// - Throws: ``NATSError/connectionClosed(reason:)`` once the connection is closed and the queue is empty.
    public func next(timeout: Duration) throws -> NATSMessage? {
        let outcome: Result<NATSMessage?, NATSError>? = queue.wait(until: .now + timeout) { queue in
            if queue.head < queue.messages.count {
                let message = queue.messages[queue.head]
                queue.head += 1
                if queue.head > 1024 && queue.head * 2 > queue.messages.count {
                    queue.messages.removeSubrange(0..<queue.head)
                    queue.head = 0
                }
                return .success(message)
            }
            if let error = queue.error { return .failure(error) }
            return queue.ended ? .success(nil) : nil
        }
        return try outcome?.get() ?? nil
    }

    /// The number of messages waiting in the queue.
    public var pendingCount: Int {
        queue.withLock { $0.messages.count - $0.head }
    }

    /// Ends the subscription: the server stops sending its messages, and those already queued can still be taken.
    public func unsubscribe() {
        core.unsubscribe(self)
    }

    /// Hands a message that arrived to the handler, or queues it.
    func deliver(_ message: NATSMessage) {
        if let handler {
            handler(message)
            return
        }
        queue.withLockBroadcasting { queue in
            if !queue.ended { queue.messages.append(message) }
        }
    }

    /// Ends the queue: `error` once it is drained, or `nil` after an unsubscription.
    func finish(with error: NATSError?) {
        queue.withLockBroadcasting { queue in
            queue.ended = true
            queue.error = error
        }
    }
}
