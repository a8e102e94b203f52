/// What the server sent: one protocol operation.
enum ServerOperation: Equatable {
    /// `INFO {…}`, with its JSON.
    case info([UInt8])
    /// `MSG` or `HMSG`, for the subscription `sid`.
    case message(NATSMessage, sid: UInt64)
    /// `PING`.
    case ping
    /// `PONG`.
    case pong
    /// `+OK`.
    case ok
    /// `-ERR 'message'`, the message without its quotes.
    case error(String)
}

/// The incremental parser of the server's side of the protocol: bytes go in as they arrive, operations come out
/// once complete.
struct ProtocolParser {
    /// The longest control line accepted: the server's own default `max_control_line` is 4 KiB.
    static let maximumControlLine = 4096 + 1024

    /// Received bytes; those before `position` are parsed.
    var buffer: [UInt8] = []
    private var position = 0

    /// Drops the parsed bytes once they are the larger part of the buffer, so that it does not grow without end.
    mutating func compact() {
        if position > 0 && position * 2 >= buffer.count {
            buffer.removeSubrange(0..<position)
            position = 0
        }
    }

    /// Appends received bytes.
    mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete operation, or `nil` when more bytes are needed.
    ///
    /// - Throws: ``NATSError/protocolError(_:)`` for bytes that are not the protocol.
    mutating func next() throws -> ServerOperation? {
        guard let lineEnd = findLineEnd() else {
            if buffer.count - position > Self.maximumControlLine {
                throw NATSError.protocolError("a control line is longer than \(Self.maximumControlLine) bytes")
            }
            return nil
        }
        let line = buffer[position..<lineEnd]
        let bodyStart = lineEnd + 2
        let opEnd = line.firstIndex { $0 == 32 || $0 == 9 } ?? line.endIndex
        let op = String(decoding: line[line.startIndex..<opEnd], as: UTF8.self).uppercased()
        let rest = line[opEnd...].drop { $0 == 32 || $0 == 9 }
        switch op {
        case "MSG", "HMSG":
            return try message(arguments: rest, hasHeaders: op == "HMSG", bodyStart: bodyStart)
        case "PING":
            position = bodyStart
            return .ping
        case "PONG":
            position = bodyStart
            return .pong
        case "+OK":
            position = bodyStart
            return .ok
        case "-ERR":
            position = bodyStart
            var text = String(decoding: rest, as: UTF8.self).trimmingSpaces()
            if text.count >= 2 && text.hasPrefix("'") && text.hasSuffix("'") {
                text = String(text.dropFirst().dropLast())
            }
            return .error(text)
        case "INFO":
            position = bodyStart
            return .info(Array(rest))
        default:
            let shown = String(decoding: line.prefix(64), as: UTF8.self)
            throw NATSError.protocolError("unknown operation '\(shown)'")
        }
    }

    /// Parses `MSG <subject> <sid> [reply] <size>` or `HMSG <subject> <sid> [reply] <header size> <total size>`,
    /// once its payload and closing CRLF have arrived.
    private mutating func message(
        arguments: ArraySlice<UInt8>, hasHeaders: Bool, bodyStart: Int
    ) throws
        -> ServerOperation?
    {
        let words = arguments.split(whereSeparator: { $0 == 32 || $0 == 9 }).map { String(decoding: $0, as: UTF8.self) }
        let sizes = hasHeaders ? 2 : 1
        guard words.count == 2 + sizes || words.count == 3 + sizes else {
            throw NATSError.protocolError("\(hasHeaders ? "HMSG" : "MSG") with \(words.count) arguments")
        }
        guard let sid = UInt64(words[1]), let total = Int(words[words.count - 1]), total >= 0,
            let headerSize = hasHeaders ? Int(words[words.count - 2]) : 0, headerSize >= 0, headerSize <= total
        else {
            throw NATSError.protocolError(
                "\(hasHeaders ? "HMSG" : "MSG") with invalid sizes: \(words.joined(separator: " "))")
        }
        guard buffer.count >= bodyStart + total + 2 else { return nil }
        guard buffer[bodyStart + total] == 13, buffer[bodyStart + total + 1] == 10 else {
            throw NATSError.protocolError("a message's payload is not followed by CRLF")
        }
        let headers = hasHeaders ? try NATSHeaders(parsing: buffer[bodyStart..<bodyStart + headerSize]) : nil
        let payload = Array(buffer[bodyStart + headerSize..<bodyStart + total])
        position = bodyStart + total + 2
        let message = NATSMessage(
            subject: words[0], replySubject: words.count == 3 + sizes ? words[2] : nil, headers: headers,
            payload: payload)
        return .message(message, sid: sid)
    }

    /// The index of the next CR LF from `position`.
    private func findLineEnd() -> Int? {
        var index = position
        while index + 1 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (Foundation-free, for the parser).
    func trimmingSpaces() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
