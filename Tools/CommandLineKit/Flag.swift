/// A flag: an option without a value, such as `--json`, read back as whether it was given.
///
/// Declared once among a command's ``ParsableArguments``, and read through the same declaration:
///
/// ```swift
/// struct Arguments: ParsableArguments {
///     let compact = Flag("compact", help: "Leave free pages out.")
/// }
/// let compacts = arguments[\.compact]
/// ```
package struct Flag: Sendable, Declared {
    let declaration: Declaration

    /// Declares a flag.
    ///
    /// - Parameters:
    ///   - name: The long name, kebab-case, without the dashes: `dry-run`.
    ///   - short: The one-letter name, if any.
    ///   - help: One sentence or two for the help text.
    package init(_ name: String, short: Character? = nil, help: String) {
        declaration = Declaration(kind: .flag(group: nil), name: name, shortName: short, help: help) { _ in }
    }

    /// `--json`, which every command that prints for scripts as well as for people takes.
    package static let json = Flag("json", help: "Print JSON for scripts instead of text for people.")

    var declarations: [Declaration] {
        [declaration]
    }
}
