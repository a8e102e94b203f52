/// The arguments of one subcommand, split into positional arguments, option values and flags.
struct ParsedArguments {
    /// The values of each positional argument, by name.
    private(set) var positionals: [String: [String]] = [:]
    /// The values of each option that takes one, by long name, in the order given.
    private(set) var options: [String: [String]] = [:]
    /// The flags given, by long name.
    private(set) var flags: Set<String> = []
    /// The subcommand, for messages.
    let spec: CommandSpec

    /// The value of a required positional argument (the parser made sure it is there).
    func argument(_ name: String) -> String {
        positionals[name]?.first ?? ""
    }

    /// The values of a repeating positional argument.
    func arguments(_ name: String) -> [String] {
        positionals[name] ?? []
    }

    /// The last value of an option, or `nil` when it was not given.
    func value(_ name: String) -> String? {
        options[name]?.last
    }

    /// Every value of a repeatable option.
    func values(_ name: String) -> [String] {
        options[name] ?? []
    }

    /// Whether a flag was given.
    func flag(_ name: String) -> Bool {
        flags.contains(name)
    }

    /// The value of an option as a non-negative integer, or `nil` when the option was not given.
    ///
    /// - Throws: ``UsageError`` when the value is not a non-negative integer.
    func count(_ name: String) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), number >= 0 else {
            let label = spec.allOptions.first { $0.name == name }?.label ?? "--\(name)"
            throw UsageError("The value '\(text)' is invalid for '\(label)': expected a non-negative integer")
        }
        return number
    }

    /// The value of an option as a positive integer, or `fallback` when the option was not given.
    ///
    /// - Throws: ``UsageError`` when the value is not a positive integer.
    func positiveCount(_ name: String, default fallback: Int) throws(UsageError) -> Int {
        guard let number = try count(name) else { return fallback }
        guard number > 0 else {
            throw UsageError("The value '\(number)' is invalid for '--\(name)': expected a positive integer")
        }
        return number
    }

    /// Records a positional value.
    fileprivate mutating func append(argument name: String, _ value: String) {
        positionals[name, default: []].append(value)
    }

    /// Records an option's value.
    fileprivate mutating func append(option name: String, _ value: String) {
        options[name, default: []].append(value)
    }

    /// Records a flag.
    fileprivate mutating func insert(flag name: String) {
        flags.insert(name)
    }
}

/// What the parser found: a request for help or the version, or arguments to run with.
enum ParseResult {
    /// `-h` or `--help` was given.
    case help
    /// `--version` was given.
    case version
    /// The subcommand's arguments.
    case arguments(ParsedArguments)
}

/// The hand-written parser, in the manner of swift-argument-parser: kebab-case long options, `--opt value` and
/// `--opt=value`, `-h`, and `--` to end the options.
enum ArgumentParser {
    /// Parses a subcommand's arguments (the words after its name).
    ///
    /// `--help` and `--version` win wherever they stand before `--`, even beside other mistakes.
    ///
    /// - Throws: ``UsageError`` for an unknown option, a missing or unexpected value, or a missing or extra argument.
    static func parse(_ words: [String], spec: CommandSpec) throws(UsageError) -> ParseResult {
        let options = Dictionary(spec.allOptions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let beforeTerminator = words.prefix { $0 != "--" }
        if beforeTerminator.contains(where: { $0 == "--help" || $0 == "-h" }) { return .help }
        if beforeTerminator.contains("--version") { return .version }

        var parsed = ParsedArguments(spec: spec)
        var positional: [String] = []
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                positional.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            guard word.hasPrefix("--") else { throw UsageError("Unknown option '\(word)'") }
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let option = options[name] else { throw UsageError("Unknown option '--\(name)'") }
            guard option.valueName != nil else {
                if inlineValue != nil { throw UsageError("The flag '--\(name)' does not take a value") }
                parsed.insert(flag: name)
                continue
            }
            if let inlineValue {
                parsed.append(option: name, inlineValue)
            } else if index < words.count, !isOptionLike(words[index]) {
                parsed.append(option: name, words[index])
                index += 1
            } else {
                throw UsageError("Missing value for '\(option.label)'")
            }
        }
        try assign(positional, to: &parsed, spec: spec)
        return .arguments(parsed)
    }

    /// Whether a word reads as an option rather than as a value: `--where` does, `-1` and `-` do not.
    private static func isOptionLike(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let second = word[word.index(after: word.startIndex)]
        return !(second.isNumber || second == ".")
    }

    /// Hands the positional words to the arguments in order, a repeating argument taking the rest.
    private static func assign(
        _ words: [String], to parsed: inout ParsedArguments, spec: CommandSpec
    ) throws(UsageError) {
        var remaining = words[...]
        for argument in spec.arguments {
            switch argument.arity {
            case .one:
                guard let word = remaining.popFirst() else {
                    throw UsageError("Missing expected argument '<\(argument.name)>'")
                }
                parsed.append(argument: argument.name, word)
            case .optional:
                if let word = remaining.popFirst() { parsed.append(argument: argument.name, word) }
            case .oneOrMore, .zeroOrMore:
                if argument.arity == .oneOrMore && remaining.isEmpty {
                    throw UsageError("Missing expected argument '<\(argument.name)>'")
                }
                for word in remaining { parsed.append(argument: argument.name, word) }
                remaining = []
            }
        }
        if let extra = remaining.first { throw UsageError("Unexpected argument '\(extra)'") }
    }
}

/// A mistake in how kvtool was called: printed with the usage line, exit status 64 (`EX_USAGE`).
struct UsageError: Error, Equatable {
    /// What is wrong, as one sentence without the `Error:` prefix.
    let message: String

    /// Creates an error with its message.
    init(_ message: String) {
        self.message = message
    }
}

/// A failure while running a subcommand, such as a missing store or an unknown entity: exit status 1.
struct ToolError: Error, Equatable {
    /// What happened and, where it helps, what to do.
    let message: String

    /// Creates an error with its message.
    init(_ message: String) {
        self.message = message
    }
}
