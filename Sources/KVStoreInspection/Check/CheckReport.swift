/// What an integrity check found: every problem, with the counts and what was visited.
///
/// ```swift
/// let report = try StoreInspection.check(path: "/var/lib/app/store")
/// if !report.isConsistent {
///     for problem in report.errors { print(problem) }
/// }
/// ```
public struct CheckReport: Hashable, Sendable {
    /// The problems, in the order the check found them.
    public let problems: [CheckProblem]
    /// The counts of errors and warnings, and what the check visited.
    public let summary: CheckSummary

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - problems: The problems found.
    ///   - summary: The counts and what was visited.
    public init(problems: [CheckProblem], summary: CheckSummary) {
        self.problems = problems
        self.summary = summary
    }

    /// The problems that make the store inconsistent.
    public var errors: [CheckProblem] {
        problems.filter { $0.severity == .error }
    }

    /// The problems that leave the store usable.
    public var warnings: [CheckProblem] {
        problems.filter { $0.severity == .warning }
    }

    /// Whether the check found no error (warnings allowed): `kvtool check`'s exit status 0.
    public var isConsistent: Bool {
        summary.isConsistent
    }
}

/// The outcome of an integrity check without its problems: how many of each severity, and what was visited.
public struct CheckSummary: Hashable, Sendable {
    /// How many errors the check found.
    public var errorCount: Int
    /// How many warnings the check found.
    public var warningCount: Int
    /// What the check visited.
    public var statistics: CheckStatistics

    /// Creates a summary.
    ///
    /// - Parameters:
    ///   - errorCount: How many errors were found.
    ///   - warningCount: How many warnings were found.
    ///   - statistics: What was visited.
    public init(errorCount: Int = 0, warningCount: Int = 0, statistics: CheckStatistics = CheckStatistics()) {
        self.errorCount = errorCount
        self.warningCount = warningCount
        self.statistics = statistics
    }

    /// Whether the check found no error (warnings allowed).
    public var isConsistent: Bool {
        errorCount == 0
    }
}

/// What an integrity check visited.
public struct CheckStatistics: Hashable, Sendable {
    /// Entities whose records were checked.
    public var entities = 0
    /// Records read.
    public var records = 0
    /// Index entries read, and expected entries looked up.
    public var indexEntries = 0
    /// Relationship references resolved.
    public var references = 0
    /// Read transactions used by the walks of tables (the page check holds one more).
    public var transactions = 0
    /// The most entries one read transaction visited.
    public var largestChunk = 0

    /// Statistics of a check that visited nothing yet.
    public init() {}
}
