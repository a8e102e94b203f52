import Foundation
import NATSTestSupport
import Testing

@testable import NATS

/// Publishing with acknowledgements: de-duplication, expectations, pipelining.
@Suite(.requiresNATSServer) struct JetStreamPublishTests {
    /// A server, a connection and a stream `ENTRIES` on `entries.>`, for `body`.
    static func withStream<R>(
        duplicateWindow: Duration? = nil, maximumMessageSize: Int? = nil,
        _ body: (JetStream) async throws -> R
    ) async throws -> R {
        let server = try NATSServer()
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let jetStream = connection.jetStream()
        _ = try await jetStream.createStream(
            StreamConfiguration(
                name: "ENTRIES", subjects: ["entries.>"], maximumMessageSize: maximumMessageSize,
                duplicateWindow: duplicateWindow))
        return try await body(jetStream)
    }

    @Test func aPublishIsAcknowledgedWithItsStreamAndSequence() async throws {
        try await Self.withStream { jetStream in
            let first = try await jetStream.publish(subject: "entries.1", payload: "a".bytes)
            let second = try await jetStream.publish(subject: "entries.2", payload: "b".bytes)
            #expect(first == PublishAck(stream: "ENTRIES", sequence: 1))
            #expect(second == PublishAck(stream: "ENTRIES", sequence: 2))
            await #expect(throws: NATSError.noResponders(subject: "elsewhere")) {
                try await jetStream.publish(subject: "elsewhere", payload: "c".bytes)
            }
        }
    }

    @Test func aSecondPublishWithTheSameMessageIDIsADuplicate() async throws {
        try await Self.withStream(duplicateWindow: .seconds(60)) { jetStream in
            let first = try await jetStream.publish(
                subject: "entries.x", payload: "once".bytes, options: .init(messageID: "entry-1"))
            let again = try await jetStream.publish(
                subject: "entries.x", payload: "twice".bytes, options: .init(messageID: "entry-1"))
            #expect(first == PublishAck(stream: "ENTRIES", sequence: 1, duplicate: false))
            #expect(again == PublishAck(stream: "ENTRIES", sequence: 1, duplicate: true))
            let other = try await jetStream.publish(
                subject: "entries.x", payload: "other".bytes, options: .init(messageID: "entry-2"))
            #expect(other == PublishAck(stream: "ENTRIES", sequence: 2))
            let state = try await jetStream.streamInfo("ENTRIES").state
            #expect(state.messages == 2)
            #expect(try await jetStream.message(stream: "ENTRIES", sequence: 1).payload == "once".bytes)
        }
    }

    @Test func anExpectedLastMessageIDThatIsNotTheLastIsRefused() async throws {
        try await Self.withStream { jetStream in
            _ = try await jetStream.publish(subject: "entries.x", payload: "1".bytes, options: .init(messageID: "1"))
            let next = try await jetStream.publish(
                subject: "entries.x", payload: "2".bytes, options: .init(messageID: "2", expectedLastMessageID: "1"))
            #expect(next.sequence == 2)
            // A gap: the stream's last message is 2, not 1.
            let error = await #expect(throws: JetStreamError.self) {
                try await jetStream.publish(
                    subject: "entries.x", payload: "3".bytes, options: .init(messageID: "3", expectedLastMessageID: "1")
                )
            }
            #expect(error == .wrongLastMessageID)
            #expect(error?.code == 400)
            #expect(error?.serverDescription.contains("wrong last msg ID") == true)
            #expect(try await jetStream.streamInfo("ENTRIES").state.lastSequence == 2)
            let lastID = try await jetStream.lastMessage(stream: "ENTRIES", subject: "entries.>")?.messageID
            #expect(lastID == "2")
        }
    }

    @Test func anExpectedLastSequenceThatIsNotTheLastIsRefused() async throws {
        try await Self.withStream { jetStream in
            _ = try await jetStream.publish(subject: "entries.x", payload: "1".bytes)
            let next = try await jetStream.publish(
                subject: "entries.x", payload: "2".bytes, options: .init(expectedLastSequence: 1))
            #expect(next.sequence == 2)
            await #expect(throws: JetStreamError.wrongLastSequence) {
                try await jetStream.publish(
                    subject: "entries.x", payload: "3".bytes, options: .init(expectedLastSequence: 1))
            }
            await #expect(throws: JetStreamError.self) {
                try await jetStream.publish(
                    subject: "entries.x", payload: "3".bytes, options: .init(expectedStream: "OTHER"))
            }
        }
    }

    @Test func aMessageOverTheStreamsMaximumSizeIsRefused() async throws {
        try await Self.withStream(maximumMessageSize: 64) { jetStream in
            _ = try await jetStream.publish(subject: "entries.x", payload: [UInt8](repeating: 1, count: 64))
            await #expect(throws: JetStreamError.messageTooLarge) {
                try await jetStream.publish(subject: "entries.x", payload: [UInt8](repeating: 1, count: 65))
            }
        }
    }

    @Test(arguments: 0..<2)
    func pipelinedPublishesAreAllAcknowledgedInOrder(round: Int) async throws {
        try await Self.withStream { jetStream in
            let count = 3000
            let (acks, inFlightAtMost) = try await onThread {
                let pipeline = try jetStream.makePipeline(maximumInFlight: 256)
                var inFlightAtMost = 0
                for index in 0..<count {
                    try pipeline.publish(
                        subject: "entries.\(index % 7)", payload: Array("entry \(index)".utf8),
                        options: PublishOptions(messageID: "id-\(index)"))
                    inFlightAtMost = max(inFlightAtMost, pipeline.inFlightCount)
                }
                return (try pipeline.finish(), inFlightAtMost)
            }
            #expect(acks.count == count)
            #expect(acks.map(\.sequence) == (1...UInt64(count)).map { $0 })
            #expect(acks.allSatisfy { $0.stream == "ENTRIES" && !$0.duplicate })
            #expect(inFlightAtMost <= 256)
            let last = try await jetStream.message(stream: "ENTRIES", sequence: UInt64(count))
            #expect(last.payload == Array("entry \(count - 1)".utf8))
            #expect(last.messageID == "id-\(count - 1)")
        }
    }

    @Test func aPipelineStopsAtTheFirstRefusalAndKeepsTheAcknowledgementsBefore() async throws {
        try await Self.withStream { jetStream in
            let (acknowledged, error) = try await onThread { () -> ([PublishAck], JetStreamError?) in
                let pipeline = try jetStream.makePipeline(maximumInFlight: 8)
                do {
                    for index in 1...20 {
                        // The 10th expects the 8th as the last message: the 9th is there, so it is refused.
                        let expected = index == 10 ? "8" : nil
                        try pipeline.publish(
                            subject: "entries.x", payload: [UInt8(index)],
                            options: PublishOptions(messageID: "\(index)", expectedLastMessageID: expected))
                    }
                    _ = try pipeline.finish()
                    return (pipeline.acknowledgements, nil)
                } catch let error as JetStreamError {
                    return (pipeline.acknowledgements, error)
                }
            }
            #expect(error == .wrongLastMessageID)
            #expect(acknowledged.map(\.sequence) == Array(1...9))
        }
    }
}
