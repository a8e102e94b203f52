/// How the text of an option or argument becomes a value, and what to say when it does not.
///
/// A parser that returns `nil` rejects the text, and the tool reports `The value 'ten' is invalid for '--limit <n>':
/// expected a non-negative integer`, its ``expectation`` ending the message. Parsers for the usual kinds are static
/// members, so a declaration names one with a dot: `parser: .integer(in: 1...100)`.
///
/// ```swift
/// let mode = ValueParser<Int>(expecting: "octal permissions, such as 0644") { Int($0, radix: 8) }
/// ```
package struct ValueParser<Value: Sendable>: Sendable {
    /// What a valid value is, after "expected": `a positive integer`, `fields or codable`.
    package let expectation: String
    /// The values there are to choose from, for help's `(values: ...)`; `nil` for an open set.
    package let choices: [String]?
    private let parseText: @Sendable (String) -> Value?
    private let describeValue: @Sendable (Value) -> String

    /// Creates a parser.
    ///
    /// - Parameters:
    ///   - expectation: What a valid value is, as the end of an error message after "expected".
    ///   - choices: The values to list in help, for a closed set.
    ///   - describe: How help writes a default value; `String(describing:)` when not given.
    ///   - parse: The value of a text, or `nil` to reject it.
    package init(
        expecting expectation: String, choices: [String]? = nil,
        describe: @escaping @Sendable (Value) -> String = { String(describing: $0) },
        parse: @escaping @Sendable (String) -> Value?
    ) {
        self.expectation = expectation
        self.choices = choices
        parseText = parse
        describeValue = describe
    }

    /// The value of `text`, or `nil` when the parser rejects it.
    package func parse(_ text: String) -> Value? {
        parseText(text)
    }

    /// How help writes `value` as a default.
    package func describe(_ value: Value) -> String {
        describeValue(value)
    }

    /// Parses `text` as the value of the option or argument `label`.
    ///
    /// - Throws: ``UsageError`` naming the text, the label and the expectation when the parser rejects it.
    func value(of text: String, for label: String) throws(UsageError) -> Value {
        guard let value = parseText(text) else {
            throw UsageError("The value '\(text)' is invalid for '\(label)': expected \(expectation)")
        }
        return value
    }
}

extension ValueParser where Value == String {
    /// Any text, the empty one included.
    package static var string: ValueParser {
        ValueParser(expecting: "a string") { $0 }
    }

    /// Any text but the empty one, such as a file name.
    ///
    /// - Parameter expectation: What the text names, for the error: `a file name`.
    package static func nonEmpty(expecting expectation: String) -> ValueParser {
        ValueParser(expecting: expectation) { $0.isEmpty ? nil : $0 }
    }
}

extension ValueParser where Value == Int {
    /// Any integer that `Int` holds, in decimal.
    package static var integer: ValueParser {
        ValueParser(expecting: "an integer") { Int($0) }
    }

    /// An integer of at least `range.lowerBound`: `0...` reads as "a non-negative integer", `1...` as "a positive
    /// integer".
    package static func integer(in range: PartialRangeFrom<Int>) -> ValueParser {
        let expectation =
            switch range.lowerBound {
            case 0: "a non-negative integer"
            case 1: "a positive integer"
            default: "an integer of at least \(range.lowerBound)"
            }
        return ValueParser(expecting: expectation) { text in Int(text).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// An integer within `range`, such as "an integer from 1 to 100".
    package static func integer(in range: ClosedRange<Int>) -> ValueParser {
        ValueParser(expecting: "an integer from \(range.lowerBound) to \(range.upperBound)") { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }
}

extension ValueParser where Value == UInt64 {
    /// Any integer from 0 to 2^64 - 1, in decimal.
    package static var unsigned: ValueParser {
        ValueParser(expecting: "an unsigned 64-bit integer") { UInt64($0) }
    }
}

extension ValueParser where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of the type's cases, by raw value: "expected small, default or large".
    package static var choice: ValueParser {
        let names = Value.allCases.map(\.rawValue)
        let list =
            names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "") : names.joined()
        return ValueParser(expecting: list, choices: names, describe: \.rawValue) { Value(rawValue: $0) }
    }
}
