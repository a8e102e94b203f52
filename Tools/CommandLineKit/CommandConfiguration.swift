/// What a command is called and what its help says about it, in the manner of swift-argument-parser's
/// `CommandConfiguration`.
///
/// ```swift
/// static let configuration = CommandConfiguration(
///     name: "count", abstract: "Count an entity's records.", discussion: "Without conditions ...")
/// ```
package struct CommandConfiguration: Sendable {
    /// The subcommand's name (`count`), or the tool's for a tool that is one command (`kvbench`).
    package var name: String
    /// One line, for the tool's list of subcommands and the OVERVIEW of the command's help.
    package var abstract: String
    /// Paragraphs for the end of the command's help, one per line of the text; wrapped to the help's width.
    package var discussion: String?
    /// Whether the tool's help leaves the subcommand out (it still parses, and has help of its own).
    package var isHidden: Bool

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - name: The subcommand's name, or the tool's.
    ///   - abstract: One line that says what the command does.
    ///   - discussion: Paragraphs for the end of the help, one per line.
    ///   - isHidden: Whether the tool's help leaves the subcommand out, as for the child processes a tool starts.
    package init(name: String, abstract: String, discussion: String? = nil, isHidden: Bool = false) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.isHidden = isHidden
    }
}
