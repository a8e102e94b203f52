import Foundation
import NATSTestSupport
import Testing

@testable import NATS

/// Publishing, subscribing and requests on one real server.
///
/// The tests are `async` and wait through the client's `async` calls, which block threads of the client's own rather
/// than those of the cooperative pool that every test of the process shares.
@Suite(.requiresNATSServer) struct CoreProtocolTests {
    @Test func aPublishedMessageReachesTheSubscriberWithoutHeaders() async throws {
        let server = try NATSServer(jetStream: false)
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let subscription = try connection.subscribe(to: "greetings.*")
        try connection.publish(subject: "greetings.en", payload: "hello".bytes)
        try connection.publish(subject: "other", payload: "not for us".bytes)
        try connection.publish(subject: "greetings.fr", replySubject: "answers", payload: "bonjour".bytes)
        let first = try #require(try await subscription.next(timeout: .seconds(30)))
        #expect(first == NATSMessage(subject: "greetings.en", payload: "hello".bytes))
        let second = try #require(try await subscription.next(timeout: .seconds(30)))
        #expect(second == NATSMessage(subject: "greetings.fr", replySubject: "answers", payload: "bonjour".bytes))
        #expect(try await subscription.next(timeout: .milliseconds(100)) == nil)
    }

    @Test func headersArriveAsSentAndAnEmptyPayloadToo() async throws {
        let server = try NATSServer(jetStream: false)
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let subscription = try connection.subscribe(to: "with.headers")
        var headers: NATSHeaders = ["Trace-Id": "abc", "X": "1"]
        headers.append("X", value: "2 with spaces")
        try connection.publish(subject: "with.headers", headers: headers, payload: "body".bytes)
        try connection.publish(subject: "with.headers", headers: ["Only": "headers"], payload: [])
        let message = try #require(try await subscription.next(timeout: .seconds(30)))
        #expect(message.payload == "body".bytes)
        #expect(message.status == nil)
        #expect(message.headers?.fields == headers.fields)
        #expect(message.headers?.values(for: "x") == ["1", "2 with spaces"])
        let empty = try #require(try await subscription.next(timeout: .seconds(30)))
        #expect(empty.payload.isEmpty)
        #expect(empty.headers?["only"] == "headers")
    }

    @Test func aRequestGetsItsReplyAndConcurrentRequestsGetTheirOwn() async throws {
        let server = try NATSServer(jetStream: false)
        let responder = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { responder.close() }
        let service = try responder.subscribe(to: "double", queueGroup: "workers")
        defer { service.unsubscribe() }
        try await responder.flush()
        Thread {
            while let request = try? service.next(timeout: .seconds(60)), let reply = request.replySubject {
                let value = Int(request.string) ?? 0
                try? responder.publish(subject: reply, headers: ["Served": "yes"], payload: "\(value * 2)".bytes)
            }
        }.start()
        let client = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { client.close() }
        let reply = try await client.request(subject: "double", payload: "21".bytes, timeout: .seconds(30))
        #expect(reply.string == "42")
        #expect(reply.headers?["Served"] == "yes")
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<20 {
                group.addTask {
                    // One responder serves the twenty in turn: on a loaded machine (the address sanitizer's run of
                    // the whole suite) the last waits for the others, so each may take longer than the default.
                    (
                        index,
                        try await client.request(subject: "double", payload: "\(index)".bytes, timeout: .seconds(30))
                            .string
                    )
                }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers == Dictionary(uniqueKeysWithValues: (0..<20).map { ($0, "\($0 * 2)") }))
    }

    @Test func theBlockingAPIWorksFromAThreadOfItsOwn() async throws {
        let server = try NATSServer(jetStream: false)
        let (reply, pending) = try await onThread {
            let connection = try NATSConnection(servers: [server.url], options: testOptions())
            defer { connection.close() }
            let subscription = try connection.subscribe(to: "echo")
            try connection.flush()
            let serving = Thread {
                if let request = try? subscription.next(timeout: .seconds(30)), let reply = request.replySubject {
                    try? connection.publish(subject: reply, payload: request.payload)
                }
            }
            serving.start()
            let reply = try connection.request(subject: "echo", payload: "ping".bytes, timeout: .seconds(30))
            return (reply.string, subscription.pendingCount)
        }
        #expect(reply == "ping")
        #expect(pending == 0)
    }

    @Test func aRequestNobodyListensToFailsWithNoResponders() async throws {
        let server = try NATSServer(jetStream: false)
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let (error, elapsed) = try await onThread { () -> (NATSError?, Duration) in
            let started = ContinuousClock.now
            do {
                _ = try connection.request(subject: "nobody.home", payload: [], timeout: .seconds(5))
                return (nil, ContinuousClock.now - started)
            } catch let error as NATSError {
                return (error, ContinuousClock.now - started)
            }
        }
        #expect(error == .noResponders(subject: "nobody.home"))
        // The server answers 503 at once: the request does not wait for its timeout.
        #expect(elapsed < .seconds(4))
    }

    @Test func aRequestWhoseResponderIsSilentTimesOut() async throws {
        let server = try NATSServer(jetStream: false)
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let silent = try connection.subscribe(to: "silent")
        await #expect(throws: NATSError.timedOut(operation: "the request on 'silent'", timeout: .milliseconds(200))) {
            try await connection.request(subject: "silent", payload: [], timeout: .milliseconds(200))
        }
        #expect(silent.pendingCount == 1)
    }

    @Test func aMessageOverTheMaximumPayloadIsRefusedNamingBothSizes() async throws {
        let server = try NATSServer(jetStream: false, configuration: "max_payload: 1024\n")
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        #expect(connection.maximumPayload == 1024)
        let subscription = try connection.subscribe(to: "big")
        try connection.publish(subject: "big", payload: [UInt8](repeating: 7, count: 1024))
        let error = #expect(throws: NATSError.self) {
            try connection.publish(subject: "big", payload: [UInt8](repeating: 7, count: 1025))
        }
        #expect(error == .payloadTooLarge(size: 1025, maximumPayload: 1024))
        #expect(error?.description.contains("1025") == true && error?.description.contains("1024") == true)
        // Headers count toward the maximum: "NATS/1.0\r\nk: v\r\n\r\n" is 18 bytes.
        #expect(throws: NATSError.payloadTooLarge(size: 1028, maximumPayload: 1024)) {
            try connection.publish(subject: "big", headers: ["k": "v"], payload: [UInt8](repeating: 7, count: 1010))
        }
        // The connection is still up: the message at the limit arrived, nothing after it.
        let message = try #require(try await subscription.next(timeout: .seconds(30)))
        #expect(message.payload.count == 1024)
        try await connection.flush()
        #expect(try await subscription.next(timeout: .milliseconds(100)) == nil)
        #expect(connection.status == .connected)
    }

    @Test func invalidSubjectsAndHeadersAreRefusedBeforeSending() async throws {
        let server = try NATSServer(jetStream: false)
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        #expect(throws: NATSError.self) { try connection.publish(subject: "has space", payload: []) }
        #expect(throws: NATSError.self) { try connection.publish(subject: "wild.*", payload: []) }
        #expect(throws: NATSError.self) { try connection.subscribe(to: "a..b") }
        #expect(throws: NATSError.self) { try connection.publish(subject: "ok", headers: ["a:b": "c"], payload: []) }
        try await connection.flush()
        #expect(connection.lastServerError == nil)
    }

    @Test func aPermissionsViolationIsReportedAndTheConnectionStaysUp() async throws {
        let configuration = """
            authorization {
              users = [
                { user: "app", password: "secret", permissions: { publish: { deny: ["forbidden.>"] } } }
              ]
            }
            """
        let server = try NATSServer(jetStream: false, configuration: configuration)
        let events = EventLog()
        var options = testOptions(events: events)
        options.user = "app"
        options.password = "secret"
        let connection = try await NATSConnection.connect(servers: [server.url], options: options)
        defer { connection.close() }
        let subscription = try connection.subscribe(to: "allowed")
        try connection.publish(subject: "forbidden.topic", payload: "x".bytes)
        #expect(
            await events.wait {
                if case .serverError(let message) = $0 { message.contains("Permissions Violation") } else { false }
            })
        #expect(connection.lastServerError?.contains("forbidden.topic") == true)
        try connection.publish(subject: "allowed", payload: "y".bytes)
        #expect(try await subscription.next(timeout: .seconds(30))?.string == "y")
        #expect(connection.status == .connected)
        #expect(connection.reconnections == 0)
    }

    @Test func aRefusedPasswordFailsTheConnectionWithTheServersError() async throws {
        let server = try NATSServer(jetStream: false, configuration: "authorization { user: app, password: secret }\n")
        var options = testOptions()
        options.connectDeadline = .milliseconds(300)
        let error = await #expect(throws: NATSError.self) {
            try await NATSConnection.connect(servers: ["nats://app:wrong@127.0.0.1:\(server.port)"], options: options)
        }
        guard case .noServerAvailable(let servers, _, let failures) = error else {
            Issue.record("expected noServerAvailable, got \(String(describing: error))")
            return
        }
        #expect(servers == [server.url])
        #expect(failures.count == 1)
        #expect(failures.first?.contains("Authorization Violation") == true)
        // The right password, in the address, works.
        let connection = try await NATSConnection.connect(
            servers: ["nats://app:secret@127.0.0.1:\(server.port)"], options: testOptions())
        #expect(connection.status == .connected)
        connection.close()
    }

    @Test func noServerAnsweringIsATypedErrorAfterTheDeadline() async throws {
        let ports = try [NATSServer.freePort(), NATSServer.freePort()]
        var options = testOptions()
        options.connectDeadline = .milliseconds(400)
        let (error, elapsed) = try await onThread { [options] () -> (NATSError?, Duration) in
            let started = ContinuousClock.now
            do {
                _ = try NATSConnection(servers: ports.map { "127.0.0.1:\($0)" }, options: options)
                return (nil, ContinuousClock.now - started)
            } catch let error as NATSError {
                return (error, ContinuousClock.now - started)
            }
        }
        guard case .noServerAvailable(let servers, let timeout, let failures) = error else {
            Issue.record("expected noServerAvailable, got \(String(describing: error))")
            return
        }
        #expect(servers == ports.map { "nats://127.0.0.1:\($0)" })
        #expect(timeout == .milliseconds(400))
        #expect(failures.count == 2 && failures.allSatisfy { $0.contains("refused") })
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3))
        #expect(error?.description.contains("No NATS server answered within") == true)
    }

    @Test func unsubscribingStopsDeliveryAndClosingEndsWaiters() async throws {
        let server = try NATSServer(jetStream: false)
        let events = EventLog()
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions(events: events))
        let kept = try connection.subscribe(to: "topic")
        let dropped = try connection.subscribe(to: "topic")
        dropped.unsubscribe()
        try connection.publish(subject: "topic", payload: "1".bytes)
        #expect(try await kept.next(timeout: .seconds(30))?.string == "1")
        #expect(try await dropped.next(timeout: .milliseconds(50)) == nil)
        connection.close()
        #expect(connection.status == .closed)
        await #expect(throws: NATSError.connectionClosed(reason: "closed by close()")) {
            try await kept.next(timeout: .seconds(1))
        }
        #expect(throws: NATSError.connectionClosed(reason: "closed by close()")) {
            try connection.publish(subject: "topic", payload: [])
        }
        #expect(events.all == [.closed(reason: "closed by close()")])
    }
}
