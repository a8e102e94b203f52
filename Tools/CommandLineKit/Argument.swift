/// A positional argument, such as `<path>`.
///
/// Its type says how many values it takes: one (`Argument<String>`), one or none (`Argument<String?>`), or the rest
/// of the positional arguments (`Argument<[String]>`, at least one when `isRequired`). Positional arguments take the
/// words that are not options, in the order they are declared. Values are parsed by the element type's
/// ``ArgumentValue/parser`` unless `parser` says otherwise.
///
/// ```swift
/// struct Arguments: ParsableArguments {
///     let path = Argument<String>("path", help: "The store's directory.")
/// }
/// let path = try arguments[\.path]
/// ```
package struct Argument<Value: Sendable>: Sendable, Declared {
    let declaration: Declaration
    let convert: @Sendable ([String]) throws(UsageError) -> Value

    private init(
        _ name: String, help: String, arity: Declaration.Arity, choices: [String]?,
        convert: @escaping @Sendable ([String]) throws(UsageError) -> Value
    ) {
        self.convert = convert
        declaration = Declaration(
            kind: .argument(arity), name: name, shortName: nil,
            help: Declaration.help(help, choices: choices, defaultDescription: nil)
        ) { texts throws(UsageError) in _ = try convert(texts) }
    }

    var declarations: [Declaration] {
        [declaration]
    }
}

extension Argument where Value: ArgumentValue {
    /// Declares an argument that must be given, once.
    ///
    /// - Parameters:
    ///   - name: The name, shown as `<name>`.
    ///   - help: One sentence for the help text.
    ///   - parser: How the value is parsed; the element type's own parser when `nil`.
    package init(_ name: String, help: String, parser: ValueParser<Value>? = nil) {
        let parser = parser ?? Value.parser
        self.init(name, help: help, arity: .one, choices: parser.choices) {
            (texts: [String]) throws(UsageError) -> Value in
            guard let text = texts.first else { throw UsageError("Missing expected argument '<\(name)>'") }
            return try parser.value(of: text, for: "<\(name)>")
        }
    }
}

extension Argument {
    /// Declares an argument that may be left out, reading as `nil`.
    ///
    /// - Parameters:
    ///   - name: The name, shown as `[<name>]`.
    ///   - help: One sentence for the help text.
    ///   - parser: How the value is parsed; the element type's own parser when `nil`.
    package init<Element: ArgumentValue>(_ name: String, help: String, parser: ValueParser<Element>? = nil)
    where Value == Element? {
        let parser = parser ?? Element.parser
        self.init(name, help: help, arity: .optional, choices: parser.choices) {
            (texts: [String]) throws(UsageError) -> Element? in
            try texts.first.map { text throws(UsageError) in try parser.value(of: text, for: "<\(name)>") }
        }
    }

    /// Declares an argument that takes the rest of the positional arguments.
    ///
    /// - Parameters:
    ///   - name: The name, shown as `[<name> ...]`, or `<name> ...` when required.
    ///   - help: One sentence for the help text.
    ///   - isRequired: Whether at least one value must be given.
    ///   - parser: How each value is parsed; the element type's own parser when `nil`.
    package init<Element: ArgumentValue>(
        _ name: String, help: String, isRequired: Bool = false, parser: ValueParser<Element>? = nil
    ) where Value == [Element] {
        let parser = parser ?? Element.parser
        self.init(name, help: help, arity: isRequired ? .oneOrMore : .zeroOrMore, choices: parser.choices) {
            (texts: [String]) throws(UsageError) -> [Element] in
            var values: [Element] = []
            for text in texts { values.append(try parser.value(of: text, for: "<\(name)>")) }
            return values
        }
    }
}
