import CommandLineKit

/// A failure while running a subcommand, such as a missing store or an unknown entity: exit status 1.
struct ToolError: Error, Equatable {
    /// What happened and, where it helps, what to do.
    let message: String

    /// Creates an error with its message.
    init(_ message: String) {
        self.message = message
    }
}

/// A mistake in how kvtool was called, found while parsing or later (a `--where` value that does not parse as its
/// field's kind): printed with the subcommand's usage line, exit status 64. The kit's type, named here so that every
/// file of kvtool throws it without importing the kit.
typealias UsageError = CommandLineKit.UsageError
