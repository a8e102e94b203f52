/// What the parser and the help text know of one flag, option or positional argument, whatever its value type.
///
/// ``Flag``, ``Option``, ``Argument`` and ``FlagChoice`` each make theirs; ``ParsableArguments`` finds them.
struct Declaration: Sendable {
    /// How many values a positional argument takes.
    enum Arity: Sendable, Equatable {
        /// Exactly one.
        case one
        /// One, or none.
        case optional
        /// Any number: the rest of the positional arguments.
        case zeroOrMore
        /// One or more: the rest of the positional arguments.
        case oneOrMore
    }

    /// What is declared.
    enum Kind: Sendable, Equatable {
        /// A flag, such as `--json`. `group` is what the flags of one ``FlagChoice`` share, `nil` for a flag alone.
        case flag(group: String?)
        /// An option that takes a value, such as `--limit <n>`.
        case option(valueName: String, isRepeatable: Bool, isRequired: Bool)
        /// A positional argument, such as `<path>`.
        case argument(Arity)
    }

    /// What is declared.
    let kind: Kind
    /// The long name without its dashes (`limit`), or the name of an argument (`path`).
    let name: String
    /// The one-letter name, if any: `h` for `-h`.
    let shortName: Character?
    /// The help, with the values to choose from and the default added.
    let help: String
    /// Converts what was given (each value, in order; for a flag, an empty string each time it was given) as the
    /// declaration's value would, throwing what reading it would throw.
    let validate: @Sendable ([String]) throws(UsageError) -> Void

    /// Whether this is a positional argument.
    var isArgument: Bool {
        if case .argument = kind { true } else { false }
    }

    /// Where the parser keeps what was given for it: `--limit`, or `<path>` for an argument.
    var key: String {
        isArgument ? "<\(name)>" : "--\(name)"
    }

    /// How messages name it: `--limit <n>`, `--json`, `<path>`.
    var label: String {
        switch kind {
        case .flag: "--\(name)"
        case .option(let valueName, _, _): "--\(name) <\(valueName)>"
        case .argument: "<\(name)>"
        }
    }

    /// How help lists it: `-o, --output <file>`.
    var helpLabel: String {
        shortName.map { "-\($0), \(label)" } ?? label
    }

    /// How the usage line shows it: `<path>`, `[<file>]`, `<id> ...`, `--store <path>`, `[--where <field=value> ...]`,
    /// `--server <url> ...`.
    var usage: String {
        switch kind {
        case .flag: "[\(label)]"
        case .option(_, let isRepeatable, let isRequired):
            isRequired ? label + (isRepeatable ? " ..." : "") : "[\(label)\(isRepeatable ? " ..." : "")]"
        case .argument(.one): label
        case .argument(.optional): "[\(label)]"
        case .argument(.zeroOrMore): "[\(label) ...]"
        case .argument(.oneOrMore): "\(label) ..."
        }
    }

    /// `help`, followed by the values to choose from and the default, in the manner of swift-argument-parser:
    /// `Print at most n records. (values: a, b; default: a)`.
    static func help(_ help: String, choices: [String]?, defaultDescription: String?) -> String {
        let notes = [
            choices.map { "values: " + $0.joined(separator: ", ") }, defaultDescription.map { "default: " + $0 },
        ]
        .compactMap { $0 }
        return notes.isEmpty ? help : help + " (" + notes.joined(separator: "; ") + ")"
    }
}

/// A declaration's own type: ``Flag``, ``Option``, ``Argument`` or ``FlagChoice``.
protocol Declared {
    /// What it declares: one flag, option or argument, or the flags of a choice.
    var declarations: [Declaration] { get }
}
