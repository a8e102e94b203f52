import Foundation
import KVStore
import LMDB

/// The records of an entity that meet `--where` conditions.
///
/// The query reads one record for `id=…`; looks a key up in an index when a ready index has a condition on each of
/// its fields (the one covering the most conditions); and otherwise scans the record table in chunks. Every
/// candidate is checked against every condition, except that ``count()`` counts an index key's entries without
/// reading records when the index covers all the conditions with a whole (uncut) key.
///
/// ```swift
/// let query = try RecordQuery(store: store, entity: task, conditions: conditions)
/// try query.forEach { id, record in print(id); return true }
/// ```
struct RecordQuery {
    /// How the candidates are found.
    enum Plan: Equatable {
        /// No condition: every record.
        case all
        /// `id=…`: one record.
        case record(UUID)
        /// One key of an index; `isExact` when the key alone decides (the index covers every condition, uncut).
        case index(IndexCatalog, key: [UInt8], isExact: Bool)
        /// A scan of the record table.
        case scan
    }

    /// The store.
    let store: InspectedStore
    /// The entity queried.
    let entity: EntityCatalog
    /// The conditions, all of which a record meets.
    let conditions: [Condition]
    /// How candidates are found.
    let plan: Plan
    /// The most records one read transaction visits.
    let chunkSize: Int
    private let records: Table
    private let indexTable: Table?

    /// Plans a query.
    ///
    /// - Throws: ``ToolError`` when a table is missing.
    init(store: InspectedStore, entity: EntityCatalog, conditions: [Condition], chunkSize: Int = 1000) throws {
        self.store = store
        self.entity = entity
        self.conditions = conditions
        self.chunkSize = chunkSize
        records = try store.recordTable(of: entity)
        plan = Self.plan(entity: entity, conditions: conditions)
        if case .index(let index, _, _) = plan {
            indexTable = try store.indexTable(of: entity, index)
        } else {
            indexTable = nil
        }
    }

    private static func plan(entity: EntityCatalog, conditions: [Condition]) -> Plan {
        if conditions.isEmpty { return .all }
        for condition in conditions where condition.field == "id" {
            if case .uuid(let id) = condition.value { return .record(id) }
        }
        var best: (index: IndexCatalog, key: [UInt8], isExact: Bool)?
        for index in entity.indexes where index.isReady && index.fields.count > (best?.index.fields.count ?? 0) {
            let covering = index.fields.compactMap { field in conditions.first { $0.field == field } }
            guard covering.count == index.fields.count, covering.allSatisfy({ usable($0, in: index) }) else { continue }
            let components = covering.map(\.value)
            guard let key = try? RecordIndexKeys.key(for: components, fields: index.fields) else { continue }
            let isExact = conditions.count == index.fields.count && !IndexEntries.isTruncated(components)
            best = (index, key, isExact)
        }
        return best.map { .index($0.index, key: $0.key, isExact: $0.isExact) } ?? .scan
    }

    /// Whether a condition's value can be looked up in an index: one of the kind the catalog gives, or, in a
    /// multi-entry index, a UUID or a string element.
    private static func usable(_ condition: Condition, in index: IndexCatalog) -> Bool {
        if index.isMultiEntry {
            return condition.value.kind == .uuid || condition.value.kind == .string
        }
        return !condition.isGuessed || condition.value == .null
    }

    /// How the query finds its candidates, for messages and tests: `index projectID (exact)`, `scan`...
    var planDescription: String {
        switch plan {
        case .all: "all records"
        case .record: "record by id"
        case .index(let index, _, let isExact): "index \(index.name)\(isExact ? " (exact)" : "")"
        case .scan: "scan"
        }
    }

    /// The number of records that meet the conditions.
    ///
    /// - Throws: ``ToolError`` when a record does not decode; what LMDB throws.
    func count() throws -> Int {
        switch plan {
        case .all:
            return try store.environment.read { txn in try txn.count(of: records) }
        case .index(_, let key, true):
            guard let indexTable else { return 0 }
            return try store.environment.read { txn in
                guard indexTable.options.contains(.dupSort) else {
                    return try txn.containsKey(key, in: indexTable) ? 1 : 0
                }
                return try txn.withCursor(on: indexTable) { cursor in
                    try cursor.seek(to: key) ? try cursor.duplicateCount() : 0
                }
            }
        default:
            var count = 0
            try forEach { _, _ in
                count += 1
                return true
            }
            return count
        }
    }

    /// Calls `body` with each record that meets the conditions, in ID order.
    ///
    /// - Parameter body: Receives the ID and the record; returns whether to go on. Runs inside a short read
    ///   transaction and must not `await`.
    /// - Throws: ``ToolError`` when a record does not decode; what LMDB or `body` throws.
    func forEach(_ body: (UUID, RecordValue) throws -> Bool) throws {
        switch plan {
        case .all, .scan:
            var scan = ChunkedScan(environment: store.environment, table: records, chunkSize: chunkSize)
            try scan.forEach { _, key, value in
                guard let id = RecordKey.uuid(key) else { return true }
                let record = try RecordKey.decode(value, id: id, entity: entity)
                return try !matches(record) || body(id, record)
            }
        case .record(let id):
            let record = try store.environment.read { txn in
                try RecordKey.record(id, of: entity, in: records, txn: txn)
            }
            if let record, matches(record) { _ = try body(id, record) }
        case .index(_, let key, _):
            guard let indexTable else { return }
            try forEachIndexed(key: key, in: indexTable, body)
        }
    }

    private func matches(_ record: RecordValue) -> Bool {
        conditions.allSatisfy { $0.matches(record) }
    }

    /// Walks the IDs an index holds under `key`, a chunk of them per read transaction.
    private func forEachIndexed(key: [UInt8], in table: Table, _ body: (UUID, RecordValue) throws -> Bool) throws {
        let isDupSort = table.options.contains(.dupSort)
        var resume: [UInt8]?
        var isFirstChunk = true
        while isFirstChunk || resume != nil {
            isFirstChunk = false
            let after = resume
            resume = try store.environment.read { txn -> [UInt8]? in
                try txn.withCursor(on: table) { cursor -> [UInt8]? in
                    var found: Bool
                    if let after {
                        found = try cursor.seek(to: key, valueAtOrAfter: after)
                        if found, try cursor.withCurrent({ _, value in value.elementsEqual(after) }) == true {
                            found = try cursor.nextDuplicate()
                        }
                    } else {
                        found = try cursor.seek(to: key)
                    }
                    var visited = 0
                    while found, let idBytes = try cursor.withCurrent({ _, value in Array(value) }) {
                        visited += 1
                        if let id = idBytes.withUnsafeBytes(RecordKey.uuid),
                            let record = try RecordKey.record(id, of: entity, in: records, txn: txn), matches(record),
                            try !body(id, record)
                        {
                            return nil
                        }
                        if visited == chunkSize && isDupSort { return idBytes }
                        found = isDupSort ? try cursor.nextDuplicate() : false
                    }
                    return nil
                }
            }
        }
    }
}
