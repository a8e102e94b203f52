/// The exit status of a tool, with the meanings every tool of this package gives them.
///
/// 0 is success, 1 a failure, 64 a usage mistake (`EX_USAGE` in sysexits.h). A tool may give other statuses a meaning
/// of its own and says so in its help: `kvtool check` exits 2 when the store could not be read at all, `kvtool import`
/// 65 for an input that does not check out (`EX_DATAERR`).
///
/// ```swift
/// exit(tool.main(arguments).rawValue)
/// ```
package struct ExitCode: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral {
    /// The status the process exits with.
    package var rawValue: Int32

    /// The status `rawValue`.
    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The status written as a number: `return 2`.
    package init(integerLiteral value: Int32) {
        rawValue = value
    }

    /// The work was done (help and the version count as such).
    package static let success: ExitCode = 0
    /// The work failed; an `Error:` line said why.
    package static let failure: ExitCode = 1
    /// The tool was called wrongly; the error, the usage line and where to find help were printed.
    package static let usage: ExitCode = 64
}
