import Foundation
import NATSTestSupport
import Testing

@testable import NATS

/// PING and PONG both ways, and a server that stops answering.
@Suite(.requiresNATSServer) struct HeartbeatTests {
    @Test func heartbeatsBothWaysKeepIdleConnectionsUp() async throws {
        // The server pings every 100 ms and drops a client that misses 4 PONGs. It skips its PING when the client sent
        // something within the interval, so one client pings rarely (the server's PINGs reach it) and the other every
        // 100 ms (its own PINGs keep it alive). Four, not fewer, so that a machine busy with other tests does not
        // delay an answer past the limit.
        let server = try NATSServer(jetStream: false, configuration: "ping_interval: \"100ms\"\nping_max: 4\n")
        let quietEvents = EventLog()
        var quietOptions = testOptions(events: quietEvents)
        quietOptions.pingInterval = .seconds(30)
        let quiet = try await NATSConnection.connect(servers: [server.url], options: quietOptions)
        defer { quiet.close() }
        let pingingEvents = EventLog()
        var pingingOptions = testOptions(events: pingingEvents)
        pingingOptions.pingInterval = .milliseconds(100)
        pingingOptions.maximumPingsOutstanding = 4
        let pinging = try await NATSConnection.connect(servers: [server.url], options: pingingOptions)
        defer { pinging.close() }
        try await Task.sleep(for: .milliseconds(1200))
        for (connection, events) in [(quiet, quietEvents), (pinging, pingingEvents)] {
            #expect(connection.status == .connected)
            #expect(connection.reconnections == 0)
            #expect(events.all.isEmpty, "events: \(events.all)")
            try await connection.flush(timeout: .seconds(2))
        }
    }

    @Test(arguments: 0..<2)
    func aFrozenServerIsDeclaredDeadAndTheConnectionComesBackWhenItThaws(round: Int) async throws {
        let server = try NATSServer(jetStream: false)
        let events = EventLog()
        var options = testOptions(events: events)
        options.pingInterval = .milliseconds(100)
        options.maximumPingsOutstanding = 2
        options.connectTimeout = .milliseconds(300)
        let connection = try await NATSConnection.connect(servers: [server.url], options: options)
        defer { connection.close() }
        let subscription = try connection.subscribe(to: "after.thaw")
        try await connection.flush()
        let frozen = ContinuousClock.now
        server.pause()
        let isDeclaredDead: (NATSConnection.Event) -> Bool = {
            if case .disconnected(_, let reason) = $0 { reason.contains("PING") } else { false }
        }
        #expect(await events.wait(timeout: .seconds(5), for: isDeclaredDead))
        let detection = try #require(events.time(of: isDeclaredDead)) - frozen
        // Two PINGs outstanding and a third interval: about 300 ms, never before 200 ms.
        #expect(detection >= .milliseconds(200) && detection < .seconds(3), "detected after \(detection)")
        #expect(connection.status == .reconnecting)
        server.resume()
        #expect(await events.wait(timeout: .seconds(10)) { $0 == .reconnected(server: server.url) })
        try connection.publish(subject: "after.thaw", payload: "back".bytes)
        #expect(try await subscription.next(timeout: .seconds(30))?.string == "back")
    }

    @Test func aFlushWaitingOnAFrozenServerFailsWhenTheConnectionIsDeclaredDead() async throws {
        let server = try NATSServer(jetStream: false)
        var options = testOptions()
        options.pingInterval = .milliseconds(100)
        options.maximumPingsOutstanding = 1
        let connection = try await NATSConnection.connect(servers: [server.url], options: options)
        defer { connection.close() }
        server.pause()
        // The heartbeat declares the server dead after about 200 ms. The flush's own timeout is far beyond that: at
        // 5 seconds it once expired first, in CI's address-sanitizer run of the whole suite on a loaded machine.
        let error = await #expect(throws: NATSError.self) { try await connection.flush(timeout: .seconds(120)) }
        guard case .connectionLost(let lost, let reason) = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
        #expect(lost == server.url)
        #expect(reason.contains("PING"))
    }
}
