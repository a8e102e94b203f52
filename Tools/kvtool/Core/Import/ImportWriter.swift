import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// The second pass of an import: the validated input read again and written a chunk per write transaction, beside
/// any program that writes the store too.
///
/// A transaction holds at most `chunkSize` records and `chunkBytes` bytes of external values, so memory stays
/// bounded. A record whose values do not fit is written over several transactions: its chunks are staged (listed in
/// the entity's staging table under the import's ``ExternalWriteLock``, as the library stages streamed values) until
/// the transaction that writes the record. Each transaction:
///
/// - checks that the catalog's import entry is this import's, and reads the catalog's generation: when another
///   writer changed the catalog, the entries are read again, and the import stops if an entity it writes lost or
///   changed its relationships or external fields, or a migration began; a new index is opened and maintained;
/// - writes each record through ``RecordWriter`` (indexes through the library's derivation, field names interned and
///   their catalog entries written in the same transaction), and deletes the record of each delete line, if stored;
/// - records its changes as the store's history entry, when the store's history is on: each record written as
///   inserted or updated, each record deleted as deleted (with the values its entity keeps on deletion);
/// - writes the import entry (``ImportProgress``) with the line the next transaction starts at, or deletes it in the
///   last one.
final class ImportWriter {
    /// What the import wrote, once it is done.
    struct Totals {
        var written = 0
        var replaced = 0
        var skipped = 0
        var deleted = 0
        var notStored = 0
        var values = 0
        var valueBytes = 0
    }

    /// A record of the input on its way to the store, or a delete line's record (its disposition says which; it has
    /// no record and no chunks).
    private struct Unit {
        var work: RecordWriter.Work
        let disposition: ImportScratch.Disposition
        let offset: Int
        let chunkCount: Int
        /// The record's external values and their bytes.
        let values: (count: Int, bytes: Int)
        var received = 0

        var isComplete: Bool { received == chunkCount }
    }

    /// What one transaction did.
    private struct BatchResult {
        var totals = Totals()
        var staged: Set<String> = []
        var entries: [String: EntityCatalog] = [:]
        var generation: UInt64 = 0
        var progress: ImportProgress?
    }

    /// How many records a transaction writes between two ``LMDB/Environment/releaseMappedPages()``.
    static let recordsBetweenReleases = 64

    private let store: InspectedStore
    private let validation: ImportValidation
    private let policy: ConflictPolicy
    private let chunkSize: Int
    private let chunkBytes: Int
    private let lock: ExternalWriteLock
    private var entry: ImportProgress
    /// The token the catalog's import entry must have before the next transaction: the interrupted import's for a
    /// resume, `nil` (no entry) for a new import.
    private var expectedToken: UInt32?
    private var toCreate: [EntityCatalog]
    private var schemaState: SchemaState?
    private var tables: [String: RecordWriter.Tables] = [:]
    private var targets: [String: RecordWriter.Target] = [:]
    private var entries: [String: EntityCatalog] = [:]
    private var generation: UInt64?
    private var lineNumber: Int
    private(set) var totals = Totals()
    /// Whether a transaction committed.
    private(set) var hasCommitted = false

    /// Prepares the write pass.
    ///
    /// - Parameters:
    ///   - store: The store, open for writing.
    ///   - validation: The validation of the input, with its schema and scratch store.
    ///   - policy: What to do with stored IDs.
    ///   - chunkSize: Records per transaction.
    ///   - chunkBytes: Bytes of external values per transaction.
    ///   - lock: The lock the import holds while it runs.
    ///   - entry: The import entry to write: a new one, or the interrupted import's with this import's token.
    ///   - resumedToken: For a resume, the token of the interrupted import's entry.
    init(
        store: InspectedStore, validation: ImportValidation, policy: ConflictPolicy, chunkSize: Int, chunkBytes: Int,
        lock: ExternalWriteLock, entry: ImportProgress, resumedToken: UInt32?
    ) {
        self.store = store
        self.validation = validation
        self.policy = policy
        self.chunkSize = chunkSize
        self.chunkBytes = chunkBytes
        self.lock = lock
        self.entry = entry
        expectedToken = resumedToken
        lineNumber = entry.nextLine - 1
        toCreate = validation.schema.entitiesToCreate(withRecords: Set(validation.recordCounts.keys))
        createdEntities = toCreate.map(\.name)
        if resumedToken == nil { self.entry.createdEntities = createdEntities }
        schemaState = validation.schema.schemaState
        totals = Totals(
            written: entry.written, replaced: entry.replaced, skipped: entry.skipped, deleted: entry.deleted ?? 0,
            notStored: entry.notStored ?? 0, values: entry.values, valueBytes: entry.valueBytes)
    }

    /// The entities this run of the import creates (a resumed import's were created by its first run).
    let createdEntities: [String]

    /// Creates the tables of the entities the import creates and opens those of every entity it writes or
    /// references; LMDB wants tables opened before transactions begin.
    ///
    /// - Throws: ``ToolError`` when a table the catalog names is missing; what LMDB throws.
    func prepareTables() throws {
        let environment = store.environment
        try openHistoryTable()
        for catalog in toCreate {
            _ = try environment.openTable(named: Catalog.recordTableName(catalog.name), create: true)
            for index in catalog.indexes {
                _ = try environment.openTable(
                    named: Catalog.indexTableName(catalog.name, index.name),
                    options: Catalog.indexTableOptions(unique: index.isUnique), create: true)
            }
            if !catalog.external.isEmpty {
                for name in CatalogExternalValues.tableNames(entity: catalog.name) {
                    _ = try environment.openTable(named: name, create: true)
                }
            }
        }
        var names = Set(validation.recordCounts.keys)
        // The stored entities of delete lines; one the store lacks has nothing to delete.
        for name in validation.deleteCounts.keys where validation.schema[name]?.isNew == false { names.insert(name) }
        for name in names {
            for reference in validation.schema[name]?.references ?? [] { names.insert(reference.target) }
        }
        for name in names.sorted() {
            guard let entity = validation.schema[name] else { continue }
            try openTables(of: entity.catalog)
            guard let records = tables[name]?.records else { continue }
            targets[name] = RecordWriter.Target(records: records, ordinal: entity.ordinal)
        }
    }

    /// The store's history table, when the store has one: a store whose history is on records an entry for each
    /// of the import's transactions, as every writer of it does.
    private var historyTable: HistoryTable?

    /// Opens the history table when the file has one.
    private func openHistoryTable() throws {
        guard historyTable == nil else { return }
        do {
            historyTable = HistoryTable(table: try store.environment.openTable(named: Catalog.historyTableName))
        } catch LMDBError.notFound {
            historyTable = nil
        }
    }

    /// Records `changes` as the transaction's history entry when the store's history is on.
    ///
    /// - Parameter keptValues: The values the entities of deleted records keep on deletion, for their tombstones.
    /// - Throws: `MissingTables` when history was switched on after the import opened its tables.
    private func recordHistory(
        _ changes: [ChangeSet.Change], keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]],
        in txn: borrowing Transaction
    ) throws {
        guard !changes.isEmpty,
            let catalog = try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: store.catalog)
        else { return }
        guard let historyTable else { throw MissingTables() }
        _ = try historyTable.append(
            changes, keptValues: keptValues, author: "kvtool import", date: Date(), origin: 0,
            retention: catalog.retention,
            in: txn)
    }

    /// Opens the tables of an entry's entity, those of indexes added since included.
    private func openTables(of catalog: EntityCatalog) throws {
        let name = catalog.name
        let records = try tables[name]?.records ?? store.recordTable(of: catalog)
        var indexes = tables[name]?.indexes ?? [:]
        for index in catalog.indexes where indexes[index.name] == nil {
            indexes[index.name] = try store.indexTable(of: catalog, index)
        }
        var values = tables[name]?.values
        if values == nil && !catalog.external.isEmpty {
            values = try CatalogExternalValues.open(
                entity: name, environment: store.environment, isChecked: store.format.formatVersion >= 2)
        }
        tables[name] = RecordWriter.Tables(records: records, indexes: indexes, values: values)
    }

    /// Writes the input from the import entry's line on.
    ///
    /// - Parameters:
    ///   - reader: The input, positioned at the entry's offset.
    ///   - progress: The progress line.
    /// - Throws: ``ImportStop`` when another writer changed the store in a way the import cannot go on from;
    ///   ``ToolError`` when the input changed since it was checked; what LMDB throws (a full disk). Each is thrown
    ///   with the transactions before it committed, and the import entry saying where to resume.
    func run(_ reader: LineReader, progress: Progress) throws {
        var carried: Unit?
        while true {
            let (units, atEnd) = try validation.scratch.environment.read { scratchTxn in
                try fillBatch(reader, carried: carried, scratchTxn)
            }
            let last = units.last.flatMap { $0.isComplete ? nil : $0 }
            let next = last.map { ($0.work.line, $0.offset) } ?? (lineNumber + 1, reader.offset)
            let result = try commit(units, isFinal: atEnd && last == nil, next: next)
            carried = last
            if var open = carried {
                open.work.staged.formUnion(result.staged)
                carried = open
            }
            if atEnd && last == nil { break }
            progress.update(
                "import: line \(Formatting.grouped(lineNumber)), \(Formatting.count(totals.written, "record")) written")
        }
    }

    /// Reads the lines of the next transaction: records up to the chunk size, chunks up to the byte budget.
    private func fillBatch(
        _ reader: LineReader, carried: Unit?, _ scratchTxn: borrowing Transaction
    ) throws -> ([Unit], atEnd: Bool) {
        var units: [Unit] = []
        if var carried {
            carried.work.chunks = []
            units.append(carried)
        }
        var records = 0
        var bytes = 0
        while true {
            let isMidRecord = units.last.map { !$0.isComplete } ?? false
            if bytes >= chunkBytes || (records >= chunkSize && !isMidRecord) { return (units, false) }
            let offset = reader.offset
            guard let line = try reader.nextLine() else { return (units, true) }
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            let parsed: ImportLine
            do {
                parsed = try ImportLine.parse(line)
            } catch {
                throw changedInput()
            }
            switch parsed {
            case .header, .end:
                continue
            case .delete(let deleteLine):
                guard let entity = validation.schema[deleteLine.entity],
                    let (checkedLine, disposition) = try validation.scratch.record(
                        entity.ordinal, deleteLine.id, in: scratchTxn), checkedLine == lineNumber, disposition.isDelete
                else { throw changedInput() }
                units.append(
                    Unit(
                        work: RecordWriter.Work(entity: entity, id: deleteLine.id, line: lineNumber, record: .null),
                        disposition: disposition, offset: offset, chunkCount: 0, values: (0, 0)))
                records += 1
            case .record(let recordLine):
                guard let entity = validation.schema[recordLine.entity],
                    let record = try? entity.record(from: recordLine),
                    let (checkedLine, disposition) = try validation.scratch.record(
                        entity.ordinal, recordLine.id, in: scratchTxn), checkedLine == lineNumber
                else { throw changedInput() }
                let descriptors = entity.external.keys.compactMap { field in
                    ExternalDescriptor(RecordIndexKeys.value(of: field, in: record))
                }
                units.append(
                    Unit(
                        work: RecordWriter.Work(entity: entity, id: recordLine.id, line: lineNumber, record: record),
                        disposition: disposition, offset: offset,
                        chunkCount: descriptors.reduce(0) { $0 + $1.chunkCount },
                        values: (descriptors.count, descriptors.reduce(0) { $0 + $1.byteCount })))
                records += 1
            case .chunk(let chunk):
                guard var unit = units.popLast(), !unit.isComplete, chunk.id == unit.work.id else {
                    throw changedInput()
                }
                if unit.disposition.isWritten {
                    unit.work.chunks.append((chunk.field, chunk.index, chunk.data))
                    bytes += chunk.data.count
                }
                unit.received += 1
                units.append(unit)
            }
        }
    }

    private func changedInput() -> ToolError {
        ToolError(
            "Line \(Formatting.grouped(lineNumber)) of the input differs from what the validation read: the input "
                + "changed during the import")
    }

    /// Writes a batch in one transaction, running it again after opening tables that a program added meanwhile.
    private func commit(_ units: [Unit], isFinal: Bool, next: (line: Int, offset: Int)) throws -> BatchResult {
        let hasWork = !units.isEmpty || !toCreate.isEmpty || schemaState != nil || expectedToken != nil
        guard hasWork else { return BatchResult() }
        while true {
            do {
                let result = try validation.scratch.environment.read { scratchTxn in
                    try store.environment.write { txn in
                        try apply(units, isFinal: isFinal, next: next, scratchTxn, txn)
                    }
                }
                hasCommitted = true
                // The pages the transaction read through the memory maps stay resident until given back.
                if units.count >= Self.recordsBetweenReleases || !isFinal {
                    try store.environment.releaseMappedPages()
                    try validation.scratch.environment.releaseMappedPages()
                }
                toCreate = []
                schemaState = nil
                entries = result.entries
                generation = result.generation
                totals = result.totals
                if let progress = result.progress {
                    entry = progress
                    expectedToken = progress.lockToken
                } else {
                    expectedToken = nil
                }
                return result
            } catch is MissingTables {
                let current = try store.environment.read { txn in
                    try InspectedStore.readEntities(in: txn, catalog: store.catalog).entities
                }
                for catalog in current where tables[catalog.name] != nil { try openTables(of: catalog) }
                try openHistoryTable()
            }
        }
    }

    /// The body of a batch's write transaction, which may run twice (after the map grew): it changes nothing
    /// outside the transaction, and returns what it did.
    private func apply(
        _ units: [Unit], isFinal: Bool, next: (line: Int, offset: Int), _ scratchTxn: borrowing Transaction,
        _ txn: borrowing Transaction
    ) throws -> BatchResult {
        let firstLine = units.first?.work.line ?? next.line
        let stored = try ImportProgress.read(in: txn, catalog: store.catalog)
        guard stored?.lockToken == expectedToken, (stored == nil) == (expectedToken == nil) else {
            throw ImportStop(
                line: firstLine,
                message: "another import of this store started meanwhile (the catalog's import entry is not this "
                    + "import's)")
        }
        var entries = try currentEntries(txn, firstLine: firstLine)
        for catalog in toCreate {
            // A damaged entry is not among `entries`, and must not be written over either.
            let exists = try txn.containsKey(Catalog.entityKey(catalog.name), in: store.catalog)
            guard entries[catalog.name] == nil, !exists else {
                throw ImportStop(
                    line: firstLine,
                    message: "another writer created \(catalog.name) during the import; run the import again")
            }
            try Catalog.write(catalog, key: Catalog.entityKey(catalog.name), in: txn, table: store.catalog)
            entries[catalog.name] = catalog
        }
        if let schemaState {
            let current = try Catalog.schemaState(in: txn, table: store.catalog)
            if current.version == nil && current.history.isEmpty {
                try Catalog.write(schemaState, key: Catalog.schemaKey, in: txn, table: store.catalog)
            }
        }
        var result = BatchResult()
        result.totals = totals
        var changed: Set<String> = []
        var history: [ChangeSet.Change] = []
        var keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]] = [:]
        for (position, unit) in units.enumerated() {
            // Random index entries of a large chunk read many pages through the memory map: give them back as the
            // transaction goes, so that resident memory stays bounded by a part of the chunk.
            if position > 0 && position % Self.recordsBetweenReleases == 0 {
                try store.environment.releaseMappedPages()
            }
            let name = unit.work.entity.name
            if unit.disposition.isDelete {
                if let kept = try delete(unit, entries: entries, in: txn) {
                    result.totals.deleted += 1
                    history.append(ChangeSet.Change(.deleted, entity: name, id: unit.work.id))
                    if !kept.isEmpty { keptValues[ChangeSet.ModelID(entity: name, id: unit.work.id)] = kept }
                } else {
                    result.totals.notStored += 1
                }
                continue
            }
            guard unit.disposition.isWritten else {
                if unit.isComplete { result.totals.skipped += 1 }
                continue
            }
            guard var entry = entries[name], let tables = tables[name] else { throw MissingTables() }
            try checkSchema(of: unit.work.entity, against: entry, line: unit.work.line)
            let fields = entry.fields
            var writer = RecordWriter(tables: tables, policy: policy)
            writer.longKeyHash = store.format.longKeyHash ?? .standard
            do {
                if unit.isComplete {
                    switch try writer.write(
                        unit.work, entry: &entry, scratch: validation.scratch, scratchTxn: scratchTxn,
                        targets: targets, txn: txn)
                    {
                    case .written:
                        result.totals.written += 1
                        history.append(ChangeSet.Change(.inserted, entity: name, id: unit.work.id))
                    case .replaced:
                        result.totals.written += 1
                        result.totals.replaced += 1
                        history.append(ChangeSet.Change(.updated, entity: name, id: unit.work.id))
                    case .keptStored: result.totals.skipped += 1
                    }
                } else {
                    result.staged = try writer.stage(unit.work, entry: entry, lock: lock, txn: txn)
                }
            } catch let error as KVStoreError {
                throw ImportStop(line: unit.work.line, message: error.message)
            }
            if unit.isComplete {
                result.totals.values += unit.values.count
                result.totals.valueBytes += unit.values.bytes
            }
            if entry.fields != fields {
                entries[name] = entry
                changed.insert(name)
            }
        }
        for name in changed.sorted() {
            if let entry = entries[name] {
                try Catalog.write(entry, key: Catalog.entityKey(name), in: txn, table: store.catalog)
            }
        }
        try recordHistory(history, keptValues: keptValues, in: txn)
        if isFinal {
            try ImportProgress.delete(in: txn, catalog: store.catalog)
        } else {
            var progress = entry
            progress.nextLine = next.line
            progress.nextOffset = next.offset
            progress.written = result.totals.written
            progress.replaced = result.totals.replaced
            progress.skipped = result.totals.skipped
            progress.deleted = result.totals.deleted
            progress.notStored = result.totals.notStored
            progress.values = result.totals.values
            progress.valueBytes = result.totals.valueBytes
            progress.updated = Date()
            progress.lockToken = lock.token
            try progress.write(in: txn, catalog: store.catalog)
            result.progress = progress
        }
        result.entries = entries
        result.generation = try Catalog.generation(in: txn, table: store.catalog)
        return result
    }

    /// Deletes a delete line's record, if the store holds it.
    ///
    /// - Returns: The values its entity keeps on deletion, or `nil` when the store holds no such record (or no such
    ///   entity).
    /// - Throws: ``ImportStop`` when another writer created the entity meanwhile, or the index derivation fails;
    ///   `MissingTables` for an index added meanwhile; what LMDB throws.
    private func delete(
        _ unit: Unit, entries: [String: EntityCatalog], in txn: borrowing Transaction
    ) throws -> [(name: String, value: RecordValue)]? {
        let name = unit.work.entity.name
        guard let entry = entries[name] else { return nil }
        guard let tables = tables[name] else {
            throw ImportStop(
                line: unit.work.line,
                message: "another writer created \(name) during the import; resume it to check the rest of the input "
                    + "against the new schema")
        }
        var writer = RecordWriter(tables: tables, policy: policy)
        writer.longKeyHash = store.format.longKeyHash ?? .standard
        do {
            return try writer.delete(unit.work.id, entry: entry, txn: txn)
        } catch let error as KVStoreError {
            throw ImportStop(line: unit.work.line, message: error.message)
        }
    }

    /// The catalog's entries: those read after the last commit when the generation says nothing changed since,
    /// otherwise read again, with a migration under way refused.
    private func currentEntries(
        _ txn: borrowing Transaction, firstLine: Int
    ) throws -> [String: EntityCatalog] {
        let current = try Catalog.generation(in: txn, table: store.catalog)
        if current == generation { return entries }
        let state = try Catalog.schemaState(in: txn, table: store.catalog)
        if let migration = state.migration {
            throw ImportStop(
                line: firstLine,
                message: "a program began migrating the store from schema version \(migration.from) to "
                    + "\(migration.to); resume the import once the migration is done")
        }
        let (list, _) = try InspectedStore.readEntities(in: txn, catalog: store.catalog)
        return Dictionary(list.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Checks that an entity still has the relationships and external fields the validation checked its records
    /// against, and that every index has its table open.
    private func checkSchema(of entity: ImportEntity, against entry: EntityCatalog, line: Int) throws {
        guard entry.relationships == entity.catalog.relationships, entry.external == entity.catalog.external else {
            throw ImportStop(
                line: line,
                message: "another writer changed the relationships or external fields of \(entity.name) during the "
                    + "import; resume it to check the rest of the input against the new schema")
        }
        if let table = tables[entity.name], entry.indexes.contains(where: { table.indexes[$0.name] == nil }) {
            throw MissingTables()
        }
    }
}
