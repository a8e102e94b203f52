import Foundation
import LMDB

/// An entity's record table and catalog entry as a migration writes them: the field table grows as new models are
/// encoded, and the entry is written with every chunk that touches the entity.
///
/// The entry's indexes are marked not ready: records are written without index maintenance, and the container
/// rebuilds every index of the entity once the migration is over (``SchemaLoader`` rebuilds indexes not ready).
final class MigrationEntityWriter {
    let name: String
    let records: Table
    private(set) var entry: EntityCatalog
    private var encoder = RecordEncoder()
    private var buffer: [UInt8] = []

    init(name: String, records: Table, entry: EntityCatalog?) {
        self.name = name
        self.records = records
        var entry = entry ?? EntityCatalog(name: name, fields: FieldTable(), indexes: [])
        for index in entry.indexes.indices { entry.indexes[index].isReady = false }
        self.entry = entry
    }

    /// Encodes `model` and writes it under its ID.
    func put<M: StoredModel>(_ model: M, in txn: borrowing Transaction) throws {
        do {
            try encoder.encode(model, fields: &entry.fields, into: &buffer)
        } catch {
            throw KVStoreError(
                .encodingFailed, entity: name, id: model.id,
                message: "The migrated \(name) \(model.id) does not encode",
                cause: error)
        }
        try withKey(model.id) { key in
            try buffer.withBorrowedBytes { try txn.put($0, forKey: key, in: records) }
        }
    }

    /// Keeps in the catalog entry only the external fields named `names`: the new model's.
    func keepExternalFields(_ names: Set<String>) {
        entry.external.removeAll { !names.contains($0.name) }
    }

    /// Writes the catalog entry.
    func writeEntry(in txn: borrowing Transaction, catalog: Table) throws {
        try Catalog.write(entry, key: Catalog.entityKey(name), in: txn, table: catalog)
    }
}

/// One chunk of an entity step of a stage, run inside its write transaction: it reads up to ``limit`` records of the
/// source entity and writes them to the target entity, transformed by a closure or as they are.
final class MigrationChunk {
    /// What the chunk did.
    struct Outcome {
        /// How many records it read.
        var count: Int
        /// The key of the last record it read.
        var lastKey: [UInt8]?
        /// How many of the records it read it deleted, their closure having returned `nil`.
        var dropped = 0
        /// What it changed, for the store's history: each migrated model updated (or deleted from its old entity
        /// and inserted into its new one), each dropped one deleted, each inserted one inserted.
        var changes: [ChangeSet.Change] = []
    }

    /// The stage, as `1.0.0 → 2.0.0`, for messages.
    let stage: String
    let source: MigrationEntityWriter
    let target: MigrationEntityWriter
    /// Where to resume in the source table for an in-place step; moved records leave the source, so a move always
    /// starts at its first record.
    let after: [UInt8]?
    let limit: Int
    private let tables: [String: Table]
    /// The source entity's external values, when it has any.
    private let sourceExternal: ExternalValueTable?
    /// The entities of the stage's new schema, which closures may insert into.
    private let insertable: Set<String>
    private let catalog: Table
    private var writers: [String: MigrationEntityWriter] = [:]

    init(
        stage: String, source: String, target: String, after: [UInt8]?, limit: Int, tables: [String: Table],
        externalTables: [String: ExternalValueTable], insertable: Set<String>, catalog: Table,
        in txn: borrowing Transaction
    ) throws {
        self.sourceExternal = externalTables[source]
        self.stage = stage
        self.after = after
        self.limit = limit
        self.tables = tables
        self.insertable = insertable
        self.catalog = catalog
        self.source = try Self.writer(source, tables: tables, catalog: catalog, in: txn)
        self.target =
            source == target ? self.source : try Self.writer(target, tables: tables, catalog: catalog, in: txn)
        writers[source] = self.source
        writers[target] = self.target
    }

    private static func writer(
        _ name: String, tables: [String: Table], catalog: Table, in txn: borrowing Transaction
    ) throws -> MigrationEntityWriter {
        guard let table = tables[name] else {
            throw KVStoreError(.unknownEntity, entity: name, message: "The migration has no table for \(name)")
        }
        let entry = try Catalog.read(EntityCatalog.self, key: Catalog.entityKey(name), in: txn, table: catalog)
        return MigrationEntityWriter(name: name, records: table, entry: entry)
    }

    var isInPlace: Bool { source === target }

    /// Moves up to ``limit`` records from the source to the target as they are, for a renamed entity: the target's
    /// catalog entry has the source's field table, so the bytes read the same.
    func move(in txn: borrowing Transaction) throws -> Outcome {
        var records: [(key: [UInt8], value: [UInt8])] = []
        try txn.scanEntries(source.records) { key, value in
            records.append((Array(key), Array(value)))
            return records.count < limit
        }
        var changes: [ChangeSet.Change] = []
        for record in records {
            try txn.put(record.value, forKey: record.key, in: target.records)
            _ = try txn.delete(forKey: record.key, in: source.records)
            let id = record.key.withBorrowedBytes { UUID(bytes: $0) }
            changes.append(ChangeSet.Change(.deleted, entity: source.name, id: id))
            changes.append(ChangeSet.Change(.inserted, entity: target.name, id: id))
        }
        try target.writeEntry(in: txn, catalog: catalog)
        return Outcome(count: records.count, lastKey: records.last?.key, changes: changes)
    }

    /// Reads up to ``limit`` old models, transforms each, and writes the new models and the inserted ones.
    func migrate<Old: Model, New: Model>(
        _: Old.Type, to _: New.Type, body: (Old, inout MigrationInserts) throws -> New?,
        in txn: borrowing Transaction
    ) throws -> Outcome {
        var olds: [(key: [UInt8], model: Old)] = []
        olds.reserveCapacity(limit)
        let decoder = RecordDecoder()
        let fields = source.entry.fields
        let range = isInPlace ? after.map { KeyRange.from($0) } ?? .all : .all
        try txn.scanEntries(source.records, in: range) { key, value in
            if let after, isInPlace, compareBytes(key, after) == 0 { return true }
            do {
                olds.append((Array(key), try decoder.decode(Old.self, from: value, fields: fields)))
            } catch {
                let id = UUID(bytes: key)
                throw KVStoreError(
                    .migrationFailed, entity: source.name, id: id,
                    message: "The migration \(stage) cannot read the stored \(source.name) \(id) as \(Old.self): "
                        + "the old model of the stage does not match the store", cause: error)
            }
            return olds.count < limit
        }
        var touched: [MigrationEntityWriter] = [source, target]
        var dropped = 0
        var changes: [ChangeSet.Change] = []
        // External values go with their record: a dropped record's are deleted, and, in place, those of the fields
        // the new model no longer keeps external. (A step that moves records with external values to another entity
        // is refused before the stage starts.)
        let keptExternal = Set(New.entity.externalStorage.map(\.name))
        let droppedFields = source.entry.external.filter { !keptExternal.contains($0.name) }.map(\.fieldID)
        // The kept fields by field id, so that an optional value the closure set to `nil` takes its chunks with it.
        let keptFields = New.entity.externalStorage.compactMap { attribute in
            source.entry.external.first { $0.name == attribute.name }.map { (attribute, $0.fieldID) }
        }
        if isInPlace { source.keepExternalFields(keptExternal) }
        for (key, old) in olds {
            var inserts = MigrationInserts()
            let new: New?
            do {
                new = try body(old, &inserts)
            } catch {
                throw KVStoreError(
                    .migrationFailed, entity: source.name, id: old.id,
                    message: "The migration \(stage) of \(source.name) \(old.id) threw; nothing of its chunk was "
                        + "written, and the next open resumes at that chunk", cause: error)
            }
            if let new {
                guard new.id == old.id else {
                    throw KVStoreError(
                        .migrationFailed, entity: source.name, id: old.id,
                        message: "The migration \(stage) of \(source.name) \(old.id) returned a \(target.name) with "
                            + "another id (\(new.id)); a migrated model keeps its id")
                }
                try target.put(new, in: txn)
            }
            if new == nil {
                dropped += 1
                try sourceExternal?.deleteAll(owner: old.id, in: txn)
            } else if let new, isInPlace {
                for field in droppedFields { try sourceExternal?.deleteField(owner: old.id, field: field, in: txn) }
                for (attribute, field) in keptFields where attribute.get(new) == nil {
                    try sourceExternal?.deleteField(owner: old.id, field: field, in: txn)
                }
            }
            if new == nil || !isInPlace { _ = try txn.delete(forKey: key, in: source.records) }
            if new == nil || !isInPlace { changes.append(ChangeSet.Change(.deleted, entity: source.name, id: old.id)) }
            if new != nil {
                changes.append(ChangeSet.Change(isInPlace ? .updated : .inserted, entity: target.name, id: old.id))
            }
            for model in inserts.models {
                let writer = try insert(model, from: old.id, in: txn)
                if !touched.contains(where: { $0 === writer }) { touched.append(writer) }
                changes.append(ChangeSet.Change(.inserted, entity: writer.name, id: model.id))
            }
        }
        for writer in touched { try writer.writeEntry(in: txn, catalog: catalog) }
        return Outcome(count: olds.count, lastKey: olds.last?.key, dropped: dropped, changes: changes)
    }

    private func insert<M: StoredModel>(
        _ model: M, from id: UUID, in txn: borrowing Transaction
    ) throws -> MigrationEntityWriter {
        let name = M.entity.name
        guard name != source.name, name != target.name else {
            throw KVStoreError(
                .migrationFailed, entity: source.name, id: id,
                message: "The migration \(stage) of \(source.name) \(id) inserts a \(name), the entity it migrates; "
                    + "return the model instead")
        }
        guard insertable.contains(name) else {
            throw KVStoreError(
                .migrationFailed, entity: source.name, id: id,
                message: "The migration \(stage) of \(source.name) \(id) inserts a \(name), which is not an entity "
                    + "of the stage's new schema")
        }
        let writer: MigrationEntityWriter
        if let known = writers[name] {
            writer = known
        } else {
            writer = try Self.writer(name, tables: tables, catalog: catalog, in: txn)
            writers[name] = writer
        }
        try writer.put(model, in: txn)
        return writer
    }
}
