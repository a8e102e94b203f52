import NATSTestSupport
import Testing

@testable import NATS

/// The protocol parser, the header format, reply-subject metadata and server addresses, on bytes written here.
@Suite struct ProtocolParserTests {
    /// Parses every operation of `bytes`, fed `chunk` bytes at a time.
    static func operations(_ bytes: [UInt8], chunk: Int) throws -> [ServerOperation] {
        var parser = ProtocolParser()
        var operations: [ServerOperation] = []
        var offset = 0
        while offset < bytes.count {
            parser.append(bytes[offset..<min(offset + chunk, bytes.count)])
            offset += chunk
            while let operation = try parser.next() { operations.append(operation) }
            parser.compact()
        }
        return operations
    }

    @Test(arguments: [1, 2, 7, 1000])
    func operationsSplitAcrossReadsComeOutWhole(chunk: Int) throws {
        let stream = Array(
            ("INFO {\"server_id\":\"x\",\"max_payload\":1048576}\r\nPING\r\n+OK\r\nMSG a.b 7 5\r\nhello\r\n"
                + "MSG a.b 7 reply.to 0\r\n\r\nHMSG c 9 24 29\r\nNATS/1.0\r\nk: v\r\nv: w\r\n\r\nworld\r\n"
                + "-ERR 'Permissions Violation for Publish to \"x\"'\r\npong\r\n").utf8)
        let operations = try Self.operations(stream, chunk: chunk)
        var headers: NATSHeaders = ["k": "v", "v": "w"]
        headers.statusDescription = ""
        #expect(
            operations == [
                .info(Array("{\"server_id\":\"x\",\"max_payload\":1048576}".utf8)), .ping, .ok,
                .message(NATSMessage(subject: "a.b", payload: "hello".bytes), sid: 7),
                .message(NATSMessage(subject: "a.b", replySubject: "reply.to", payload: []), sid: 7),
                .message(NATSMessage(subject: "c", headers: headers, payload: "world".bytes), sid: 9),
                .error("Permissions Violation for Publish to \"x\""), .pong,
            ])
    }

    @Test func aPayloadHoldingCRLFIsReadByItsSize() throws {
        let operations = try Self.operations(Array("MSG s 1 6\r\na\r\nb\r\n\r\nPING\r\n".utf8), chunk: 3)
        #expect(operations == [.message(NATSMessage(subject: "s", payload: "a\r\nb\r\n".bytes), sid: 1), .ping])
    }

    @Test(arguments: [
        ("NATS/1.0 503\r\n\r\n", 503, ""),
        ("NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\n\r\n", 408, "Request Timeout"),
        ("NATS/1.0 404 No Messages\r\n\r\n", 404, "No Messages"),
        ("NATS/1.0 100 Idle Heartbeat\r\n\r\n", 100, "Idle Heartbeat"),
    ])
    func statusLinesAreRead(block: String, status: Int, description: String) throws {
        let headers = try NATSHeaders(parsing: Array(block.utf8)[...])
        #expect(headers.status == status)
        #expect(headers.statusDescription == description)
    }

    @Test func headersKeepOrderAndRepeatsAndLookUpInAnyCase() throws {
        let headers = try NATSHeaders(parsing: Array("NATS/1.0\r\nA: 1\r\nb: 2\r\na: 3\r\n\r\n".utf8)[...])
        #expect(headers.status == nil)
        #expect(headers["a"] == "1")
        #expect(headers.values(for: "A") == ["1", "3"])
        #expect(headers.fields.map(\.name) == ["A", "b", "a"])
        var copy = headers
        copy["A"] = "9"
        #expect(copy.fields.map(\.value) == ["9", "2"])
        #expect(String(decoding: try copy.encoded(), as: UTF8.self) == "NATS/1.0\r\nA: 9\r\nb: 2\r\n\r\n")
    }

    @Test(arguments: [("", "x", "empty"), ("a b", "x", "white space"), ("a:b", "x", "':'"), ("a", "x\r\ny", "line")])
    func headersThatWouldBreakTheFormatAreRefused(name: String, value: String, reason: String) {
        let headers = NATSHeaders([.init(name: name, value: value)])
        let error = #expect(throws: NATSError.self) { try headers.encoded() }
        #expect(error?.description.contains(reason) == true)
    }

    @Test(arguments: ["BOGUS x\r\n", "MSG a b c\r\n", "MSG a 1 5\r\nhelloXX", "HMSG a 1 9 4\r\n"])
    func bytesThatAreNotTheProtocolAreAProtocolError(text: String) {
        var parser = ProtocolParser()
        parser.append(text.utf8)
        #expect(throws: NATSError.self) {
            while try parser.next() != nil {}
        }
    }

    @Test func aControlLineWithoutEndIsRefusedPastTheLimit() throws {
        var parser = ProtocolParser()
        parser.append(repeatElement(UInt8(ascii: "A"), count: ProtocolParser.maximumControlLine))
        #expect(try parser.next() == nil)
        parser.append([UInt8(ascii: "A")])
        #expect(throws: NATSError.self) { try parser.next() }
    }

    @Test func metadataIsReadFromBothFormsOfReplySubject() throws {
        let old = try JetStreamMessage.Metadata(replySubject: "$JS.ACK.ORDERS.worker.2.17.5.1700000000123456789.3")
        #expect(old.stream == "ORDERS")
        #expect(old.consumer == "worker")
        #expect(old.domain == nil)
        #expect(old.deliveryCount == 2)
        #expect(old.streamSequence == 17)
        #expect(old.consumerSequence == 5)
        #expect(old.pending == 3)
        #expect(abs(old.timestamp.timeIntervalSince1970 - 1_700_000_000.123) < 0.001)
        let new = try JetStreamMessage.Metadata(
            replySubject: "$JS.ACK.hub.ACCHASH.ORDERS.worker.1.18.6.1700000000123456789.0.rnd")
        #expect(new.domain == "hub")
        #expect(new.streamSequence == 18)
        #expect(new.consumerSequence == 6)
        #expect(throws: NATSError.self) { try JetStreamMessage.Metadata(replySubject: "_INBOX.abc") }
        #expect(throws: NATSError.self) { try JetStreamMessage.Metadata(replySubject: "$JS.ACK.S.c.x.1.1.1.1") }
    }

    @Test(arguments: [
        ("nats://127.0.0.1:4223", "127.0.0.1", 4223, nil as String?),
        ("localhost", "localhost", 4222, nil),
        ("10.0.0.1:5000", "10.0.0.1", 5000, nil),
        ("nats://user:secret@host:1", "host", 1, "user"),
        ("nats://[::1]:4000", "::1", 4000, nil),
    ])
    func serverAddressesAreRead(text: String, host: String, port: Int, user: String?) throws {
        let address = try ServerAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.user == user)
    }

    @Test(arguments: ["tls://host:4222", "nats://:4222", "host:0", "host:port", "[::1"])
    func serverAddressesThatCannotBeReadAreRefused(text: String) {
        #expect(throws: NATSError.self) { try ServerAddress(parsing: text) }
    }

    @Test(arguments: ["", "a b", "a..b", ".a", "a.", "a.>.b"])
    func invalidSubjectsAreRefused(subject: String) {
        #expect(throws: NATSError.self) { try SubjectCheck.check(subject, allowsWildcards: true) }
    }

    @Test func wildcardsAreForSubscriptionsOnly() throws {
        try SubjectCheck.check("a.*.>", allowsWildcards: true)
        #expect(throws: NATSError.self) { try SubjectCheck.check("a.*", allowsWildcards: false) }
    }
}
