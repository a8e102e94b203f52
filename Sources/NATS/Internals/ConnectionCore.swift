import Foundation

/// The shared state of a connection, behind the core's lock.
struct ConnectionState {
    /// A `PING` waiting for its `PONG`: the server answers them in order.
    struct PendingPong {
        /// The flush waiting for it, or `nil` for a heartbeat.
        var id: UInt64?
        /// The connection it was sent on, or `nil` while it waits in the outbound buffer for a reconnection.
        var epoch: Int?
    }

    var status: NATSConnection.Status = .reconnecting
    /// The connected socket, while ``status`` is `.connected`.
    var socket: Socket?
    /// The socket of a connection attempt in progress, so that `close()` can interrupt it.
    var attemptSocket: Socket?
    /// Counts connections: each successful handshake starts a new epoch.
    var epoch = 0
    /// Bytes waiting for the writer thread.
    var outbound: [UInt8] = []
    /// Whether the writer thread is writing bytes it took, on the socket of the current epoch.
    var writerBusy = false
    var servers: [ServerAddress]
    var current: ServerAddress?
    var info: ServerInfo?
    var subscriptions: [UInt64: Subscription] = [:]
    var nextSID: UInt64 = 1
    var pongs: [PendingPong] = []
    var pongResults: [UInt64: Result<Void, NATSError>] = [:]
    var abandonedPongs: Set<UInt64> = []
    var nextPongID: UInt64 = 1
    var pingsOutstanding = 0
    var closeReason: String?
    var runningThreads = 0
    var readerThread: Thread?
    var reconnections = 0
    var lastServerError: String?
}

/// The connection's machinery, which its threads share: `NATSConnection` is the handle users hold, and closes it
/// when they let go of it.
///
/// Two threads run per connection. The reader owns the socket's lifetime: it reads and dispatches what the server
/// sends, sends heartbeats, notices a dead connection, reconnects and resubscribes. The writer sends the outbound
/// buffer, which every other thread only appends to under the lock, so that no caller waits on the network and
/// pipelined publishes go out in large writes.
final class ConnectionCore: Sendable {
    let options: NATSConnection.Options
    let state: ConditionLock<ConnectionState>
    let router: ResponseRouter

    init(servers: [ServerAddress], options: NATSConnection.Options) {
        self.options = options
        self.state = ConditionLock(ConnectionState(servers: servers))
        self.router = ResponseRouter()
    }

    // MARK: - Sending

    /// Appends `bytes` to the outbound buffer, after checking that a message of `payloadSize` bytes fits the
    /// server's maximum payload.
    ///
    /// While connected, it waits (up to the request timeout) for the writer to bring the buffer under the limit.
    ///
    /// - Throws: ``NATSError/connectionClosed(reason:)``, ``NATSError/payloadTooLarge(size:maximumPayload:)``,
    ///   ``NATSError/outboundBufferFull(size:limit:)`` while reconnecting, ``NATSError/timedOut(operation:timeout:)``
    ///   when the server does not take the bytes.
    func enqueue(_ bytes: [UInt8], payloadSize: Int? = nil) throws {
        let limit = options.outboundBufferLimit
        let deadline = ContinuousClock.now + options.requestTimeout
        let outcome: Result<Void, NATSError>? = state.wait(until: deadline) { state in
            if state.status == .closed { return .failure(.connectionClosed(reason: state.closeReason ?? "closed")) }
            if let payloadSize, let maximum = state.info?.maxPayload, payloadSize > maximum {
                return .failure(.payloadTooLarge(size: payloadSize, maximumPayload: maximum))
            }
            if state.outbound.count + bytes.count > limit && !state.outbound.isEmpty {
                if state.status == .reconnecting {
                    return .failure(.outboundBufferFull(size: state.outbound.count + bytes.count, limit: limit))
                }
                return nil
            }
            state.outbound += bytes
            return .success(())
        }
        guard let outcome else {
            throw NATSError.timedOut(operation: "sending \(bytes.count) bytes", timeout: options.requestTimeout)
        }
        try outcome.get()
        state.broadcast()
    }

    /// Publishes a message, with headers when `headers` is not `nil`.
    ///
    /// - Throws: What ``enqueue(_:payloadSize:)`` throws, and ``NATSError/invalidSubject(_:reason:)`` or
    ///   ``NATSError/invalidHeader(name:reason:)`` for what cannot be sent.
    func publish(subject: String, replySubject: String?, headers: NATSHeaders?, payload: [UInt8]) throws {
        try SubjectCheck.check(subject, allowsWildcards: false)
        if let replySubject { try SubjectCheck.check(replySubject, allowsWildcards: false) }
        let reply = replySubject.map { " " + $0 } ?? ""
        var bytes: [UInt8]
        let size: Int
        if let headers {
            let block = try headers.encoded()
            size = block.count + payload.count
            bytes = Array("HPUB \(subject)\(reply) \(block.count) \(size)\r\n".utf8)
            bytes.reserveCapacity(bytes.count + size + 2)
            bytes += block
        } else {
            size = payload.count
            bytes = Array("PUB \(subject)\(reply) \(size)\r\n".utf8)
            bytes.reserveCapacity(bytes.count + size + 2)
        }
        bytes += payload
        bytes += [13, 10]
        try enqueue(bytes, payloadSize: size)
    }

    // MARK: - Subscriptions

    /// Subscribes to `subject`, in `queueGroup` if given; messages go to `handler` on the reader thread when given,
    /// to the subscription's queue otherwise.
    ///
    /// - Throws: ``NATSError/invalidSubject(_:reason:)``, ``NATSError/connectionClosed(reason:)``.
    func subscribe(
        subject: String, queueGroup: String?, handler: (@Sendable (NATSMessage) -> Void)? = nil
    ) throws -> Subscription {
        try SubjectCheck.check(subject, allowsWildcards: true)
        if let queueGroup {
            if queueGroup.isEmpty || queueGroup.utf8.contains(where: { $0 <= 32 || $0 == 127 }) {
                throw NATSError.invalidArgument("the queue group '\(queueGroup)' is empty or holds white space")
            }
        }
        return try state.withLockBroadcasting { state throws(NATSError) in
            if state.status == .closed { throw .connectionClosed(reason: state.closeReason ?? "closed") }
            let sid = state.nextSID
            state.nextSID += 1
            let subscription = Subscription(
                subject: subject, queueGroup: queueGroup, sid: sid, core: self, handler: handler)
            state.subscriptions[sid] = subscription
            // While reconnecting, the reconnection subscribes everything in the table: nothing to queue.
            if state.status == .connected { state.outbound += Self.subscribeLine(subscription) }
            return subscription
        }
    }

    /// Ends a subscription: the server stops sending its messages.
    func unsubscribe(_ subscription: Subscription) {
        state.withLockBroadcasting { state in
            guard state.subscriptions.removeValue(forKey: subscription.sid) != nil else { return }
            if state.status == .connected { state.outbound += Array("UNSUB \(subscription.sid)\r\n".utf8) }
        }
        subscription.finish(with: nil)
    }

    static func subscribeLine(_ subscription: Subscription) -> [UInt8] {
        let queue = subscription.queueGroup.map { " " + $0 } ?? ""
        return Array("SUB \(subscription.subject)\(queue) \(subscription.sid)\r\n".utf8)
    }

    // MARK: - Requests and flush

    /// Sends a request and waits for the first reply.
    ///
    /// - Throws: ``NATSError/timedOut(operation:timeout:)``, ``NATSError/noResponders(subject:)``, and what
    ///   ``publish(subject:replySubject:headers:payload:)`` throws.
    func request(subject: String, headers: NATSHeaders?, payload: [UInt8], timeout: Duration) throws -> NATSMessage {
        let ticket = try router.register(on: self)
        do {
            try publish(subject: subject, replySubject: ticket.subject, headers: headers, payload: payload)
        } catch {
            router.cancel(ticket)
            throw error
        }
        let reply = try router.wait(for: ticket, until: .now + timeout, subject: subject, timeout: timeout)
        if reply.status == 503 { throw NATSError.noResponders(subject: subject) }
        return reply
    }

    /// Sends `PING` and waits for the `PONG`: everything sent before has reached the server and been processed.
    ///
    /// - Throws: ``NATSError/timedOut(operation:timeout:)``, ``NATSError/connectionLost(server:reason:)`` when the
    ///   connection broke before the `PONG`, ``NATSError/connectionClosed(reason:)``.
    func flush(timeout: Duration) throws {
        let id = try state.withLockBroadcasting { state throws(NATSError) -> UInt64 in
            if state.status == .closed { throw .connectionClosed(reason: state.closeReason ?? "closed") }
            let id = state.nextPongID
            state.nextPongID += 1
            state.pongs.append(.init(id: id, epoch: state.status == .connected ? state.epoch : nil))
            state.outbound += Array("PING\r\n".utf8)
            return id
        }
        let result = state.wait(until: .now + timeout) { state in state.pongResults.removeValue(forKey: id) }
        guard let result else {
            state.withLock { state in
                if state.pongs.contains(where: { $0.id == id }) { state.abandonedPongs.insert(id) }
                state.pongResults[id] = nil
            }
            throw NATSError.timedOut(operation: "flush (PING)", timeout: timeout)
        }
        try result.get()
    }

    // MARK: - Closing

    /// Closes the connection: sends what is queued (waiting up to a second), then ends the threads and wakes every
    /// waiter with ``NATSError/connectionClosed(reason:)``.
    func close(reason: String) {
        _ = state.wait(until: .now + .seconds(1)) { state in
            state.status != .connected || (state.outbound.isEmpty && !state.writerBusy) ? () : nil
        }
        let (subscriptions, reader, wasOpen) = state.withLockBroadcasting { state in
            // A connection that never completed its first handshake was never open.
            let wasOpen = state.status != .closed && state.epoch > 0
            if state.status != .closed {
                state.status = .closed
                state.closeReason = reason
                state.socket?.shutdown()
                state.attemptSocket?.shutdown()
                failPongs(in: &state, where: { _ in true }, with: .connectionClosed(reason: reason))
            }
            let subscriptions = Array(state.subscriptions.values)
            state.subscriptions = [:]
            return (subscriptions, state.readerThread, wasOpen)
        }
        router.close(reason: reason)
        for subscription in subscriptions { subscription.finish(with: .connectionClosed(reason: reason)) }
        if reader !== Thread.current {
            _ = state.wait(until: nil) { state in state.runningThreads == 0 ? () : nil }
        }
        if wasOpen { options.eventHandler?(.closed(reason: reason)) }
    }

    /// Fails the pending `PONG`s that `matches` selects, with `error`, and removes them.
    func failPongs(
        in state: inout ConnectionState, where matches: (ConnectionState.PendingPong) -> Bool, with error: NATSError
    ) {
        for pong in state.pongs where matches(pong) {
            guard let id = pong.id else { continue }
            if state.abandonedPongs.remove(id) == nil { state.pongResults[id] = .failure(error) }
        }
        state.pongs.removeAll(where: matches)
    }

    /// The reason the connection is closed, or `nil` while it is open.
    var closeReason: String? {
        state.withLock { $0.status == .closed ? ($0.closeReason ?? "closed") : nil }
    }
}
