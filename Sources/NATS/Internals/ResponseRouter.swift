/// The connection's replies to requests: one wildcard subscription on a random inbox, `_INBOX.<token>.*`, created
/// with the first request, and a slot per request waiting for the reply that names it.
///
/// One subscription serves every request, so a request costs one `PUB`, and many can be in flight (pipelined
/// JetStream publishes) without a `SUB` each.
final class ResponseRouter: Sendable {
    /// A request's place in the router: its token and the reply subject that carries it.
    struct Ticket: Sendable {
        let token: UInt64
        let subject: String
    }

    private enum Slot {
        case waiting
        case arrived(NATSMessage)
    }

    private struct RouterState {
        var prefix: String?
        var subscription: Subscription?
        var slots: [UInt64: Slot] = [:]
        var nextToken: UInt64 = 1
        var closeReason: String?
    }

    private let state = ConditionLock(RouterState())

    /// Reserves a slot for a reply, subscribing to the inbox first if this is the first request.
    ///
    /// - Throws: ``NATSError/connectionClosed(reason:)``.
    func register(on core: ConnectionCore) throws -> Ticket {
        try state.withLock { state throws(NATSError) -> Ticket in
            if let reason = state.closeReason { throw .connectionClosed(reason: reason) }
            let prefix: String
            if let existing = state.prefix {
                prefix = existing
            } else {
                prefix = Nuid.inbox() + "."
                do {
                    state.subscription = try core.subscribe(subject: prefix + "*", queueGroup: nil) { [weak self] in
                        self?.deliver($0)
                    }
                } catch let error as NATSError {
                    throw error
                } catch {
                    throw .connectionClosed(reason: "\(error)")
                }
                state.prefix = prefix
            }
            let token = state.nextToken
            state.nextToken += 1
            state.slots[token] = .waiting
            return Ticket(token: token, subject: prefix + String(token, radix: 36))
        }
    }

    /// Puts a reply in its slot, if its request still waits.
    func deliver(_ message: NATSMessage) {
        guard let dot = message.subject.lastIndex(of: "."),
            let token = UInt64(message.subject[message.subject.index(after: dot)...], radix: 36)
        else { return }
        state.withLockBroadcasting { state in
            if case .waiting = state.slots[token] { state.slots[token] = .arrived(message) }
        }
    }

    /// Waits for the reply of `ticket` until `deadline`, and frees its slot.
    ///
    /// - Throws: ``NATSError/timedOut(operation:timeout:)`` naming `subject` and `timeout`,
    ///   ``NATSError/connectionClosed(reason:)``.
    func wait(
        for ticket: Ticket, until deadline: ContinuousClock.Instant, subject: String, timeout: Duration
    ) throws
        -> NATSMessage
    {
        let outcome: Result<NATSMessage, NATSError>? = state.wait(until: deadline) { state in
            if case .arrived(let message) = state.slots[ticket.token] {
                state.slots[ticket.token] = nil
                return .success(message)
            }
            if let reason = state.closeReason {
                state.slots[ticket.token] = nil
                return .failure(.connectionClosed(reason: reason))
            }
            return nil
        }
        guard let outcome else {
            cancel(ticket)
            throw NATSError.timedOut(operation: "the request on '\(subject)'", timeout: timeout)
        }
        return try outcome.get()
    }

    /// Frees the slot of a request that no longer waits; a late reply is dropped.
    func cancel(_ ticket: Ticket) {
        state.withLock { state in state.slots[ticket.token] = nil }
    }

    /// Wakes every waiting request with ``NATSError/connectionClosed(reason:)``.
    func close(reason: String) {
        state.withLockBroadcasting { state in
            if state.closeReason == nil { state.closeReason = reason }
            state.subscription = nil
        }
    }
}
