/// A mistake in how a tool was called: an unknown option, a missing argument, a value that does not parse.
///
/// A tool prints it as `Error: <message>`, then the usage line of the command and where to find its help
/// (``CommandLineTool/usageReport(_:for:)``), and exits with ``ExitCode/usage``.
///
/// ```swift
/// throw UsageError("--resume and --abandon cannot be used together")
/// ```
package struct UsageError: Error, Equatable, Sendable {
    /// What is wrong, as one sentence without the `Error:` prefix.
    package let message: String

    /// Creates an error with its message.
    ///
    /// - Parameter message: What is wrong, without the `Error:` prefix or a final period.
    package init(_ message: String) {
        self.message = message
    }
}
