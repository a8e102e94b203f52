/// A JSON value that keeps what lossless round trips need: numbers as their literal text, so that no integer or
/// double is rounded on the way through, and object members in their order.
///
/// kvtool writes and reads JSON through this type and its own writer and ``JSONParser``, never through a generic
/// `Any` tree: `1` and `1.0` stay apart, `18446744073709551615` stays exact, and member order is kept, so a record
/// written back has the bytes it was read from.
///
/// ```swift
/// let line = JSONValue.object([JSONMember("entity", .string("Task")), JSONMember("count", .number("3"))])
/// line.serialized()  // {"entity":"Task","count":3}
/// ```
package enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its literal text (valid JSON number syntax).
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in order.
    case object([JSONMember])

    /// The value of the first member named `name`, when this is an object that has one.
    package subscript(member name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.name == name }?.value
    }

    /// What kind of JSON value this is, for messages: `a string`, `an object`...
    package var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The JSON text: compact on one line, or indented by two spaces per level.
    package func serialized(pretty: Bool = false) -> String {
        var text = ""
        write(to: &text, pretty: pretty, depth: 0)
        return text
    }

    /// Appends the JSON text of this value to `text`.
    package func write(to text: inout String, pretty: Bool, depth: Int) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let literal): text += literal
        case .string(let value): Self.writeString(value, to: &text)
        case .array(let elements):
            writeContainer(elements, open: "[", close: "]", to: &text, pretty: pretty, depth: depth) { element, text in
                element.write(to: &text, pretty: pretty, depth: depth + 1)
            }
        case .object(let members):
            writeContainer(members, open: "{", close: "}", to: &text, pretty: pretty, depth: depth) { member, text in
                Self.writeString(member.name, to: &text)
                text += pretty ? ": " : ":"
                member.value.write(to: &text, pretty: pretty, depth: depth + 1)
            }
        }
    }

    private func writeContainer<Element>(
        _ elements: [Element], open: String, close: String, to text: inout String, pretty: Bool, depth: Int,
        _ writeElement: (Element, inout String) -> Void
    ) {
        text += open
        guard !elements.isEmpty else {
            text += close
            return
        }
        let indent = pretty ? "\n" + String(repeating: "  ", count: depth + 1) : ""
        for (offset, element) in elements.enumerated() {
            if offset > 0 { text += "," }
            text += indent
            writeElement(element, &text)
        }
        if pretty { text += "\n" + String(repeating: "  ", count: depth) }
        text += close
    }

    /// Appends `value` as a JSON string literal, escaping quotes, backslashes and control characters.
    package static func writeString(_ value: String, to text: inout String) {
        let needsEscapes = value.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
        guard needsEscapes else {
            // The common case, appended whole: scalar-by-scalar appends cost more than the rest of an export.
            text += "\""
            text += value
            text += "\""
            return
        }
        var escaped = "\""
        for scalar in value.unicodeScalars {
            if scalar.value < 0x20 || scalar == "\"" || scalar == "\\" {
                escaped += escape(scalar)
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        text += escaped + "\""
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\"": return "\\\""
        case "\\": return "\\\\"
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\u{08}": return "\\b"
        case "\u{0C}": return "\\f"
        default:
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
    }
}

/// A member of a JSON object: a name and a value.
package struct JSONMember: Equatable, Sendable {
    /// The member's name.
    package var name: String
    /// The member's value.
    package var value: JSONValue

    /// Creates a member.
    package init(_ name: String, _ value: JSONValue) {
        self.name = name
        self.value = value
    }
}
