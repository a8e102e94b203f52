/// Inspects a KVStore store from its path alone, without the program's model types: the integrity check that
/// `kvtool check` runs, as an API, in the manner of GRDB's `checkForeignKeys()`.
///
/// The check reads every page of the file with a bounds-checked parser before LMDB reads anything (LMDB trusts its
/// pages), then the catalog, every record, index entry, reference and external value, a chunk of entries per short
/// read transaction: memory stays bounded and a live store is not held back. The store is opened read-only; one
/// without a lock file (a copy, the store of a stopped program) is read without one, so none is created. A store the
/// process has open already (through a `ModelContainer`) is checked through the same environment.
///
/// ```swift
/// import KVStoreInspection
///
/// let report = try StoreInspection.check(path: "/var/lib/app/store")
/// if !report.isConsistent {
///     for problem in report.errors { print(problem) }
/// }
/// ```
///
/// For a store that may hold very many problems, ``check(path:chunkSize:onProblem:)`` hands each one over as it is
/// found instead of collecting them.
public enum StoreInspection {
    /// The number of entries one read transaction visits unless the caller says otherwise.
    public static let defaultChunkSize = 1000

    /// Runs the full integrity check of the store at `path` and returns every problem it found.
    ///
    /// - Parameters:
    ///   - path: The store's directory (the one that holds `data.mdb`).
    ///   - chunkSize: The most entries one read transaction visits.
    /// - Returns: The problems, in the order they were found, with the counts and what was visited.
    /// - Throws: ``InspectionError`` when the store cannot be checked at all: ``InspectionError/notAStore``,
    ///   ``InspectionError/refused``, ``InspectionError/newerFormat``, ``InspectionError/unreadable`` (its meta pages,
    ///   main table or catalog are damaged), ``InspectionError/systemError``; ``InspectionError/changedWhileRead``
    ///   when a program opened a store that had no lock file while it was checked. `LMDBError` when a read fails.
    ///   Damage the check can report is a problem in the report, not an error.
    public static func check(path: String, chunkSize: Int = defaultChunkSize) throws -> CheckReport {
        var problems: [CheckProblem] = []
        let summary = try check(path: path, chunkSize: chunkSize) { problems.append($0) }
        return CheckReport(problems: problems, summary: summary)
    }

    /// Runs the full integrity check of the store at `path`, handing each problem to `onProblem` as it is found.
    ///
    /// - Parameters:
    ///   - path: The store's directory (the one that holds `data.mdb`).
    ///   - chunkSize: The most entries one read transaction visits.
    ///   - onProblem: Receives each problem, on the calling thread, while the check runs.
    /// - Returns: The counts of errors and warnings, and what was visited.
    /// - Throws: What ``check(path:chunkSize:)`` throws.
    public static func check(
        path: String, chunkSize: Int = defaultChunkSize, onProblem: (CheckProblem) -> Void
    ) throws -> CheckSummary {
        let store = try InspectedStore.open(path, pages: .full)
        defer { store.close() }
        let summary = try withoutActuallyEscaping(onProblem) { onProblem in
            let checker = IntegrityChecker(store: store, chunkSize: max(1, chunkSize), report: onProblem)
            try checker.run()
            return checker.summary
        }
        try store.checkNoProgramOpenedIt()
        return summary
    }
}
