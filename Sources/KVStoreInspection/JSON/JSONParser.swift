/// JSON text that does not parse, with the column where parsing stopped.
package struct JSONParseError: Error, Equatable, CustomStringConvertible {
    /// What was expected or found.
    package let reason: String
    /// The 1-based column (byte offset plus one) of the problem.
    package let column: Int

    /// Creates an error; the parameters are the properties of the same names.
    package init(reason: String, column: Int) {
        self.reason = reason
        self.column = column
    }

    /// A sentence for import's line errors.
    package var description: String {
        "malformed JSON at column \(column): \(reason)"
    }
}

/// A strict JSON parser (RFC 8259) into ``JSONValue``: numbers are kept as their literal text and object members in
/// order.
///
/// It reads bytes, validates UTF-8, rejects trailing text and objects that name a member twice (RFC 8259 leaves their
/// meaning open: a record would otherwise store both), and limits nesting to 512 levels so that hostile input cannot
/// exhaust the stack.
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"id":1}"#.utf8))
/// ```
package struct JSONParser {
    private let bytes: [UInt8]
    private var offset = 0
    private static let maximumDepth = 512
    /// The one-letter escapes and the bytes they stand for.
    private static let simpleEscapes: [UInt8: UInt8] = [
        UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F, UInt8(ascii: "b"): 0x08,
        UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
    ]

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses one JSON text.
    ///
    /// - Parameter bytes: The UTF-8 text, such as one line of a JSON Lines file.
    /// - Returns: The value.
    /// - Throws: ``JSONParseError`` for anything that is not exactly one JSON value surrounded by white space, and for
    ///   an object with two members of the same name.
    package static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.offset == bytes.count else { throw parser.error("unexpected text after the value") }
        return value
    }

    private func error(_ reason: String) -> JSONParseError {
        JSONParseError(reason: reason, column: offset + 1)
    }

    private var current: UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONParseError) {
        guard current == byte else { throw error("expected \(what)") }
        offset += 1
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("values nested deeper than \(Self.maximumDepth) levels") }
        guard let byte = current else { throw error("expected a value, found the end of the text") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character '\(Unicode.Scalar(byte))'")
        }
    }

    private mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let utf8 = Array(word.utf8)
        guard bytes.count - offset >= utf8.count, bytes[offset..<offset + utf8.count].elementsEqual(utf8) else {
            throw error("unexpected character '\(Unicode.Scalar(bytes[offset]))'")
        }
        offset += utf8.count
        return value
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        offset += 1
        var members: [JSONMember] = []
        // Small objects are searched; past a few members a set of the names costs less.
        var names: Set<String> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
            let nameStart = offset
            let name = try parseString()
            let isDuplicate: Bool
            if members.count < 16 {
                isDuplicate = members.contains { $0.name == name }
            } else {
                if names.isEmpty { names = Set(members.map(\.name)) }
                isDuplicate = !names.insert(name).inserted
            }
            if isDuplicate {
                offset = nameStart
                throw error("the member name \(Self.quoted(name)) appears twice in an object")
            }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after a member name")
            skipWhitespace()
            members.append(JSONMember(name, try parseValue(depth: depth + 1)))
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}' in an object")
            return .object(members)
        }
    }

    /// A member name for a message, in JSON quotes, shortened past 60 characters.
    private static func quoted(_ name: String) -> String {
        let shown = name.count > 60 ? String(name.prefix(57)) + "..." : name
        return JSONValue.string(shown).serialized()
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']' in an array")
            return .array(elements)
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> String {
        let start = offset
        if current == UInt8(ascii: "-") { offset += 1 }
        if current == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard try digits() > 0 else { throw error("expected a digit") }
        }
        if current == UInt8(ascii: ".") {
            offset += 1
            guard try digits() > 0 else { throw error("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard try digits() > 0 else { throw error("expected a digit in the exponent") }
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func digits() throws(JSONParseError) -> Int {
        let start = offset
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { offset += 1 }
        return offset - start
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        offset += 1
        let start = offset
        // Most strings have no escapes: find the closing quote and take the bytes in between at once. The scan reads
        // the buffer directly, since long strings (an export's Base64 chunks) make it the parser's hottest loop.
        offset = bytes.withUnsafeBufferPointer { buffer in
            var index = start
            while index < buffer.count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                index += 1
            }
            return index
        }
        if current == UInt8(ascii: "\"") {
            guard let text = String(validating: bytes[start..<offset], as: UTF8.self) else {
                throw error("a string is not valid UTF-8")
            }
            offset += 1
            return text
        }
        var utf8 = Array(bytes[start..<offset])
        while true {
            guard let byte = current else { throw error("unterminated string") }
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0..<0x20:
                offset -= 1
                throw error("a control character in a string must be escaped")
            default:
                utf8.append(byte)
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
        guard let byte = current else { throw error("unterminated string") }
        offset += 1
        if let replacement = Self.simpleEscapes[byte] {
            utf8.append(replacement)
            return
        }
        guard byte == UInt8(ascii: "u") else { throw error("unknown escape '\\\(Unicode.Scalar(byte))'") }
        var code = try hexQuad()
        if (0xD800..<0xDC00).contains(code) {
            guard current == UInt8(ascii: "\\"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "u")
            else { throw error("a high surrogate without its low surrogate") }
            offset += 2
            let low = try hexQuad()
            guard (0xDC00..<0xE000).contains(low) else { throw error("a high surrogate without its low surrogate") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(code) else { throw error("a lone surrogate in '\\u' escapes") }
        utf8.append(contentsOf: String(Character(scalar)).utf8)
    }

    private mutating func hexQuad() throws(JSONParseError) -> UInt32 {
        guard bytes.count - offset >= 4,
            let code = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16)
        else { throw error("expected four hexadecimal digits after '\\u'") }
        offset += 4
        return code
    }
}
