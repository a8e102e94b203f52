/// A named option of a subcommand: a flag, or an option that takes a value (`--limit 10`, `--limit=10`).
struct OptionSpec: Sendable {
    /// The long name, without the dashes: `limit`.
    let name: String
    /// The one-letter name, if any: `h` for `-h`.
    let shortName: Character?
    /// The placeholder of the value in help, such as `n`; `nil` for a flag.
    let valueName: String?
    /// One sentence or two for the help text.
    let help: String
    /// Whether the option may be given several times, each value kept.
    let isRepeatable: Bool

    /// A flag, such as `--json`.
    static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name: name, shortName: short, valueName: nil, help: help, isRepeatable: false)
    }

    /// An option with a value, such as `--limit <n>`.
    static func value(_ name: String, _ valueName: String, help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, shortName: nil, valueName: valueName, help: help, isRepeatable: repeatable)
    }

    /// How the option is written in usage lines and errors: `--limit <n>`, or `-h, --help` in help.
    var label: String {
        "--\(name)" + (valueName.map { " <\($0)>" } ?? "")
    }

    /// `--help` and `--version`, which every subcommand accepts.
    static let standard: [OptionSpec] = [
        .flag("version", help: "Show the version."),
        .flag("help", short: "h", help: "Show help information."),
    ]
}

/// A positional argument of a subcommand, such as `<path>`.
struct ArgumentSpec: Sendable {
    /// How many values the argument takes.
    enum Arity: Sendable {
        /// Exactly one.
        case one
        /// One, or none.
        case optional
        /// One or more: the rest of the positional arguments.
        case oneOrMore
        /// Any number: the rest of the positional arguments.
        case zeroOrMore
    }

    /// The name, shown as `<name>`.
    let name: String
    /// One sentence for the help text.
    let help: String
    /// How many values it takes.
    let arity: Arity

    /// A required argument.
    static func one(_ name: String, help: String) -> ArgumentSpec {
        ArgumentSpec(name: name, help: help, arity: .one)
    }

    /// How it is written in usage lines: `<path>`, `<id> ...` or `[<entity> ...]`.
    var usage: String {
        switch arity {
        case .one: "<\(name)>"
        case .optional: "[<\(name)>]"
        case .oneOrMore: "<\(name)> ..."
        case .zeroOrMore: "[<\(name)> ...]"
        }
    }
}

/// What a subcommand is called, takes and does, from which the parser and the help text are made.
struct CommandSpec: Sendable {
    /// The subcommand's name, such as `count`.
    let name: String
    /// One line for `kvtool help`.
    let abstract: String
    /// Paragraphs for the subcommand's help, after the options.
    let discussion: String?
    /// The positional arguments, in order.
    let arguments: [ArgumentSpec]
    /// The subcommand's own options; ``OptionSpec/standard`` are added.
    let options: [OptionSpec]

    /// The options the parser accepts: the subcommand's and the standard ones.
    var allOptions: [OptionSpec] {
        options + OptionSpec.standard
    }

    /// The usage line without its `Usage:` prefix: `kvtool count <path> <entity> [--where <field=value> ...]`.
    var usage: String {
        var parts = ["kvtool", name] + arguments.map(\.usage)
        for option in options {
            parts.append("[\(option.label)\(option.isRepeatable ? " ..." : "")]")
        }
        return parts.joined(separator: " ")
    }

    /// The full help text, in the manner of swift-argument-parser.
    var helpText: String {
        var text = "OVERVIEW: \(abstract)\n\nUSAGE: \(usage)\n"
        if !arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in arguments {
                text += HelpLayout.entry(label: "<\(argument.name)>", help: argument.help)
            }
        }
        text += "\nOPTIONS:\n"
        for option in allOptions {
            let label = option.shortName.map { "-\($0), \(option.label)" } ?? option.label
            text += HelpLayout.entry(label: label, help: option.help)
        }
        if let discussion {
            let paragraphs = discussion.split(separator: "\n").map {
                HelpLayout.wrap(String($0), width: HelpLayout.width, indent: 0)
            }
            text += "\n" + paragraphs.joined(separator: "\n\n") + "\n"
        }
        return text
    }
}

/// Lays out help text in two columns wrapped at 80 characters.
enum HelpLayout {
    /// The width help text is wrapped to.
    static let width = 80
    /// Where the help column starts.
    static let helpColumn = 26

    /// One entry of an ARGUMENTS, OPTIONS or SUBCOMMANDS list: the label, then the help wrapped beside it.
    static func entry(label: String, help: String) -> String {
        let head = "  " + label
        let body = wrap(help, width: width - helpColumn, indent: helpColumn)
        let bodyLines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = bodyLines.first else { return head + "\n" }
        let firstText = first.drop { $0 == " " }
        var text: String
        if head.count + 2 <= helpColumn {
            text = head + String(repeating: " ", count: helpColumn - head.count) + firstText + "\n"
        } else {
            text = head + "\n" + String(repeating: " ", count: helpColumn) + firstText + "\n"
        }
        for line in bodyLines.dropFirst() { text += line + "\n" }
        return text
    }

    /// Wraps each paragraph of `text` to `width` columns, each line indented by `indent` spaces.
    static func wrap(_ text: String, width: Int, indent: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let leading = paragraph.prefix { $0 == " " }
            var line = ""
            for word in paragraph.split(separator: " ") {
                if !line.isEmpty && line.count + 1 + word.count > width - leading.count {
                    lines.append(margin + leading + line)
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + word
            }
            lines.append(line.isEmpty ? "" : margin + leading + line)
        }
        return lines.joined(separator: "\n")
    }
}
