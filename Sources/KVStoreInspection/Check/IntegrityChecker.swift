import Foundation
import KVStore
import LMDB

/// The full integrity check of a store, streamed with bounded memory: the engine of ``StoreInspection/check(path:chunkSize:)``
/// and of `kvtool check`.
///
/// It reports what the page check found (damaged pages, pages neither used nor free), then checks the catalog (each
/// entity has its record table, each index its table with the right flags, fields and kinds fit the indexes and
/// relationships, targets exist), then walks each record table in key order, a chunk per read transaction (each
/// record decodes, holds its key as `id`, has its index entries, unique values hold, its references resolve), then
/// each index table in key order (each entry points to a record that holds the indexed value), then the chunks of
/// each entity's external values (each descriptor's chunks are there with the right sizes, and each chunk belongs to a
/// descriptor), then the change history when the store records one (each entry decodes, positions have no gaps). Lookups in the other direction are point reads, so no set of keys is ever held in memory. Tables the
/// page check found damaged are reported and not read.
///
/// ```swift
/// let checker = IntegrityChecker(store: store, chunkSize: 1000) { problem in print(problem) }
/// try checker.run()
/// checker.summary.isConsistent
/// ```
package final class IntegrityChecker {
    /// A relationship field whose IDs must name records of the target.
    struct Reference {
        let relationship: RelationshipCatalog
        let field: String
        let target: Table
        /// Why a dangling ID is only a warning (`dangling allowed`, a `noAction` delete rule), or `nil` when it is
        /// an error.
        let tolerance: String?
    }

    /// An entity with the tables the catalog check found for it.
    struct CheckedEntity {
        let entity: EntityCatalog
        let records: Table
        let indexes: [(catalog: IndexCatalog, table: Table)]
        let references: [Reference]
        let kinds: [String: ValueKind]
    }

    /// The store checked.
    package let store: InspectedStore
    /// The most entries one read transaction visits.
    package let chunkSize: Int
    private let report: (CheckProblem) -> Void
    /// What the check visited so far; only the check changes it.
    package internal(set) var statistics = CheckStatistics()
    /// Called after each chunk's read transaction, for progress lines and instrumentation.
    package var progress: ((CheckProgress) -> Void)?
    /// The tables the page check found damaged, which the check does not read.
    private lazy var damagedTables = store.damagedTables
    /// The damaged tables reported as not checked.
    private var skippedTables: Set<String> = []
    /// Errors found so far.
    package private(set) var errors = 0
    /// Warnings found so far.
    package private(set) var warnings = 0

    /// Creates a check.
    ///
    /// - Parameters:
    ///   - store: The store to check, opened with `pages: .full` for the whole page check (with `.roots`, only the
    ///     meta pages and table roots were checked).
    ///   - chunkSize: The most entries one read transaction visits.
    ///   - report: Receives each problem as it is found.
    package init(store: InspectedStore, chunkSize: Int, report: @escaping (CheckProblem) -> Void) {
        self.store = store
        self.chunkSize = chunkSize
        self.report = report
    }

    /// The counts so far, and what the check visited.
    package var summary: CheckSummary {
        CheckSummary(errorCount: errors, warningCount: warnings, statistics: statistics)
    }

    /// Runs the whole check: reports what the store's page check found, then checks everything but the tables whose
    /// pages it found damaged, since reading them through LMDB, which trusts its pages, could crash or read garbage.
    ///
    /// - Throws: What LMDB throws; problems of the store are reported, not thrown.
    package func run() throws {
        reportPages()
        for entity in try checkCatalog() {
            statistics.entities += 1
            let name = entity.entity.name
            guard isReadable(Catalog.recordTableName(name), of: name) else { continue }
            try checkRecords(of: entity)
            let external = [
                Catalog.externalTableName(name), Catalog.checksumTableName(name), Catalog.stagingTableName(name),
            ]
            if external.allSatisfy({ isReadable($0, of: name) }) { try checkExternalValues(of: entity) }
            for index in entity.indexes { try checkIndex(index.catalog, table: index.table, of: entity) }
        }
        try checkHistory()
    }

    /// Whether the check may read `table` through LMDB: not when the page check found it damaged. The first time a
    /// damaged table is asked for, reports that its entries were not checked.
    ///
    /// - Parameters:
    ///   - table: The table's name.
    ///   - entity: The entity the table belongs to, for the report.
    func isReadable(_ table: String, of entity: String) -> Bool {
        guard damagedTables.contains(table) else { return true }
        if skippedTables.insert(table).inserted {
            problem(
                .error, "\(entity): the table '\(table)' has damaged pages; its entries were not checked",
                entity: entity, part: table)
        }
        return false
    }

    /// Reports what the page check found: damaged pages as errors, naming their tables, and pages neither used nor
    /// free as warnings (a killed writer can leave some; LMDB reuses them).
    private func reportPages() {
        for pageProblem in store.pages.problems {
            // A file that ends before its snapshot's last page, every page past the end free, is how LMDB leaves
            // pages a transaction allocated and freed: nothing to warn about.
            if pageProblem.severity == .note && pageProblem.kind == .truncatedFile { continue }
            let table = pageProblem.owner.tableName
            let entity = table.flatMap { name -> String? in
                let parts = name.split(separator: "/")
                return parts.count >= 2 ? String(parts[1]) : nil
            }
            problem(
                pageProblem.severity == .damage ? .error : .warning, "page check: \(pageProblem)", entity: entity,
                part: table)
        }
        if store.pages.omittedProblemCount > 0 {
            problem(.error, "page check: \(store.pages.omittedProblemCount) more problems not listed")
        }
    }

    /// Reports a problem.
    func problem(
        _ severity: CheckProblem.Severity, _ message: String, entity: String? = nil, id: UUID? = nil,
        part: String? = nil
    ) {
        if severity == .error { errors += 1 } else { warnings += 1 }
        report(CheckProblem(severity: severity, entity: entity, id: id, part: part, message: message))
    }

    /// Walks a table in chunks, counting transactions, with a progress line.
    func walk(
        _ table: Table, label: String,
        _ body: (borrowing Transaction, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var scan = ChunkedScan(environment: store.environment, table: table, chunkSize: chunkSize)
        try scan.forEach(afterChunk: { visited in
            progress?(CheckProgress(label: label, visited: visited, statistics: statistics))
        }) { txn, key, value in
            try body(txn, key, value)
            return true
        }
        statistics.transactions += scan.transactions
        statistics.largestChunk = max(statistics.largestChunk, scan.largestChunk)
    }
}

/// How far a check got: sent after each chunk of a table's walk.
package struct CheckProgress {
    /// What is walked: an entity's records (`Task`), an index (`Task.projectID`), external values or chunks.
    package let label: String
    /// The entries of that table visited so far.
    package let visited: Int
    /// What the whole check visited so far.
    package let statistics: CheckStatistics
}
