import Foundation
import NATSTestSupport
import Testing

@testable import NATS

/// Reconnection to the next server of the list, subscriptions renewed, and giving up.
@Suite(.requiresNATSServer) struct ReconnectTests {
    @Test(arguments: 0..<3)
    func aKilledServerIsReplacedByTheNextAndSubscriptionsAreRenewed(round: Int) async throws {
        let first = try NATSServer(jetStream: false)
        let second = try NATSServer(jetStream: false)
        let events = EventLog()
        let connection = try await NATSConnection.connect(
            servers: [first.url, second.url], options: testOptions(events: events))
        defer { connection.close() }
        #expect(connection.connectedServer == first.url)
        let subscription = try connection.subscribe(to: "orders.>")
        let queued = try connection.subscribe(to: "jobs", queueGroup: "workers")
        try await connection.flush()
        first.stop()
        #expect(await events.wait { if case .disconnected(let server, _) = $0 { server == first.url } else { false } })
        // Published while reconnecting (or just after): sent once the subscriptions are renewed.
        try connection.publish(subject: "orders.during", payload: "queued".bytes)
        #expect(await events.wait { $0 == .reconnected(server: second.url) })
        #expect(connection.connectedServer == second.url)
        #expect(connection.reconnections == 1)
        #expect(try await subscription.next(timeout: .seconds(30))?.string == "queued")
        // Another client of the second server reaches the renewed subscriptions.
        let publisher = try await NATSConnection.connect(servers: [second.url], options: testOptions())
        defer { publisher.close() }
        try publisher.publish(subject: "orders.after", payload: "renewed".bytes)
        try publisher.publish(subject: "jobs", payload: "job".bytes)
        #expect(try await subscription.next(timeout: .seconds(30))?.subject == "orders.after")
        #expect(try await queued.next(timeout: .seconds(30))?.string == "job")
    }

    @Test func requestsWorkAfterAReconnection() async throws {
        let first = try NATSServer(jetStream: false)
        let second = try NATSServer(jetStream: false)
        let events = EventLog()
        let connection = try await NATSConnection.connect(
            servers: [first.url, second.url], options: testOptions(events: events))
        defer { connection.close() }
        let responder = try await NATSConnection.connect(servers: [second.url], options: testOptions())
        defer { responder.close() }
        let service = try responder.subscribe(to: "echo")
        defer { service.unsubscribe() }
        try await responder.flush()
        Thread {
            while let request = try? service.next(timeout: .seconds(10)), let reply = request.replySubject {
                try? responder.publish(subject: reply, payload: request.payload)
            }
        }.start()
        // The shared inbox exists before the reconnection: a request on the first server finds nobody.
        await #expect(throws: NATSError.noResponders(subject: "echo")) {
            try await connection.request(subject: "echo", payload: [], timeout: .seconds(2))
        }
        first.stop()
        #expect(await events.wait { $0 == .reconnected(server: second.url) })
        let reply = try await connection.request(subject: "echo", payload: "again".bytes, timeout: .seconds(30))
        #expect(reply.string == "again")
    }

    @Test func reconnectionGivesUpAtItsDeadlineAndClosesTheConnection() async throws {
        let server = try NATSServer(jetStream: false)
        let events = EventLog()
        var options = testOptions(events: events)
        options.reconnectDeadline = .milliseconds(300)
        let connection = try await NATSConnection.connect(servers: [server.url], options: options)
        defer { connection.close() }
        let subscription = try connection.subscribe(to: "anything")
        server.stop()
        #expect(await events.wait { if case .closed = $0 { true } else { false } })
        #expect(connection.status == .closed)
        guard case .closed(let reason) = events.all.last else {
            Issue.record("the last event is not closed: \(events.all)")
            return
        }
        #expect(reason.contains("reconnect deadline") && reason.contains("refused"))
        await #expect(throws: NATSError.connectionClosed(reason: reason)) {
            try await subscription.next(timeout: .seconds(1))
        }
        await #expect(throws: NATSError.connectionClosed(reason: reason)) { try await connection.flush() }
    }

    @Test func withReconnectionOffALostConnectionCloses() async throws {
        let server = try NATSServer(jetStream: false)
        let events = EventLog()
        var options = testOptions(events: events)
        options.reconnects = false
        let connection = try await NATSConnection.connect(servers: [server.url], options: options)
        defer { connection.close() }
        server.stop()
        #expect(
            await events.wait {
                if case .closed(let reason) = $0 { reason.contains("reconnection is off") } else { false }
            })
        #expect(connection.status == .closed)
    }
}
