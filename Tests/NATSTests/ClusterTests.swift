import Foundation
import NATSTestSupport
import Testing

@testable import NATS

/// A three-server JetStream cluster whose stream leader is killed while a client publishes.
@Suite(.requiresNATSServer) struct ClusterTests {
    /// Runs `operation` until it succeeds, retrying what a cluster electing a leader throws (timeouts, no responders,
    /// a lost connection, JetStream's 5xx errors) until `deadline`.
    static func retrying<T>(
        until deadline: ContinuousClock.Instant, _ operation: () async throws -> T
    ) async throws -> T {
        while true {
            do {
                return try await operation()
            } catch let error as NATSError {
                switch error {
                case .timedOut, .noResponders, .connectionLost: if ContinuousClock.now > deadline { throw error }
                default: throw error
                }
            } catch let error as JetStreamError {
                if error.code < 500 || ContinuousClock.now > deadline { throw error }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func killingTheStreamLeaderLosesNoAcknowledgedMessageAndPublishingResumes() async throws {
        let cluster = try NATSCluster()
        let admin = try await NATSConnection.connect(servers: cluster.urls, options: testOptions())
        defer { admin.close() }
        // Generous limits here too: with the whole suite running beside it on two cores, a new cluster has taken more
        // than 20 s to elect its meta leader and answer the creation (2 s requests); a healthy one answers in about 1 s.
        let adminStream = admin.jetStream(timeout: .seconds(5))
        let configuration = StreamConfiguration(
            name: "REPLICATED", subjects: ["replicated.>"], replicas: 3, duplicateWindow: .seconds(120))
        // The cluster elects its meta leader and learns its peers first.
        let created = try await Self.retrying(until: .now + .seconds(60)) {
            try await adminStream.createStream(configuration)
        }
        #expect(created.configuration.replicas == 3)
        let leaderName = try #require(
            try await Self.retrying(until: .now + .seconds(30)) { () -> String in
                let info = try await adminStream.streamInfo("REPLICATED")
                guard let leader = info.cluster?.leader, info.cluster?.replicas?.count == 2 else {
                    throw NATSError.timedOut(operation: "waiting for the stream's leader", timeout: .zero)
                }
                return leader
            })
        let leader = try #require(cluster.server(named: leaderName))

        // The publisher knows the leader only: it learns the other servers from the leader's INFO.
        let events = EventLog()
        let publisher = try await NATSConnection.connect(servers: [leader.url], options: testOptions(events: events))
        defer { publisher.close() }
        #expect(await eventually { Set(publisher.knownServers) == Set(cluster.urls) }, "\(publisher.knownServers)")
        let jetStream = publisher.jetStream(timeout: .seconds(1))

        let before = 300
        let pipelined = try await onThread {
            let pipeline = try jetStream.makePipeline(maximumInFlight: 64)
            for index in 0..<before {
                try pipeline.publish(
                    subject: "replicated.\(index % 3)", payload: Array("m \(index)".utf8),
                    options: PublishOptions(messageID: "m-\(index)"))
            }
            return try pipeline.finish()
        }
        #expect(pipelined.map(\.sequence) == (1...UInt64(before)).map { $0 })

        // After the kill, on a thread of its own (the blocking API, timed without the cooperative pool's delays): each
        // publish is retried with its message ID until acknowledged.
        let after = 100
        let (acknowledgedAfter, resumed) = try await onThread { () -> ([PublishAck], Duration) in
            let killed = ContinuousClock.now
            leader.stop()
            var acks: [PublishAck] = []
            var resumed: Duration = .zero
            let deadline = ContinuousClock.now + .seconds(30)
            for index in before..<(before + after) {
                while true {
                    do {
                        acks.append(
                            try jetStream.publish(
                                subject: "replicated.\(index % 3)", payload: Array("m \(index)".utf8),
                                options: PublishOptions(messageID: "m-\(index)")))
                        break
                    } catch let error as NATSError {
                        switch error {
                        case .timedOut, .noResponders, .connectionLost:
                            if ContinuousClock.now > deadline { throw error }
                        default: throw error
                        }
                    } catch let error as JetStreamError {
                        if error.code < 500 || ContinuousClock.now > deadline { throw error }
                    }
                    usleep(50_000)
                }
                if acks.count == 1 { resumed = ContinuousClock.now - killed }
            }
            return (acks, resumed)
        }
        let acknowledged = pipelined + acknowledgedAfter
        #expect(publisher.connectedServer != leader.url)
        #expect(publisher.reconnections >= 1)
        #expect(await events.wait { if case .disconnected(let server, _) = $0 { server == leader.url } else { false } })

        // Every acknowledged message is in the stream, once, in the order of the publishes.
        let sequences = acknowledged.map(\.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == before + after)
        // Generous limits: under the address sanitizer's run of the whole suite the survivors answer their API slowly
        // after the election, and a retry only waits when an answer does not come.
        let survivorStream = admin.jetStream(timeout: .seconds(5))
        let info = try await Self.retrying(until: .now + .seconds(60)) {
            try await survivorStream.streamInfo("REPLICATED")
        }
        #expect(info.state.messages == UInt64(before + after))
        #expect(info.cluster?.leader != leaderName)
        let reader = try await Self.retrying(until: .now + .seconds(60)) {
            try await survivorStream.createConsumer(
                stream: "REPLICATED", configuration: ConsumerConfiguration(ackPolicy: .none))
        }
        var stored: [String] = []
        let consumer = survivorStream.pullConsumer(stream: "REPLICATED", consumer: reader.name)
        while stored.count < before + after {
            let batch = try await consumer.fetch(batch: 256, expires: .seconds(2))
            if batch.isEmpty { break }
            stored += batch.map { $0.headers?[NATSHeaders.Name.messageID] ?? "?" }
        }
        #expect(stored == (0..<(before + after)).map { "m-\($0)" })
        // Acknowledgements resume once the survivors elect a new leader (about 4 s on a laptop).
        #expect(resumed < .seconds(25))
    }
}
