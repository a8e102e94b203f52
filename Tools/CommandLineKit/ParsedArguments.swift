/// What the parser found for a command's declarations, read back through the declarations themselves.
///
/// Each subscript takes a key path to a declaration of `Arguments` and returns its value with the declaration's type:
/// `Bool` for a ``Flag``, the option's or argument's `Value` otherwise. Every value was checked while parsing, so
/// reading throws only what parsing already would have.
///
/// ```swift
/// let chunkSize = try arguments[\.chunkSize]   // Int
/// let output = try arguments[\.output]         // String?
/// let force = arguments[\.file.force]          // Bool, from a group of options
/// ```
package struct ParsedArguments<Arguments: ParsableArguments> {
    private let declarations = Arguments()
    /// What was given, by declaration key: each value in order, an empty string each time a flag was given.
    private let given: [String: [String]]

    init(given: [String: [String]]) {
        self.given = given
    }

    /// Whether the flag was given.
    package subscript(_ flag: KeyPath<Arguments, Flag>) -> Bool {
        given[declarations[keyPath: flag].declaration.key] != nil
    }

    /// The value of the flag given among the choice's flags, or the default when none was.
    package subscript<Value>(_ choice: KeyPath<Arguments, FlagChoice<Value>>) -> Value {
        declarations[keyPath: choice].value { given[$0] != nil }
    }

    /// The option's value: the one given, or its default or `nil`; every value given, for a repeatable one.
    ///
    /// - Throws: ``UsageError`` for a value that does not parse, or a required option that was not given; the parser
    ///   checks both first, so this throws only for arguments that were never parsed against `Arguments`.
    package subscript<Value>(_ option: KeyPath<Arguments, Option<Value>>) -> Value {
        get throws(UsageError) {
            let option = declarations[keyPath: option]
            return try option.convert(given[option.declaration.key] ?? [])
        }
    }

    /// The argument's value: the word given, `nil` for an optional one left out, every word for a repeating one.
    ///
    /// - Throws: ``UsageError`` for a value that does not parse, or a required argument that was not given; the
    ///   parser checks both first, so this throws only for arguments that were never parsed against `Arguments`.
    package subscript<Value>(_ argument: KeyPath<Arguments, Argument<Value>>) -> Value {
        get throws(UsageError) {
            let argument = declarations[keyPath: argument]
            return try argument.convert(given[argument.declaration.key] ?? [])
        }
    }
}
