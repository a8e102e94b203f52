import Foundation
import KVStore
import LMDB

/// The records of an entity that meet conditions (``RecordCondition``), read in bounded memory with short read
/// transactions: `kvtool list --where` and `kvtool count --where`.
///
/// The query reads one record for `id=…`. Otherwise the library's planner chooses the index, as it does for a fetch
/// (``CatalogQueryPlanner``, over the entity's ready, derivable indexes): keys for equalities, read as a fetch reads
/// them (``IndexCandidates``: every owner of a unique index's cut key, every duplicate of another), or a range of keys
/// for order and prefix conditions on a field, after equalities on the fields before it in a compound index, read in
/// key order, a chunk of entries per short read transaction that resumes after the last key and ID seen. Without a
/// usable index the record table is scanned in chunks. `!=` is always checked on records.
///
/// Every candidate is checked against every condition, except that ``count()`` counts index entries without reading
/// records when the index alone decides (the plan is then exact): the conditions are exactly the index's, each with a
/// value of its field's kind from the catalog, with one whole (uncut) key; or equalities on the first fields of the
/// index and order or prefix conditions on the next, with bounds short enough to be whole. Such a range decides cut
/// keys too: a cut key keeps more of its value's key than a bound holds, so it compares with the bound as the whole
/// key would.
///
/// A scan of the whole record table is audited (``RecordTableAudit``): a key that is not a record key is skipped and
/// reported, and so is a table whose own count of entries differs from what the scan read. The damage is returned
/// once the scan is over, so that the caller has every record that could be read, and must say the result is
/// incomplete.
///
/// ```swift
/// let query = try RecordQuery(store: store, entity: task, conditions: conditions)
/// let damage = try query.forEach { id, record in print(id); return true }
/// for problem in damage { print(problem.message) }
/// ```
package struct RecordQuery {
    /// How the candidates are found.
    package enum Plan: Equatable {
        /// No condition: every record.
        case all
        /// `id=…`: one record.
        case record(UUID)
        /// Keys of an index; `isExact` when the key alone decides (the index covers every condition, uncut).
        case index(IndexLookup, isExact: Bool)
        /// A scan of the record table.
        case scan
    }

    /// The store.
    package let store: InspectedStore
    /// The entity queried.
    package let entity: EntityCatalog
    /// The conditions, all of which a record meets.
    package let conditions: [RecordCondition]
    /// How candidates are found.
    package let plan: Plan
    /// The most records one read transaction visits.
    package let chunkSize: Int
    private let records: Table
    private let indexTable: Table?

    /// Plans a query.
    ///
    /// - Parameters:
    ///   - store: The store.
    ///   - entity: The entity queried.
    ///   - conditions: The conditions, all of which a record meets.
    ///   - chunkSize: The most records one read transaction visits.
    /// - Throws: ``InspectionError/damaged`` when the record table or the chosen index's table is missing; what LMDB
    ///   throws.
    package init(
        store: InspectedStore, entity: EntityCatalog, conditions: [RecordCondition], chunkSize: Int = 1000
    ) throws {
        self.store = store
        self.entity = entity
        self.conditions = conditions
        self.chunkSize = max(1, chunkSize)
        records = try store.recordTable(of: entity)
        plan = Self.plan(entity: entity, conditions: conditions)
        if case .index(let lookup, _) = plan {
            indexTable = try store.indexTable(of: entity, lookup.index)
        } else {
            indexTable = nil
        }
    }

    private static func plan(entity: EntityCatalog, conditions: [RecordCondition]) -> Plan {
        if conditions.isEmpty { return .all }
        for condition in conditions where condition.field == "id" && condition.operator == .equal {
            if case .uuid(let id) = condition.value { return .record(id) }
        }
        guard let lookup = CatalogQueryPlanner.lookup(for: conditions.flatMap(\.constraints), indexes: entity.indexes)
        else { return .scan }
        return .index(lookup, isExact: isExact(lookup, conditions: conditions))
    }

    /// Whether the index's entries alone decide the conditions (see the type's discussion).
    private static func isExact(_ lookup: IndexLookup, conditions: [RecordCondition]) -> Bool {
        let fields = lookup.index.fields
        guard conditions.allSatisfy({ !$0.isGuessed }) else { return false }
        switch lookup.reading {
        case .keys(let keys):
            // The planner keys an index only with conditions on its fields, one each: when there are no others, and
            // the key holds the whole value, every entry under it is a match.
            return conditions.allSatisfy { $0.operator == .equal } && conditions.count == fields.count
                && Set(conditions.map(\.field)) == Set(fields) && keys.count == 1
                && keys.allSatisfy { $0.count <= IndexKey.maximumLength }
        case .range:
            let fixed = fields.prefix(lookup.fixedFields)
            let equalities = conditions.filter { $0.operator == .equal }
            guard lookup.hasWholeBounds, equalities.count == fixed.count, Set(equalities.map(\.field)) == Set(fixed)
            else { return false }
            let others = conditions.filter { $0.operator != .equal }
            guard lookup.fixedFields < fields.count else { return others.isEmpty }
            return others.allSatisfy { $0.field == fields[lookup.fixedFields] && $0.operator != .notEqual }
        }
    }

    /// How the query finds its candidates, for messages and tests: `index projectID: 1 key (exact)`, `scan`... An
    /// index plan is the library's description of it (``IndexLookup/description``), followed by `(exact)` when the
    /// index alone decides the count.
    package var planDescription: String {
        switch plan {
        case .all: "all records"
        case .record: "record by id"
        case .index(let lookup, let isExact): lookup.description + (isExact ? " (exact)" : "")
        case .scan: "scan"
        }
    }

    /// The number of records that meet the conditions, with the damage a scan of the record table found (see
    /// ``forEach(_:)``): the count is then of the records that could be read.
    ///
    /// Without conditions the count is the table's own count of its entries, read without a scan.
    ///
    /// - Throws: ``InspectionError/damaged`` when a record does not decode; what LMDB throws.
    package func count() throws -> (count: Int, damage: [InspectionError]) {
        switch plan {
        case .all:
            return (try store.environment.read { txn in try txn.count(of: records) }, [])
        case .index(let lookup, true):
            guard let indexTable else { return (0, []) }
            guard case .keys(let keys) = lookup.reading else {
                var count = 0
                try forEachInRange(of: lookup, in: indexTable) { _, _ in
                    count += 1
                    return true
                }
                return (count, [])
            }
            guard let key = keys.first else { return (0, []) }
            let count = try store.environment.read { txn in
                try IndexCandidates.count(
                    underKey: IndexKey.finalized(key, hash: longKeyHash), in: indexTable,
                    isUnique: lookup.index.isUnique, txn: txn)
            }
            return (count, [])
        default:
            var count = 0
            let damage = try forEach { _, _ in
                count += 1
                return true
            }
            return (count, damage)
        }
    }

    /// Calls `body` with each record that meets the conditions, in ID order for a scan and for one key of an index,
    /// in the index's order (by key, then ID) for a range, and returns the damage a scan of the whole record table
    /// found in the table itself.
    ///
    /// A scan skips a key that is not a record key and goes on; once it is over, it compares the entries it read with
    /// the table's own count of them (``RecordTableAudit``). Each finding is an ``InspectionError/damaged`` naming
    /// the entity and suggesting `kvtool check`: the caller reports it after what `body` printed, and fails.
    ///
    /// - Parameter body: Receives the ID and the record; returns whether to go on. Runs inside a short read
    ///   transaction and must not `await`.
    /// - Returns: The damage found, empty when there is none (always, for a lookup of an ID or of index keys).
    /// - Throws: ``InspectionError/damaged`` when a record does not decode, which stops the walk; what LMDB or
    ///   `body` throws.
    package func forEach(_ body: (UUID, RecordValue) throws -> Bool) throws -> [InspectionError] {
        switch plan {
        case .all, .scan:
            var scan = ChunkedScan(environment: store.environment, table: records, chunkSize: chunkSize)
            var audit = RecordTableAudit(entity: entity.name, table: records, path: store.path)
            var isComplete = true
            try scan.forEach(beforeChunk: { txn in try audit.begin(txn) }) { _, key, value in
                guard let id = audit.visit(key) else { return true }
                let record = try RecordKey.decode(value, id: id, entity: entity)
                guard matches(record), try !body(id, record) else { return true }
                isComplete = false
                return false
            }
            return audit.damage(isComplete: isComplete)
        case .record(let id):
            let record = try store.environment.read { txn in
                try RecordKey.record(id, of: entity, in: records, txn: txn)
            }
            if let record, matches(record) { _ = try body(id, record) }
            return []
        case .index(let lookup, _):
            guard let indexTable else { return [] }
            if case .range = lookup.reading {
                try forEachInRange(of: lookup, in: indexTable) { txn, id in
                    guard let record = try RecordKey.record(id, of: entity, in: records, txn: txn), matches(record)
                    else { return true }
                    return try body(id, record)
                }
                return []
            }
            // A record found under several keys (elements of a multi-entry index) is visited once.
            var seen: Set<UUID>? = lookup.keys.count > 1 ? [] : nil
            for key in lookup.keys {
                let stored = IndexKey.finalized(key, hash: longKeyHash)
                guard
                    try forEachIndexed(key: stored, in: indexTable, isUnique: lookup.index.isUnique, seen: &seen, body)
                else { return [] }
            }
            return []
        }
    }

    private func matches(_ record: RecordValue) -> Bool {
        conditions.allSatisfy { $0.matches(record) }
    }

    /// How the store completes index keys that LMDB's limit cuts.
    private var longKeyHash: LongKeyHash {
        store.format.longKeyHash ?? .standard
    }

    /// Walks the entries of a range lookup in key order, a chunk of entries per read transaction resuming after the
    /// last key and ID seen, and calls `visit` with the transaction and each entry's ID until it returns false. A
    /// range never holds a record twice: ranges are not planned on multi-entry indexes.
    private func forEachInRange(
        of lookup: IndexLookup, in table: Table,
        _ visit: (borrowing Transaction, UUID) throws -> Bool
    ) throws {
        guard let (lower, upper) = lookup.storedRange(hash: longKeyHash) else { return }
        var scan = ChunkedScan(environment: store.environment, table: table, chunkSize: chunkSize, startKey: lower?.key)
        try scan.forEach { txn, key, value in
            if let upper, !upper.admits(key, isLower: false) { return false }
            if let lower, !lower.admits(key, isLower: true) { return true }
            // A value that is not an ID is damage that 'kvtool check' reports.
            guard let id = RecordKey.uuid(value) else { return true }
            return try visit(txn, id)
        }
    }

    /// Walks the IDs an index holds under the stored key `key`, a chunk of them per read transaction; returns
    /// whether to go on (`body` did not stop the walk).
    private func forEachIndexed(
        key: [UInt8], in table: Table, isUnique: Bool, seen: inout Set<UUID>?,
        _ body: (UUID, RecordValue) throws -> Bool
    ) throws -> Bool {
        var after: UUID?
        while true {
            var visited = 0
            var stopped = false
            let isWhole = try store.environment.read { txn in
                try IndexCandidates.forEachID(underKey: key, in: table, isUnique: isUnique, after: after, txn: txn) {
                    id in
                    visited += 1
                    after = id
                    if seen?.insert(id).inserted != false,
                        let record = try RecordKey.record(id, of: entity, in: records, txn: txn), matches(record),
                        try !body(id, record)
                    {
                        stopped = true
                        return false
                    }
                    return visited < chunkSize
                }
            }
            if stopped { return false }
            if isWhole { return true }
        }
    }
}
