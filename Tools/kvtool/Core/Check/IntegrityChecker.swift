import Foundation
import KVStore
import LMDB

/// A problem `check` found: an error, or a warning that leaves the store usable.
struct Problem: Equatable {
    /// How serious the problem is.
    enum Severity: String {
        /// The store is inconsistent.
        case error
        /// Worth knowing, but allowed (a dangling reference the delete rule allows, a leftover table).
        case warning
    }

    /// How serious the problem is.
    let severity: Severity
    /// The entity concerned, if any.
    let entity: String?
    /// The record concerned, if any.
    let id: UUID?
    /// The index or relationship concerned, if any.
    let part: String?
    /// The whole message, naming the entity, record and index.
    let message: String

    /// `error: Task 0190…: missing from index projectID (projectID = "…")`.
    var text: String {
        "\(severity.rawValue): \(message)"
    }

    /// The problem as a JSON object.
    var json: JSONValue {
        .object([
            JSONMember("severity", .string(severity.rawValue)),
            JSONMember("entity", entity.map(JSONValue.string) ?? .null),
            JSONMember("id", id.map { .string($0.uuidString) } ?? .null),
            JSONMember("part", part.map(JSONValue.string) ?? .null), JSONMember("message", .string(message)),
        ])
    }
}

/// The full integrity check of a store, streamed with bounded memory.
///
/// It checks the catalog (each entity has its record table, each index its table with the right flags, fields and
/// kinds fit the indexes and relationships, targets exist), then walks each record table in key order, a chunk per
/// read transaction (each record decodes, holds its key as `id`, has its index entries, unique values hold, its
/// references resolve), then each index table in key order (each entry points to a record that holds the indexed
/// value), then the chunks of each entity's external values (each descriptor's chunks are there with the right sizes,
/// and each chunk belongs to a descriptor). Lookups in the other direction are point reads, so no set of keys is ever
/// held in memory.
///
/// ```swift
/// let checker = IntegrityChecker(store: store, chunkSize: 1000) { problem in print(problem.text) }
/// try checker.run()
/// checker.errors == 0
/// ```
final class IntegrityChecker {
    /// What the check visited.
    struct Statistics: Equatable {
        /// Entities whose records were checked.
        var entities = 0
        /// Records read.
        var records = 0
        /// Index entries read, and expected entries looked up.
        var indexEntries = 0
        /// Relationship references resolved.
        var references = 0
        /// Read transactions used.
        var transactions = 0
        /// The most entries one read transaction visited.
        var largestChunk = 0
    }

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

    let store: InspectedStore
    let chunkSize: Int
    private let report: (Problem) -> Void
    private let progress: Progress?
    /// What the check visited so far; only the check changes it.
    var statistics = Statistics()
    /// The tables the page check found damaged, which the check does not read.
    private lazy var damagedTables = store.damagedTables
    /// The damaged tables reported as not checked.
    private var skippedTables: Set<String> = []
    /// Called after each chunk's read transaction with the statistics so far; for instrumentation.
    var chunkObserver: ((Statistics) -> Void)?
    /// Errors found so far.
    private(set) var errors = 0
    /// Warnings found so far.
    private(set) var warnings = 0

    /// Creates a check.
    ///
    /// - Parameters:
    ///   - store: The store to check.
    ///   - chunkSize: The most entries one read transaction visits.
    ///   - progress: A progress line to update, if any.
    ///   - report: Receives each problem as it is found.
    init(store: InspectedStore, chunkSize: Int, progress: Progress? = nil, report: @escaping (Problem) -> Void) {
        self.store = store
        self.chunkSize = chunkSize
        self.progress = progress
        self.report = report
    }

    /// Runs the whole check, but for the tables whose pages the store's page check found damaged: reading them through
    /// LMDB, which trusts its pages, could crash or read garbage.
    ///
    /// - Throws: What LMDB throws; problems of the store are reported, not thrown.
    func run() throws {
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
        progress?.finish()
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
    func reportPages() {
        for pageProblem in store.pages.problems {
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
        _ severity: Problem.Severity, _ message: String, entity: String? = nil, id: UUID? = nil, part: String? = nil
    ) {
        if severity == .error { errors += 1 } else { warnings += 1 }
        report(Problem(severity: severity, entity: entity, id: id, part: part, message: message))
    }

    /// Walks a table in chunks, counting transactions, with a progress line.
    func walk(
        _ table: Table, label: String,
        _ body: (borrowing Transaction, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var scan = ChunkedScan(environment: store.environment, table: table, chunkSize: chunkSize)
        try scan.forEach(afterChunk: { visited in
            progress?.update("check: \(label) \(Formatting.grouped(visited))")
            chunkObserver?(statistics)
        }) { txn, key, value in
            try body(txn, key, value)
            return true
        }
        statistics.transactions += scan.transactions
        statistics.largestChunk = max(statistics.largestChunk, scan.largestChunk)
    }
}
