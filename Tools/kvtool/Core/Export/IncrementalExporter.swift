import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// Writes an incremental export, `kvtool export --since <token>`: the models changed after a history token as they
/// are now, and the models deleted since, read in one read transaction with the history's last token, so that the
/// lines and the header's `through` token are the same snapshot.
///
/// The history's entries after the token name every model that commits changed (a delete rule's cascades and
/// nullifications included, as changes of their own). Each model is written once, as the snapshot holds it: a record
/// line (and its chunk lines) when the model exists, a delete line when it does not. A model inserted after the token
/// and deleted since gets its delete line too: a copy made from a full export may hold it, since a full export reads
/// its token before its records, and records committed meanwhile may be in it. The lines come in three groups, each in
/// entity and ID order: the deletes, the models that existed at the token (their first change after it was not an
/// insert), then the models inserted since, so that an import frees the unique values of deleted models, and of models
/// that give them up, before the models that take them.
///
/// The transaction stays open while the lines are written out (a slow reader of the output holds back the reuse of
/// the pages it reads), and the changed models' IDs are held in memory.
struct IncrementalExporter {
    /// The store.
    let store: InspectedStore
    /// Its history.
    let history: StoreHistory
    /// The token the export starts after.
    let since: HistoryToken
    /// The entities whose changes to export; empty for all.
    let selected: Set<String>

    /// What the export wrote.
    struct Outcome {
        /// The header line.
        let header: ExportHeader
        /// The end line.
        let end: ExportEnd
    }

    /// How a model changed after the token.
    private struct Change {
        /// Whether the model existed at the token as far as the history tells: its first change after it was not an
        /// insert.
        let existedAtToken: Bool
    }

    /// A model to write, and the group its line goes in.
    private struct Line {
        let entity: String
        let id: UUID
    }

    /// Writes the export to `sink`.
    ///
    /// - Parameters:
    ///   - sink: Where the lines go.
    ///   - progress: The progress line.
    ///   - checkOutput: Throws the first failed write to the output, so that the export stops early.
    /// - Throws: ``ToolError`` for a store without history, a token the history cannot be read after, a damaged
    ///   entry or catalog, or a catalog that changed since the store was opened; ``InspectionError/damaged`` for a
    ///   record that does not decode; ``OutputFailure``; what LMDB throws.
    func export(
        to sink: any TextSink, progress: Progress, checkOutput: () throws -> Void
    ) throws -> Outcome {
        // Tables are opened before the transaction begins, as LMDB wants: those of every entity the store had when
        // it was opened.
        var recordTables: [String: Table] = [:]
        var valueTables: [String: CatalogExternalValues] = [:]
        for entity in store.entities {
            recordTables[entity.name] = try store.recordTable(of: entity)
            valueTables[entity.name] = try EntityExporter.externalValues(of: entity, in: store)
        }
        return try store.environment.read { txn in
            let state = try history.requiredState(in: txn)
            let entries = try history.entries(
                after: since, state: state, limit: nil,
                advice: "Export the store in full ('kvtool export \(store.path)') into a new copy, and go on from the "
                    + "token its header records", in: txn)
            let (entities, damaged) = try InspectedStore.readEntities(in: txn, catalog: store.catalog)
            if let damaged = damaged.first {
                throw ToolError("The catalog entry '\(damaged.key)' does not decode; run 'kvtool check \(store.path)'")
            }
            let schema: SchemaState
            do {
                schema = try Catalog.schemaState(in: txn, table: store.catalog)
            } catch {
                throw ToolError(
                    "The catalog's schema entry does not decode (\(error)); run 'kvtool check \(store.path)'")
            }
            let header = ExportHeader(
                store: store, entities: entities, schema: schema, since: since, through: state.lastToken)
            sink.write(try header.json().serialized() + "\n")
            try checkOutput()

            var changes: [String: [UUID: Change]] = [:]
            for entry in entries {
                for change in entry.changes where selected.isEmpty || selected.contains(change.entity) {
                    if changes[change.entity]?[change.id] == nil {
                        changes[change.entity, default: [:]][change.id] = Change(
                            existedAtToken: change.kind != .inserted)
                    }
                }
            }
            let catalog = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var deletes: [Line] = []
            var updates: [Line] = []
            var inserts: [Line] = []
            for name in changes.keys.sorted() {
                guard let entity = catalog[name] else {
                    throw ToolError(
                        "The history of '\(store.path)' names changes of \(name), which the store's catalog no longer "
                            + "has (a program removed the entity): an incremental export cannot carry that. Export "
                            + "the store in full into a new copy")
                }
                guard let records = recordTables[name] else {
                    throw ToolError(
                        "A program created \(name) in '\(store.path)' while kvtool opened it; run the export again")
                }
                let ids = (changes[name] ?? [:]).sorted {
                    RecordKey.bytes($0.key).lexicographicallyPrecedes(RecordKey.bytes($1.key))
                }
                for (id, change) in ids {
                    if try txn.containsKey(RecordKey.bytes(id), in: records) {
                        if change.existedAtToken {
                            updates.append(Line(entity: entity.name, id: id))
                        } else {
                            inserts.append(Line(entity: entity.name, id: id))
                        }
                    } else {
                        deletes.append(Line(entity: entity.name, id: id))
                    }
                }
            }

            var summaries: [String: ExportEnd.Entity] = [:]
            for line in deletes {
                sink.write(Self.deleteLine(line))
                summaries[line.entity, default: ExportEnd.Entity(name: line.entity)].deletes += 1
            }
            try checkOutput()
            var writers: [String: LineWriter] = [:]
            var held: [String: HeldFields] = [:]
            var written = 0
            for line in updates + inserts {
                // The snapshot held the record when the lines were sorted, and still does.
                guard let entity = catalog[line.entity], let records = recordTables[line.entity],
                    let record = try RecordKey.record(line.id, of: entity, in: records, txn: txn)
                else { throw ToolError("\(line.entity) \(line.id) vanished from a read transaction's snapshot") }
                var writer = writers[line.entity] ?? LineWriter(entity: entity, values: valueTables[line.entity])
                sink.write(writer.recordLine(id: line.id, record: record))
                try writer.streamChunks(of: record, id: line.id, txn: txn, to: sink) {
                    try checkOutput()
                    try store.environment.releaseMappedPages()
                }
                writers[line.entity] = writer
                held[line.entity, default: HeldFields(entity: entity)].note(record)
                summaries[line.entity, default: ExportEnd.Entity(name: line.entity)].records += 1
                written += 1
                if written % 64 == 0 {
                    try checkOutput()
                    progress.update("export: \(Formatting.count(written, "record")) changed since \(since)")
                }
            }
            var end = ExportEnd()
            end.countsDeletes = true
            for name in summaries.keys.sorted() {
                guard var summary = summaries[name] else { continue }
                summary.chunks = writers[name]?.chunks ?? 0
                if summary.records > 0 { summary.required = held[name]?.required ?? [] }
                end.entities.append(summary)
            }
            sink.write(end.json.serialized() + "\n")
            try checkOutput()
            return Outcome(header: header, end: end)
        }
    }

    /// `{"kind":"delete","entity":"Task","id":"…"}` and its line break.
    private static func deleteLine(_ line: Line) -> String {
        JSONValue.object([
            JSONMember("kind", .string(ExportLineKind.delete)), JSONMember("entity", .string(line.entity)),
            JSONMember("id", .string(RecordKey.text(line.id))),
        ]).serialized() + "\n"
    }
}
