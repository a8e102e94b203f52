/// The problems an import's validation found, each with its line: the first ones by line, and how many in all.
///
/// Memory stays bounded whatever the input: beyond ``limit`` problems only the count grows. Problems are found out of
/// line order (a reference is resolved once the whole file is read), so those kept are the ``limit`` with the lowest
/// line numbers.
struct ImportProblems {
    /// One problem.
    struct Problem: Equatable {
        /// The line it is on, from 1.
        let line: Int
        /// What is wrong, without the line number.
        let message: String
    }

    /// How many problems are kept for the report.
    let limit: Int
    /// How many problems were found.
    private(set) var count = 0
    private var kept: [Problem] = []

    /// Creates an empty list that keeps `limit` problems.
    init(limit: Int = 100) {
        self.limit = limit
    }

    /// Adds a problem.
    mutating func add(line: Int, _ message: String) {
        count += 1
        kept.append(Problem(line: line, message: message))
        if kept.count >= 2 * limit { trim() }
    }

    /// The problems kept, in line order (in the order found within a line).
    var first: [Problem] {
        var copy = self
        copy.trim()
        return copy.kept
    }

    private mutating func trim() {
        let ordered = kept.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
        kept = ordered.prefix(limit).map(\.element)
    }
}
