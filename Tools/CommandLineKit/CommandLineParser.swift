/// The parser, in the manner of swift-argument-parser: kebab-case long options, `--opt value` and `--opt=value`,
/// one-letter names, `-h` and `--help`, `--version`, and `--` to end the options.
struct CommandLineParser {
    /// What the words ask for.
    enum Outcome {
        /// `-h` or `--help`.
        case help
        /// `--version`.
        case version
        /// What was given for each declaration, by key.
        case given([String: [String]])
    }

    /// The command's declarations.
    let declarations: [Declaration]
    /// Whether `--version` is an option.
    let acceptsVersion: Bool

    /// `--version` and `-h, --help`, which every command takes (`--version` when the tool has a version).
    var standardOptions: [Declaration] {
        let version = Declaration(kind: .flag(group: nil), name: "version", shortName: nil, help: "Show the version.") {
            _ in
        }
        let help = Declaration(kind: .flag(group: nil), name: "help", shortName: "h", help: "Show help information.") {
            _ in
        }
        return acceptsVersion ? [version, help] : [help]
    }

    /// Parses a command's words (those after its name).
    ///
    /// `--help` and `--version` win wherever they stand before `--`, even beside other mistakes. Then the words are
    /// read in order; the positional ones are handed to the arguments; required options and the flags of a choice
    /// are checked; and every value is converted as reading it would, so that a bad one is reported here.
    ///
    /// - Throws: ``UsageError`` for an unknown option, a missing, unexpected or invalid value, an option given twice,
    ///   flags of one choice given together, or a missing or extra argument.
    func parse(_ words: [String]) throws(UsageError) -> Outcome {
        let beforeTerminator = words.prefix { $0 != "--" }
        if beforeTerminator.contains(where: { $0 == "--help" || $0 == "-h" }) { return .help }
        if acceptsVersion && beforeTerminator.contains("--version") { return .version }

        let named = declarations.filter { !$0.isArgument } + standardOptions
        var given: [String: [String]] = [:]
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
            let (declaration, inlineValue) = try Self.lookUp(word, in: named)
            guard case .option(_, let isRepeatable, _) = declaration.kind else {
                if inlineValue != nil { throw UsageError("The flag '\(declaration.label)' does not take a value") }
                if given[declaration.key] != nil {
                    throw UsageError("The flag '\(declaration.label)' was given more than once")
                }
                given[declaration.key] = [""]
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < words.count, !Self.isOptionLike(words[index]) {
                value = words[index]
                index += 1
            } else {
                throw UsageError("Missing value for '\(declaration.label)'")
            }
            if !isRepeatable && given[declaration.key] != nil {
                throw UsageError("The option '\(declaration.label)' was given more than once")
            }
            given[declaration.key, default: []].append(value)
        }
        try assign(positional, to: &given)
        try check(given)
        return .given(given)
    }

    /// The declaration a word names, and the value after its `=`, if any.
    ///
    /// - Throws: ``UsageError`` for a name no declaration has, with the closest one when it looks like a typo.
    private static func lookUp(
        _ word: String, in named: [Declaration]
    ) throws(UsageError) -> (Declaration, inlineValue: String?) {
        if word.hasPrefix("--") {
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            if let declaration = named.first(where: { $0.name == name }) { return (declaration, inlineValue) }
            throw UsageError(
                "Unknown option '--\(name)'" + Suggestion.text(for: name, among: named.map(\.name), prefix: "--"))
        }
        let body = String(word.dropFirst())
        if body.count == 1, let declaration = named.first(where: { $0.shortName == body.first }) {
            return (declaration, nil)
        }
        // `-json` for `--json` is a cheap mistake to spot.
        let suggestion = named.contains { $0.name == body } ? "; did you mean '--\(body)'?" : ""
        throw UsageError("Unknown option '\(word)'\(suggestion)")
    }

    /// Whether a word reads as an option rather than as a value: `--where` does, `-1`, `-.5` and `-` do not.
    private static func isOptionLike(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let second = word[word.index(after: word.startIndex)]
        return !(second.isNumber || second == ".")
    }

    /// Hands the positional words to the arguments in order, a repeating argument taking the rest.
    ///
    /// - Throws: ``UsageError`` for a required argument without a word, or a word left over.
    private func assign(_ words: [String], to given: inout [String: [String]]) throws(UsageError) {
        var remaining = words[...]
        for argument in declarations {
            guard case .argument(let arity) = argument.kind else { continue }
            switch arity {
            case .one:
                guard let word = remaining.popFirst() else {
                    throw UsageError("Missing expected argument '\(argument.label)'")
                }
                given[argument.key] = [word]
            case .optional:
                if let word = remaining.popFirst() { given[argument.key] = [word] }
            case .oneOrMore, .zeroOrMore:
                if arity == .oneOrMore && remaining.isEmpty {
                    throw UsageError("Missing expected argument '\(argument.label)'")
                }
                if !remaining.isEmpty { given[argument.key] = Array(remaining) }
                remaining = []
            }
        }
        if let extra = remaining.first { throw UsageError("Unexpected argument '\(extra)'") }
    }

    /// Checks what the words cannot show one at a time: required options, the flags of a choice, and each value.
    ///
    /// - Throws: ``UsageError`` for a required option not given, two flags of one choice, or a value that does not
    ///   parse; the first in the order of the declarations.
    private func check(_ given: [String: [String]]) throws(UsageError) {
        var groupsChecked: Set<String> = []
        for declaration in declarations {
            switch declaration.kind {
            case .option(_, _, isRequired: true) where given[declaration.key] == nil:
                throw UsageError("Missing expected option '\(declaration.label)'")
            case .flag(let group?) where groupsChecked.insert(group).inserted:
                let chosen = declarations.filter { $0.kind == .flag(group: group) && given[$0.key] != nil }
                if chosen.count > 1 {
                    throw UsageError(chosen.map(\.label).joined(separator: " and ") + " cannot be used together")
                }
            default:
                break
            }
            try declaration.validate(given[declaration.key] ?? [])
        }
    }
}
