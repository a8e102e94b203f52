/// An option that takes a value, such as `--limit <n>`, given as `--limit 10` or `--limit=10`.
///
/// Its type says how often it may be given and what reading it returns: with a default (`Option<Int>(...,
/// default: 10)`) the default when not given; without one, `nil` when not given (`Option<Int?>`) or a usage error
/// (`Option<String>`, a required option); and every value, in order, for an option that may be repeated
/// (`Option<[String]>`, which may be required to be given at least once). Values are parsed by the element type's ``ArgumentValue/parser`` unless `parser` says
/// otherwise, and a value that does not parse is a usage error naming the option.
///
/// ```swift
/// struct Arguments: ParsableArguments {
///     let limit = Option<Int?>("limit", valueName: "n", help: "Print at most n records.", parser: .integer(in: 0...))
/// }
/// let limit = try arguments[\.limit]
/// ```
package struct Option<Value: Sendable>: Sendable, Declared {
    let declaration: Declaration
    let convert: @Sendable ([String]) throws(UsageError) -> Value

    private init(
        _ name: String, short: Character?, valueName: String, help: String, isRepeatable: Bool = false,
        isRequired: Bool = false, choices: [String]?, defaultDescription: String?,
        convert: @escaping @Sendable ([String]) throws(UsageError) -> Value
    ) {
        self.convert = convert
        declaration = Declaration(
            kind: .option(valueName: valueName, isRepeatable: isRepeatable, isRequired: isRequired), name: name,
            shortName: short, help: Declaration.help(help, choices: choices, defaultDescription: defaultDescription)
        ) { texts throws(UsageError) in _ = try convert(texts) }
    }

    var declarations: [Declaration] {
        [declaration]
    }

    private static func label(_ name: String, _ valueName: String) -> String {
        "--\(name) <\(valueName)>"
    }
}

extension Option where Value: ArgumentValue {
    /// Declares an option with a default, which help shows.
    ///
    /// - Parameters:
    ///   - name: The long name, kebab-case, without the dashes: `chunk-size`.
    ///   - short: The one-letter name, if any.
    ///   - valueName: The placeholder of the value in help: `n` for `--chunk-size <n>`.
    ///   - help: One sentence or two for the help text.
    ///   - defaultValue: The value when the option is not given.
    ///   - defaultDescription: How help writes the default, when not as the parser describes it: `16 MiB`.
    ///   - parser: How a value is parsed; the element type's own parser when `nil`.
    package init(
        _ name: String, short: Character? = nil, valueName: String, help: String, default defaultValue: Value,
        defaultDescription: String? = nil, parser: ValueParser<Value>? = nil
    ) {
        let parser = parser ?? Value.parser
        let label = Self.label(name, valueName)
        self.init(
            name, short: short, valueName: valueName, help: help, choices: parser.choices,
            defaultDescription: defaultDescription ?? parser.describe(defaultValue)
        ) { (texts: [String]) throws(UsageError) -> Value in
            guard let text = texts.last else { return defaultValue }
            return try parser.value(of: text, for: label)
        }
    }

    /// Declares an option that must be given: leaving it out is a usage error.
    ///
    /// - Parameters:
    ///   - name: The long name, kebab-case, without the dashes: `store`.
    ///   - short: The one-letter name, if any.
    ///   - valueName: The placeholder of the value in help: `path` for `--store <path>`.
    ///   - help: One sentence or two for the help text.
    ///   - parser: How a value is parsed; the element type's own parser when `nil`.
    package init(
        _ name: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Value>? = nil
    ) {
        let parser = parser ?? Value.parser
        let label = Self.label(name, valueName)
        self.init(
            name, short: short, valueName: valueName, help: help, isRequired: true, choices: parser.choices,
            defaultDescription: nil
        ) { (texts: [String]) throws(UsageError) -> Value in
            guard let text = texts.last else { throw UsageError("Missing expected option '\(label)'") }
            return try parser.value(of: text, for: label)
        }
    }
}

extension Option {
    /// Declares an option that reads as `nil` when it is not given.
    ///
    /// - Parameters:
    ///   - name: The long name, kebab-case, without the dashes: `output`.
    ///   - short: The one-letter name, if any.
    ///   - valueName: The placeholder of the value in help: `file` for `--output <file>`.
    ///   - help: One sentence or two for the help text.
    ///   - defaultDescription: What not giving it means, for help: `$TMPDIR, or /tmp`.
    ///   - parser: How a value is parsed; the element type's own parser when `nil`.
    package init<Element: ArgumentValue>(
        _ name: String, short: Character? = nil, valueName: String, help: String, defaultDescription: String? = nil,
        parser: ValueParser<Element>? = nil
    ) where Value == Element? {
        let parser = parser ?? Element.parser
        let label = Self.label(name, valueName)
        self.init(
            name, short: short, valueName: valueName, help: help, choices: parser.choices,
            defaultDescription: defaultDescription
        ) { (texts: [String]) throws(UsageError) -> Element? in
            guard let text = texts.last else { return nil }
            return try parser.value(of: text, for: label)
        }
    }

    /// Declares an option that may be given any number of times, each value kept in order.
    ///
    /// - Parameters:
    ///   - name: The long name, kebab-case, without the dashes: `where`.
    ///   - short: The one-letter name, if any.
    ///   - valueName: The placeholder of the value in help: `field=value` for `--where <field=value>`.
    ///   - help: One sentence or two for the help text.
    ///   - separator: A character that splits each value into several (`,` for `--scenario insert,fetch`); `nil`
    ///     keeps each value whole.
    ///   - isRequired: Whether it must be given at least once (`--server <url> ...`, a list of servers).
    ///   - defaultDescription: What not giving it means, for help: `all of them`.
    ///   - parser: How each value is parsed; the element type's own parser when `nil`.
    package init<Element: ArgumentValue>(
        _ name: String, short: Character? = nil, valueName: String, help: String, separator: Character? = nil,
        isRequired: Bool = false, defaultDescription: String? = nil, parser: ValueParser<Element>? = nil
    ) where Value == [Element] {
        let parser = parser ?? Element.parser
        let label = Self.label(name, valueName)
        self.init(
            name, short: short, valueName: valueName, help: help, isRepeatable: true, isRequired: isRequired,
            choices: parser.choices, defaultDescription: defaultDescription
        ) { (texts: [String]) throws(UsageError) -> [Element] in
            if isRequired && texts.isEmpty { throw UsageError("Missing expected option '\(label)'") }
            var values: [Element] = []
            for text in texts {
                let items =
                    separator.map { text.split(separator: $0, omittingEmptySubsequences: false).map(String.init) }
                    ?? [text]
                for item in items { values.append(try parser.value(of: item, for: label)) }
            }
            return values
        }
    }
}
