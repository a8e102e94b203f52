/// Flags that each choose a value for the same setting, such as `--sync` and `--no-sync`: at most one may be given,
/// and none gives the default.
///
/// The usage line shows them as `[--sync | --no-sync]`; giving two is a usage error.
///
/// ```swift
/// let durability = FlagChoice(
///     default: Durability.noSync,
///     .flag("sync", value: .sync, help: "Durable commits."),
///     .flag("no-sync", value: .noSync, help: "Commits without waiting for the disk."))
/// let durability = arguments[\.durability]
/// ```
package struct FlagChoice<Value: Sendable & Equatable>: Sendable, Declared {
    /// One of the flags and the value it chooses.
    package struct Member: Sendable {
        let name: String
        let value: Value
        let help: String

        /// The flag `--name`, which chooses `value`.
        ///
        /// - Parameters:
        ///   - name: The long name, kebab-case, without the dashes.
        ///   - value: What the flag chooses.
        ///   - help: One sentence for the help text; `(default)` is added to the default's.
        package static func flag(_ name: String, value: Value, help: String) -> Member {
            Member(name: name, value: value, help: help)
        }
    }

    let members: [Member]
    let defaultValue: Value

    /// Declares the flags of a choice.
    ///
    /// - Parameters:
    ///   - defaultValue: The value when none of the flags is given.
    ///   - members: The flags, in the order help lists them.
    package init(default defaultValue: Value, _ members: Member...) {
        self.members = members
        self.defaultValue = defaultValue
    }

    var declarations: [Declaration] {
        let group = members.map { "--\($0.name)" }.joined(separator: " | ")
        return members.map { member in
            Declaration(
                kind: .flag(group: group), name: member.name, shortName: nil,
                help: member.value == defaultValue ? member.help + " (default)" : member.help
            ) { _ in }
        }
    }

    /// The value chosen by the flag given, if one was.
    func value(given: (String) -> Bool) -> Value {
        members.first { given("--\($0.name)") }?.value ?? defaultValue
    }
}
