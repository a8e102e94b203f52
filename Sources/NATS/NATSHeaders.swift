/// The headers of a NATS message: an ordered list of name-value fields, and the status line's code and description
/// when the server sent one.
///
/// Lookups ignore the case of names, but the names are sent as written, and JetStream matches its headers
/// (``Name/messageID`` and the others) exactly: use the constants. A name may repeat; the subscript returns the
/// first value.
///
/// ```swift
/// var headers: NATSHeaders = ["Nats-Msg-Id": "entry-42"]
/// headers.append("trace", value: "abc")
/// try connection.publish(subject: "orders", headers: headers, payload: Array("hello".utf8))
/// ```
public struct NATSHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// A header field.
    public struct Field: Sendable, Equatable {
        /// The field's name, as sent.
        public var name: String
        /// The field's value.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Header names that NATS and JetStream read.
    public enum Name {
        /// `Nats-Msg-Id`: the ID JetStream de-duplicates a published message by, within the stream's duplicate
        /// window.
        public static let messageID = "Nats-Msg-Id"
        /// `Nats-Expected-Last-Msg-Id`: JetStream stores the message only if the stream's last message has this ID.
        public static let expectedLastMessageID = "Nats-Expected-Last-Msg-Id"
        /// `Nats-Expected-Last-Sequence`: JetStream stores the message only if the stream's last sequence is this.
        public static let expectedLastSequence = "Nats-Expected-Last-Sequence"
        /// `Nats-Expected-Stream`: JetStream stores the message only if the subject belongs to this stream.
        public static let expectedStream = "Nats-Expected-Stream"
    }

    /// The fields, in order.
    public var fields: [Field]

    /// The status code of the status line (`NATS/1.0 503`), or `nil` when it has none.
    public var status: Int?

    /// The description after the status code (`Request Timeout` in `NATS/1.0 408 Request Timeout`), or empty.
    public var statusDescription: String

    /// Creates headers with `fields` and no status.
    public init(_ fields: [Field] = []) {
        self.fields = fields
        self.status = nil
        self.statusDescription = ""
    }

    /// Creates headers from name-value pairs, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { Field(name: $0.0, value: $0.1) })
    }

    /// The first value of the field named `name` (in any case), or `nil`; setting replaces every field of that name
    /// (or removes them, given `nil`).
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            let index = fields.firstIndex { Self.sameName($0.name, name) }
            fields.removeAll { Self.sameName($0.name, name) }
            if let newValue { fields.insert(Field(name: name, value: newValue), at: index ?? fields.count) }
        }
    }

    /// Every value of the fields named `name` (in any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping those of the same name.
    public mutating func append(_ name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Whether there are no fields.
    public var isEmpty: Bool {
        fields.isEmpty
    }

    private static func sameName(_ a: String, _ b: String) -> Bool {
        a.count == b.count && a.lowercased() == b.lowercased()
    }
}

extension NATSHeaders {
    /// The headers as the protocol sends them: `NATS/1.0`, a line per field, an empty line.
    ///
    /// - Throws: ``NATSError/invalidHeader(name:reason:)`` for a name or value that would break the format.
    func encoded() throws -> [UInt8] {
        var bytes = Array("NATS/1.0\r\n".utf8)
        for field in fields {
            if field.name.isEmpty { throw NATSError.invalidHeader(name: field.name, reason: "the name is empty") }
            if field.name.utf8.contains(where: { $0 <= 32 || $0 == 127 || $0 == UInt8(ascii: ":") }) {
                throw NATSError.invalidHeader(
                    name: field.name, reason: "a name must not hold ':', white space or control characters")
            }
            if field.value.utf8.contains(where: { $0 == 13 || $0 == 10 }) {
                throw NATSError.invalidHeader(name: field.name, reason: "the value holds a line break")
            }
            bytes += field.name.utf8
            bytes += ": ".utf8
            bytes += field.value.utf8
            bytes += "\r\n".utf8
        }
        bytes += "\r\n".utf8
        return bytes
    }

    /// Parses the header block of an `HMSG`: the version and status line, then the fields up to the empty line.
    ///
    /// - Throws: ``NATSError/protocolError(_:)`` when the block does not start with `NATS/1.0`.
    init(parsing bytes: ArraySlice<UInt8>) throws {
        self.init()
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let statusLine = lines.popFirst(), statusLine.hasPrefix("NATS/1.0") else {
            throw NATSError.protocolError("a header block does not start with NATS/1.0")
        }
        let rest = statusLine.dropFirst("NATS/1.0".count).drop { $0 == " " || $0 == "\t" }
        if !rest.isEmpty {
            let code = rest.prefix { ("0"..."9").contains($0) }
            guard let status = Int(code) else {
                throw NATSError.protocolError("the status line '\(statusLine)' has no numeric code")
            }
            self.status = status
            statusDescription = String(rest.dropFirst(code.count).drop { $0 == " " || $0 == "\t" })
        }
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw NATSError.protocolError("the header line '\(line)' has no ':'")
            }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            fields.append(Field(name: String(line[..<colon]), value: String(value)))
        }
    }
}
