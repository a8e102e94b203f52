import Foundation
import NATSTestSupport
import Testing

@testable import NATS

/// Creating, reading, changing and deleting streams, and reading their messages back.
@Suite(.requiresNATSServer) struct JetStreamStreamTests {
    @Test func aStreamIsCreatedReadUpdatedAndDeleted() async throws {
        let server = try NATSServer()
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let jetStream = connection.jetStream()
        let configuration = StreamConfiguration(
            name: "HISTORY", subjects: ["history.>"], storage: .file, maximumAge: .seconds(3600),
            maximumMessages: 1000, maximumBytes: 1 << 20, maximumMessageSize: 4096, duplicateWindow: .seconds(30))
        let created = try await jetStream.createStream(configuration)
        #expect(created.configuration == configuration)
        #expect(created.state.messages == 0)
        #expect(created.state.lastSequence == 0)
        // Creating it again with the same configuration changes nothing.
        #expect(try await jetStream.createStream(configuration).configuration == configuration)

        var different = configuration
        different.maximumMessages = 5
        await #expect(throws: JetStreamError.streamNameInUse) { try await jetStream.createStream(different) }

        var updated = configuration
        updated.subjects = ["history.>", "snapshots.>"]
        updated.maximumMessages = nil
        updated.duplicateWindow = .seconds(60)
        let afterUpdate = try await jetStream.updateStream(updated)
        #expect(afterUpdate.configuration == updated)
        #expect(try await jetStream.streamInfo("HISTORY").configuration == updated)

        try await jetStream.deleteStream("HISTORY")
        let error = await #expect(throws: JetStreamError.self) { try await jetStream.streamInfo("HISTORY") }
        #expect(error == .streamNotFound)
        #expect(error?.code == 404)
        #expect(error?.subject == "$JS.API.STREAM.INFO.HISTORY")
        #expect(error?.description.contains("stream not found") == true)
        await #expect(throws: JetStreamError.streamNotFound) { try await jetStream.deleteStream("HISTORY") }
        await #expect(throws: JetStreamError.streamNotFound) {
            try await jetStream.updateStream(StreamConfiguration(name: "HISTORY", subjects: ["history.>"]))
        }
    }

    @Test func namesThatWouldChangeTheAPISubjectAreRefused() async throws {
        let server = try NATSServer()
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let jetStream = connection.jetStream()
        for name in ["", "a.b", "a b", "a*", "a>"] {
            await #expect(throws: NATSError.self) {
                try await jetStream.createStream(StreamConfiguration(name: name, subjects: ["x"]))
            }
        }
    }

    @Test func aServerWithoutJetStreamAnswersNothing() async throws {
        let server = try NATSServer(jetStream: false)
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        await #expect(throws: NATSError.noResponders(subject: "$JS.API.STREAM.INFO.ANY")) {
            try await connection.jetStream().streamInfo("ANY")
        }
    }

    @Test func theStreamsMessagesAreReadBackBySequenceAndLastBySubject() async throws {
        let server = try NATSServer()
        let connection = try await NATSConnection.connect(servers: [server.url], options: testOptions())
        defer { connection.close() }
        let jetStream = connection.jetStream()
        _ = try await jetStream.createStream(StreamConfiguration(name: "LOG", subjects: ["log.>"], storage: .memory))
        #expect(try await jetStream.lastMessage(stream: "LOG", subject: "log.>") == nil)
        _ = try await jetStream.publish(subject: "log.a", payload: "one".bytes, options: .init(messageID: "m1"))
        _ = try await jetStream.publish(
            subject: "log.b", payload: "two".bytes, headers: ["Kind": "entry"], options: .init(messageID: "m2"))
        _ = try await jetStream.publish(subject: "log.a", payload: "three".bytes)

        let second = try await jetStream.message(stream: "LOG", sequence: 2)
        #expect(second.subject == "log.b")
        #expect(second.sequence == 2)
        #expect(second.payload == "two".bytes)
        #expect(second.messageID == "m2")
        #expect(second.headers?["Kind"] == "entry")

        let lastOfB = try #require(try await jetStream.lastMessage(stream: "LOG", subject: "log.b"))
        #expect(lastOfB.sequence == 2)
        let last = try #require(try await jetStream.lastMessage(stream: "LOG", subject: "log.>"))
        #expect(last.sequence == 3)
        #expect(last.payload == "three".bytes)
        #expect(last.headers == nil)
        #expect(try await jetStream.lastMessage(stream: "LOG", subject: "log.none") == nil)

        await #expect(throws: JetStreamError.noMessageFound) { try await jetStream.message(stream: "LOG", sequence: 9) }
        let state = try await jetStream.streamInfo("LOG").state
        #expect(state.messages == 3)
        #expect(state.firstSequence == 1)
        #expect(state.lastSequence == 3)
    }
}
