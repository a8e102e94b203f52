import Foundation
import NATSTestSupport
import Testing

@testable import NATS

/// Durable and ephemeral pull consumers: batches, acknowledgements, redelivery, starting sequences.
@Suite(.requiresNATSServer) struct PullConsumerTests {
    /// A server, a connection and a stream `ENTRIES` holding `count` messages `entry 1`…, for `body`.
    static func withStream<R>(messages count: Int, _ body: (JetStream) async throws -> R) async throws -> R {
        let server = try NATSServer()
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let jetStream = connection.jetStream()
        _ = try await jetStream.createStream(StreamConfiguration(name: "ENTRIES", subjects: ["entries.>"]))
        for index in 1...max(count, 1) where count > 0 {
            _ = try await jetStream.publish(
                subject: "entries.\(index)", payload: Array("entry \(index)".utf8),
                options: PublishOptions(messageID: "id-\(index)"))
        }
        return try await body(jetStream)
    }

    @Test func aDurableConsumerDeliversBatchesInOrderAndRemembersAcknowledgements() async throws {
        try await Self.withStream(messages: 10) { jetStream in
            let info = try await jetStream.createConsumer(
                stream: "ENTRIES", configuration: ConsumerConfiguration(durableName: "replica"))
            #expect(info.name == "replica")
            #expect(info.stream == "ENTRIES")
            #expect(info.pendingCount == 10)
            #expect(info.configuration.durableName == "replica")
            #expect(info.configuration.ackPolicy == .explicit)
            let consumer = jetStream.pullConsumer(stream: "ENTRIES", consumer: "replica")
            let first = try await consumer.fetch(batch: 4, expires: .seconds(2))
            #expect(first.map(\.metadata.streamSequence) == [1, 2, 3, 4])
            #expect(first.map(\.metadata.consumerSequence) == [1, 2, 3, 4])
            #expect(first.map(\.payload) == (1...4).map { Array("entry \($0)".utf8) })
            #expect(first.map(\.subject) == (1...4).map { "entries.\($0)" })
            #expect(first.allSatisfy { $0.metadata.stream == "ENTRIES" && $0.metadata.consumer == "replica" })
            #expect(first.allSatisfy { $0.metadata.deliveryCount == 1 })
            #expect(first.map(\.metadata.pending) == [9, 8, 7, 6])
            #expect(first.first?.headers?[NATSHeaders.Name.messageID] == "id-1")
            let age = Date().timeIntervalSince(try #require(first.first).metadata.timestamp)
            #expect(age >= 0 && age < 60)
            for message in first.dropLast() { try message.ack() }
            try await #require(first.last).ackSync()
            let after = try await consumer.info()
            #expect(after.ackFloor.streamSequence == 4)
            #expect(after.delivered.streamSequence == 4)
            #expect(after.ackPendingCount == 0)
            #expect(after.pendingCount == 6)

            // The rest: a batch larger than what is left returns what is there when the request expires.
            let rest = try await consumer.fetch(batch: 100, expires: .milliseconds(300))
            #expect(rest.map(\.metadata.streamSequence) == Array(5...10))
            for message in rest { try message.ack() }
            #expect(try await consumer.fetch(batch: 5, noWait: true).isEmpty)

            try await jetStream.deleteConsumer(stream: "ENTRIES", consumer: "replica")
            await #expect(throws: JetStreamError.consumerNotFound) { try await consumer.info() }
        }
    }

    @Test func aFetchWaitsForMessagesPublishedWhileItIsOpen() async throws {
        try await Self.withStream(messages: 0) { jetStream in
            _ = try await jetStream.createConsumer(
                stream: "ENTRIES", configuration: ConsumerConfiguration(durableName: "waiting"))
            let consumer = jetStream.pullConsumer(stream: "ENTRIES", consumer: "waiting")
            let (messages, waited) = try await onThread {
                let started = ContinuousClock.now
                Thread {
                    usleep(100_000)
                    _ = try? jetStream.publish(subject: "entries.late", payload: "late 1".bytes)
                    _ = try? jetStream.publish(subject: "entries.late", payload: "late 2".bytes)
                }.start()
                let messages = try consumer.fetch(batch: 2, expires: .seconds(5))
                return (messages, ContinuousClock.now - started)
            }
            #expect(messages.map(\.message.string) == ["late 1", "late 2"])
            // It returned with the full batch, not at expiry.
            #expect(waited < .seconds(4))
        }
    }

    @Test func anEmptyFetchEndsAtExpiryOrAtOnceWithNoWaitAndHeartbeatsDoNotCount() async throws {
        try await Self.withStream(messages: 0) { jetStream in
            _ = try await jetStream.createConsumer(
                stream: "ENTRIES", configuration: ConsumerConfiguration(durableName: "empty"))
            let consumer = jetStream.pullConsumer(stream: "ENTRIES", consumer: "empty")
            let (noWaitCount, noWaitTime, expiryCount, expiryTime) = try await onThread {
                var started = ContinuousClock.now
                let noWait = try consumer.fetch(batch: 10, noWait: true)
                let noWaitTime = ContinuousClock.now - started
                started = ContinuousClock.now
                let expiry = try consumer.fetch(batch: 10, expires: .milliseconds(300))
                return (noWait.count, noWaitTime, expiry.count, ContinuousClock.now - started)
            }
            #expect(noWaitCount == 0 && noWaitTime < .seconds(2))
            #expect(expiryCount == 0)
            #expect(expiryTime >= .milliseconds(250) && expiryTime < .seconds(3))
            // Idle heartbeats (status 100) arrive every 400 ms, four of them before expiry, and are not messages. The
            // interval leaves the client 800 ms of silence before it gives up: at 100 ms, 200 ms of silence once
            // passed in CI's address-sanitizer run of the whole suite on a loaded machine.
            #expect(
                try await consumer.fetch(batch: 10, expires: .seconds(2), heartbeat: .milliseconds(400)).isEmpty)
        }
    }

    @Test(arguments: 0..<2)
    func anUnacknowledgedMessageIsDeliveredAgainAfterTheAckWait(round: Int) async throws {
        try await Self.withStream(messages: 2) { jetStream in
            _ = try await jetStream.createConsumer(
                stream: "ENTRIES",
                configuration: ConsumerConfiguration(durableName: "forgetful", ackWait: .milliseconds(300)))
            let consumer = jetStream.pullConsumer(stream: "ENTRIES", consumer: "forgetful")
            let first = try await consumer.fetch(batch: 2, expires: .seconds(2))
            #expect(first.map(\.metadata.streamSequence) == [1, 2])
            try first[1].ack()
            // Message 1 is not acknowledged: it comes back once the ack wait passes, delivered a second time.
            let again = try await consumer.fetch(batch: 1, expires: .seconds(3))
            #expect(again.map(\.metadata.streamSequence) == [1])
            #expect(again.first?.metadata.deliveryCount == 2)
            #expect(again.first?.metadata.consumerSequence == 3)
            try await #require(again.first).ackSync()
            #expect(try await consumer.fetch(batch: 1, expires: .milliseconds(500)).isEmpty)
            #expect(try await consumer.info().redeliveredCount == 0)
        }
    }

    @Test func aNakRedeliversAtOnceAndATermNeverAgain() async throws {
        try await Self.withStream(messages: 2) { jetStream in
            _ = try await jetStream.createConsumer(
                stream: "ENTRIES", configuration: ConsumerConfiguration(durableName: "picky", ackWait: .seconds(30)))
            let consumer = jetStream.pullConsumer(stream: "ENTRIES", consumer: "picky")
            let first = try await consumer.fetch(batch: 2, expires: .seconds(2))
            try first[0].nak()
            try first[1].term()
            let again = try await consumer.fetch(batch: 2, expires: .milliseconds(500))
            #expect(again.map(\.metadata.streamSequence) == [1])
            #expect(again.first?.metadata.deliveryCount == 2)
            try again[0].inProgress()
            try await again[0].ackSync()
            #expect(try await consumer.fetch(batch: 2, expires: .milliseconds(300)).isEmpty)
        }
    }

    @Test func anEphemeralConsumerStartsAtTheSequenceAReplicaRecorded() async throws {
        try await Self.withStream(messages: 10) { jetStream in
            let lastApplied: UInt64 = 6
            let info = try await jetStream.createConsumer(
                stream: "ENTRIES",
                configuration: ConsumerConfiguration(
                    deliverPolicy: .byStartSequence(lastApplied + 1), ackPolicy: .none,
                    // As a replica sets it: long enough that a test slowed down by a sanitizer on a loaded machine
                    // does not see the server delete its consumer between two pulls (5 seconds did, under ASan).
                    inactiveThreshold: .seconds(60)))
            #expect(info.configuration.deliverPolicy == .byStartSequence(7))
            #expect(info.configuration.inactiveThreshold == .seconds(60))
            #expect(info.configuration.durableName == nil)
            #expect(info.pendingCount == 4)
            let consumer = jetStream.pullConsumer(stream: "ENTRIES", consumer: info.name)
            let messages = try await consumer.fetch(batch: 10, expires: .milliseconds(300))
            #expect(messages.map(\.metadata.streamSequence) == [7, 8, 9, 10])
            #expect(messages.map(\.headers?[NATSHeaders.Name.messageID]) == ["id-7", "id-8", "id-9", "id-10"])
            // With no acknowledgements expected, nothing comes back.
            #expect(try await consumer.fetch(batch: 10, expires: .milliseconds(300)).isEmpty)
        }
    }

    @Test func aFilteredConsumerSeesItsSubjectOnly() async throws {
        try await Self.withStream(messages: 5) { jetStream in
            let info = try await jetStream.createConsumer(
                stream: "ENTRIES",
                configuration: ConsumerConfiguration(durableName: "third", filterSubject: "entries.3"))
            let messages = try await jetStream.pullConsumer(stream: "ENTRIES", consumer: info.name)
                .fetch(batch: 5, expires: .milliseconds(300))
            #expect(messages.map(\.metadata.streamSequence) == [3])
        }
    }

    @Test func pullingFromAMissingConsumerOrABatchOfZeroFails() async throws {
        try await Self.withStream(messages: 1) { jetStream in
            // The server drops a pull on a consumer it does not have: the request times out, or misses its heartbeats.
            let quick = jetStream.connection.jetStream(timeout: .milliseconds(200))
            let missing = quick.pullConsumer(stream: "ENTRIES", consumer: "missing")
            let subject = "$JS.API.CONSUMER.MSG.NEXT.ENTRIES.missing"
            await #expect(
                throws: NATSError.timedOut(operation: "the pull request on '\(subject)'", timeout: .milliseconds(500))
            ) {
                try await missing.fetch(batch: 1, expires: .milliseconds(300))
            }
            let (error, elapsed) = try await onThread { () -> (NATSError?, Duration) in
                let started = ContinuousClock.now
                do {
                    _ = try missing.fetch(batch: 1, expires: .seconds(5), heartbeat: .milliseconds(100))
                    return (nil, ContinuousClock.now - started)
                } catch let error as NATSError {
                    return (error, ContinuousClock.now - started)
                }
            }
            #expect(error == .missedHeartbeats(subject: subject, interval: .milliseconds(100)))
            #expect(elapsed < .seconds(2))
            _ = try await jetStream.createConsumer(
                stream: "ENTRIES", configuration: ConsumerConfiguration(durableName: "c"))
            await #expect(throws: NATSError.invalidArgument("a batch must ask for at least 1 message, not 0")) {
                try await jetStream.pullConsumer(stream: "ENTRIES", consumer: "c").fetch(batch: 0)
            }
            await #expect(throws: JetStreamError.streamNotFound) {
                try await jetStream.createConsumer(
                    stream: "NOPE", configuration: ConsumerConfiguration(durableName: "c"))
            }
        }
    }
}
