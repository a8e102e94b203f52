/// A command's configuration and declarations, without its Swift type: what help, usage lines and the parser need.
///
/// ``ParsableCommand/signature`` makes one; a ``CommandLineTool`` keeps one per subcommand.
package struct CommandSignature: Sendable {
    /// The command's name and help.
    package let configuration: CommandConfiguration
    /// The command's declarations, in the order of their properties.
    let declarations: [Declaration]

    /// Creates the signature of a command.
    init(configuration: CommandConfiguration, declarations: [Declaration]) {
        self.configuration = configuration
        self.declarations = declarations
    }

    /// The positional arguments, in order.
    var arguments: [Declaration] {
        declarations.filter(\.isArgument)
    }

    /// The flags and options, in order.
    var options: [Declaration] {
        declarations.filter { !$0.isArgument }
    }

    /// The words of the usage line after the command's name: the arguments, then the options, the flags of a
    /// ``FlagChoice`` together as `[--sync | --no-sync]`.
    var usageParts: [String] {
        var parts = arguments.map(\.usage)
        var groupsShown: Set<String> = []
        for option in options {
            guard case .flag(let group?) = option.kind else {
                parts.append(option.usage)
                continue
            }
            if groupsShown.insert(group).inserted { parts.append("[\(group)]") }
        }
        return parts
    }

    /// Mistakes in the declarations, which a test of each tool expects to be none: two declarations with one name
    /// or one short name (`help`, `version` and `h` included), or positional arguments that cannot all be filled
    /// (one after an argument that takes the rest, a required one after an optional one).
    package var problems: [String] {
        var problems: [String] = []
        var keys: Set<String> = ["--help", "--version"]
        var shortNames: Set<Character> = ["h"]
        for declaration in declarations {
            if !keys.insert(declaration.key).inserted {
                problems.append("'\(declaration.key)' is declared twice")
            }
            if let short = declaration.shortName, !shortNames.insert(short).inserted {
                problems.append("'-\(short)' is declared twice")
            }
        }
        var previous: Declaration.Arity?
        for argument in arguments {
            guard case .argument(let arity) = argument.kind else { continue }
            switch (previous, arity) {
            case (.zeroOrMore?, _), (.oneOrMore?, _):
                problems.append("'\(argument.label)' follows an argument that takes the rest")
            case (.optional?, .one), (.optional?, .oneOrMore):
                problems.append("'\(argument.label)' is required but follows an optional argument")
            default: break
            }
            previous = arity
        }
        return problems
    }
}
