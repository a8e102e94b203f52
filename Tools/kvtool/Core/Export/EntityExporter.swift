import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// Writes one entity's lines of an export: each record, followed by the chunks of its external values.
///
/// Records are read in key order, a chunk of them per short read transaction; a record and its chunks are read in the
/// same transaction, so what is written is one consistent state of the record even while a program writes. The lines
/// of a transaction are written out once it has ended, so that a slow reader of the output never holds it open, and a
/// transaction stops early once its lines reach ``textBudget``, so that memory stays bounded. A record whose external
/// values are larger than that has a read transaction of its own, and its chunk lines are written as they are read,
/// one chunk in memory at a time, like `kvtool extract`: that transaction stays open while the value is written out.
/// After each transaction the pages it read through the memory map are given back to the kernel, so that resident
/// memory does not grow with the store.
struct EntityExporter {
    /// The most text one read transaction gathers before it is written out.
    static let textBudget = 16 << 20

    let store: InspectedStore
    let entity: EntityCatalog
    /// The most records one read transaction visits.
    let chunkSize: Int

    /// What an entity's export wrote, and the damage it found in the record table itself.
    struct Outcome {
        /// What the lines hold, for the end line.
        var summary: ExportEnd.Entity
        /// Keys that are not record keys (skipped), or a count of entries that differs from what was read: the
        /// export is incomplete.
        var damage: [InspectionError]
    }

    /// Writes the entity's lines to `sink`, and returns what they hold, with the damage found in the record table
    /// itself (``RecordTableAudit``): a key that is not a record key is skipped, and the export goes on.
    ///
    /// - Parameters:
    ///   - sink: Where the lines go.
    ///   - progress: The progress line to update.
    ///   - checkOutput: Throws the first failed write to the output, so that the export stops early.
    /// - Throws: ``InspectionError/damaged`` for a record that does not decode, ``ToolError`` for an external value
    ///   that is not fully stored (run `kvtool check`); ``OutputFailure``; what LMDB throws.
    func export(
        to sink: any TextSink, progress: Progress, checkOutput: () throws -> Void
    ) throws -> Outcome {
        let records = try store.recordTable(of: entity)
        let values = try externalValues()
        var audit = RecordTableAudit(entity: entity.name, table: records, path: store.path)
        var summary = ExportEnd.Entity(name: entity.name)
        var held = HeldFields(entity: entity)
        var text = ""
        var writer = LineWriter(entity: entity, values: values)
        var after: [UInt8]?
        var generation: UInt64?
        while true {
            var largeRecord = false
            let (visited, last) = try store.environment.read { txn -> (Int, [UInt8]?) in
                try followCatalog(in: txn, generation: &generation)
                try audit.begin(txn)
                return try txn.withCursor(on: records) { cursor -> (Int, [UInt8]?) in
                    var found = try after.map { try cursor.seek(atOrAfter: $0) } ?? cursor.first()
                    if found, let after, try cursor.withCurrent({ key, _ in key.elementsEqual(after) }) == true {
                        found = try cursor.next()
                    }
                    var visited = 0
                    var last: [UInt8]?
                    while found && visited < chunkSize && text.utf8.count < Self.textBudget {
                        let stop = try cursor.withCurrent { key, value -> Bool in
                            guard let id = RecordKey.uuid(key) else {
                                // Counted and skipped: reported once the export is over.
                                _ = audit.visit(key)
                                visited += 1
                                last = Array(key)
                                return false
                            }
                            let record = try RecordKey.decode(value, id: id, entity: entity)
                            let size = externalSize(of: record)
                            if size > Self.textBudget / 2 {
                                // Its own transaction: the first of the next one.
                                guard visited == 0 else { return true }
                                largeRecord = true
                                text += writer.recordLine(id: id, record: record)
                                sink.write(text)
                                text = ""
                                try checkOutput()
                                try writer.streamChunks(of: record, id: id, txn: txn, to: sink) {
                                    try checkOutput()
                                    try store.environment.releaseMappedPages()
                                }
                            } else {
                                text += writer.recordLine(id: id, record: record)
                                try writer.appendChunks(of: record, id: id, txn: txn, to: &text)
                            }
                            held.note(record)
                            _ = audit.visit(key)
                            summary.records += 1
                            visited += 1
                            last = Array(key)
                            return largeRecord
                        }
                        if stop == true { break }
                        found = try cursor.next()
                    }
                    return (visited, found ? last : nil)
                }
            }
            sink.write(text)
            text = ""
            try checkOutput()
            // What the transaction read through the memory map stays resident until given back (when more follows).
            if last != nil { try store.environment.releaseMappedPages() }
            progress.update("export: \(entity.name) \(Formatting.count(summary.records, "record"))")
            guard let last, visited > 0 else { break }
            after = last
        }
        summary.chunks = writer.chunks
        if summary.records > 0 { summary.required = held.required }
        return Outcome(summary: summary, damage: audit.damage(isComplete: true))
    }

    /// Checks, when the catalog changed since the last look, that the entity still has the fields the header gave
    /// it: a program that interned new names meanwhile writes records the header cannot describe.
    ///
    /// - Throws: ``ToolError`` when the entity was removed or gained fields.
    private func followCatalog(in txn: borrowing Transaction, generation: inout UInt64?) throws {
        let current = try Catalog.generation(in: txn, table: store.catalog)
        guard current != generation else { return }
        generation = current
        let key = Catalog.entityKey(entity.name)
        guard let stored = try Catalog.read(EntityCatalog.self, key: key, in: txn, table: store.catalog) else {
            throw ToolError("\(entity.name) was removed from the store during the export; the export is incomplete")
        }
        guard stored.fields.names == entity.fields.names, stored.fields.topLevelNames == entity.fields.topLevelNames
        else {
            throw ToolError(
                "A program added fields to \(entity.name) during the export, which its header does not describe; "
                    + "export again")
        }
    }

    /// The bytes of a record's external values.
    private func externalSize(of record: RecordValue) -> Int {
        entity.external.reduce(0) { total, field in
            total + (ExternalDescriptor(RecordIndexKeys.value(of: field.name, in: record))?.byteCount ?? 0)
        }
    }

    private func externalValues() throws -> CatalogExternalValues? {
        try Self.externalValues(of: entity, in: store)
    }

    /// The external values of `entity`, or `nil` when it has no external field.
    ///
    /// - Throws: ``KVStoreError/damaged`` naming a table the file lacks.
    static func externalValues(of entity: EntityCatalog, in store: InspectedStore) throws -> CatalogExternalValues? {
        guard !entity.external.isEmpty else { return nil }
        return try CatalogExternalValues.open(
            entity: entity.name, environment: store.environment, isChecked: store.format.formatVersion >= 2)
    }
}

/// The top-level fields that every record of an entity written so far holds a value other than null for: the end
/// line's `required`.
struct HeldFields {
    let entity: EntityCatalog
    /// Whether every record so far holds a value for each field id, indexed by id - 1.
    private var held: [Bool]

    init(entity: EntityCatalog) {
        self.entity = entity
        held = [Bool](repeating: true, count: entity.fields.count)
    }

    /// Marks the fields a record holds no value for.
    mutating func note(_ record: RecordValue) {
        guard case .object(let entries) = record else {
            for index in held.indices { held[index] = false }
            return
        }
        var present = [Bool](repeating: false, count: held.count)
        for entry in entries where entry.value != .null {
            if let id = entity.fields.existingID(for: entry.name, in: .topLevel) { present[Int(id) - 1] = true }
        }
        for index in held.indices where !present[index] { held[index] = false }
    }

    /// The fields every record noted holds, in the catalog's order (all of them when none was noted).
    var required: [String] {
        held.indices.compactMap { offset in
            held[offset] ? entity.fields.name(for: UInt32(offset + 1), in: .topLevel) : nil
        }
    }
}

/// The text of an entity's record and chunk lines.
struct LineWriter {
    let entity: EntityCatalog
    let values: CatalogExternalValues?
    let kinds: [String: ValueKind]
    let prefix: String
    let chunkPrefix: String
    /// The chunk lines written.
    private(set) var chunks = 0

    init(entity: EntityCatalog, values: CatalogExternalValues?) {
        self.entity = entity
        self.values = values
        kinds = RecordJSON.kinds(of: entity.fields)
        let name = JSONValue.string(entity.name).serialized()
        prefix = "{\"kind\":\"record\",\"entity\":" + name + ",\"id\":\""
        chunkPrefix = "{\"kind\":\"chunk\",\"entity\":" + name + ",\"id\":\""
    }

    /// A record's line.
    func recordLine(id: UUID, record: RecordValue) -> String {
        var line = prefix + RecordKey.text(id) + "\",\"record\":"
        RecordJSON.json(forRecord: record, kinds: kinds).write(to: &line, pretty: false, depth: 0)
        return line + "}\n"
    }

    /// Appends the chunk lines of a record's external values, read in `txn`.
    mutating func appendChunks(
        of record: RecordValue, id: UUID, txn: borrowing Transaction, to text: inout String
    ) throws {
        try forEachChunk(of: record, id: id, txn: txn) { line in text += line }
    }

    /// Writes the chunk lines of a record's external values to `sink` as they are read, and calls `afterChunks`
    /// every 64 chunks (16 MiB as the library writes them) and at the end: to check the writes, and to give back the
    /// pages read through the memory map, which would otherwise keep the whole value resident.
    mutating func streamChunks(
        of record: RecordValue, id: UUID, txn: borrowing Transaction, to sink: any TextSink,
        afterChunks: () throws -> Void
    ) throws {
        var count = 0
        try forEachChunk(of: record, id: id, txn: txn) { line in
            sink.write(line)
            count += 1
            if count % 64 == 0 { try afterChunks() }
        }
        try afterChunks()
    }

    /// Calls `body` with each chunk line of the record's values, in the record's order of fields.
    private mutating func forEachChunk(
        of record: RecordValue, id: UUID, txn: borrowing Transaction, _ body: (String) throws -> Void
    ) throws {
        guard let values, case .object(let entries) = record else { return }
        for entry in entries {
            guard let field = entity.external.first(where: { $0.name == entry.name }), entry.value != .null else {
                continue
            }
            guard let descriptor = ExternalDescriptor(entry.value) else {
                throw ToolError(
                    "\(entity.name) \(id): the external \(field.name) holds no valid descriptor; run 'kvtool check'")
            }
            let fieldJSON = JSONValue.string(field.name).serialized()
            for index in 0..<descriptor.chunkCount {
                let key = CatalogExternalValues.chunkKey(
                    owner: id, field: field.fieldID, value: descriptor.valueID, chunk: index)
                _ = key
                // Read checked: a chunk missing, of the wrong size, or whose checksum does not match stops the export
                // rather than carry damage into it.
                let line: String
                do {
                    line = try values.withChunk(
                        index, owner: id, field: (field.fieldID, field.name), value: descriptor.valueID,
                        size: descriptor.byteCount, chunkSize: descriptor.chunkSize, in: txn
                    ) { bytes in
                        chunkPrefix + RecordKey.text(id) + "\",\"field\":" + fieldJSON + ",\"index\":"
                            + String(index) + ",\"data\":\"" + Data(bytes).base64EncodedString() + "\"}\n"
                    }
                } catch let error as KVStoreError {
                    throw ToolError("\(error.message); run 'kvtool check'")
                }
                chunks += 1
                try body(line)
            }
        }
    }
}
