import Foundation
import LMDB

/// Opens an entity's tables and brings the store in line with the model: new indexes are built, dropped ones
/// deleted, and the stored records are checked against the model type.
struct SchemaLoader {
    let environment: Environment
    let catalog: Table
    /// Whether ``FieldCodable`` models are coded through their fields (see ``ModelConfiguration/usesFieldCodable``).
    var usesFieldCodable = true

    /// How many records one write transaction indexes while building an index.
    static let buildChunkSize = 10_000

    /// Opens the entity of a model type given as an existential.
    func open<M: Model>(any type: M.Type) throws -> any AnyEntityStore {
        try open(type)
    }

    func open<M: Model>(_ type: M.Type) throws -> EntityStore<M> {
        let entity = M.entity
        try validate(entity)
        let records = try environment.openTable(named: Catalog.recordTableName(entity.name), create: true)
        let stored = try environment.read { txn in
            try Catalog.read(EntityCatalog.self, key: Catalog.entityKey(entity.name), in: txn, table: catalog)
        }
        var indexes: [EntityStore<M>.StoredIndex] = []
        var unbuilt: [EntityStore<M>.StoredIndex] = []
        for index in entity.indexes {
            let known = stored?.indexes.first { $0.name == index.name }
            let matches =
                known.map {
                    $0.isReady && $0.isUnique == index.isUnique && $0.isMultiEntry == index.isMultiEntry
                        && $0.fields == index.fields
                } ?? false
            let table = try indexTable(entity: entity.name, index: index, rebuild: !matches)
            let storedIndex = EntityStore<M>.StoredIndex(description: index, table: table)
            indexes.append(storedIndex)
            if !matches { unbuilt.append(storedIndex) }
        }
        for old in stored?.indexes ?? [] where !entity.indexes.contains(where: { $0.name == old.name }) {
            try drop(entity: entity.name, index: old)
        }
        var fields = stored?.fields ?? FieldTable()
        var externalTable: ExternalValueTable?
        var externalAttributes: [EntityStore<M>.StoredExternalAttribute] = []
        // External fields the model no longer declares keep their values until their model is saved or deleted.
        let retiredExternal = (stored?.external ?? []).filter { field in
            !entity.externalStorage.contains { $0.name == field.name }
        }
        if !entity.externalStorage.isEmpty || !retiredExternal.isEmpty {
            externalTable = ExternalValueTable(
                entity: entity.name,
                chunks: try environment.openTable(named: Catalog.externalTableName(entity.name), create: true),
                staging: try environment.openTable(named: Catalog.stagingTableName(entity.name), create: true))
            // The field ids are the chunks' keys: intern them now, so that the catalog entry `build` writes below
            // records them before any value is written.
            externalAttributes = entity.externalStorage.map {
                .init(name: $0.name, id: fields.id(for: $0.name), keyPath: $0.keyPath)
            }
        }
        let store = EntityStore<M>(
            name: entity.name, records: records, indexes: indexes, relationships: entity.relationships,
            catalogTable: catalog, fields: fields, usesFieldCodable: usesFieldCodable, externalTable: externalTable,
            externalAttributes: externalAttributes, retiredExternalFields: retiredExternal)
        try checkCompatibility(store)
        if let externalTable { try deleteAbandonedValues(externalTable) }
        try build(unbuilt, of: store)
        return store
    }

    /// Deletes the chunks of streamed writes that a process killed or failed part-way left behind, so that they
    /// are never seen; a write still under way, in this process (through another container of the store) or in
    /// another process, holds its lock and keeps its chunks.
    private func deleteAbandonedValues(_ table: ExternalValueTable) throws {
        let hasStaged = try environment.read { txn in try txn.count(of: table.staging) > 0 }
        guard hasStaged else { return }
        let probe = try StoreLockProbe(directory: environment.path)
        try environment.write { txn in
            _ = try table.deleteAbandonedValues(in: txn) { writer in try writer?.isInFlight(probe: probe) ?? false }
        }
    }

    private func validate<M: Model>(_ entity: Entity<M>) throws {
        guard !entity.name.isEmpty, !entity.name.contains("/") else {
            throw KVStoreError(
                .invalidModel, entity: entity.name,
                message: "The entity name '\(entity.name)' of \(M.self) must be non-empty and free of '/'")
        }
        var names: Set<String> = []
        for index in entity.indexes where !names.insert(index.name).inserted {
            throw KVStoreError(
                .invalidModel, entity: entity.name, field: index.name,
                message: "\(entity.name) declares the index \(index.name) twice")
        }
        var external: Set<String> = []
        for attribute in entity.externalStorage where !external.insert(attribute.name).inserted {
            throw KVStoreError(
                .invalidModel, entity: entity.name, field: attribute.name,
                message: "\(entity.name) declares \(attribute.name) external twice")
        }
    }

    /// Opens an index's table, emptied when it must be rebuilt; a table whose uniqueness changed is recreated.
    private func indexTable<M: Model>(entity: String, index: ModelIndex<M>, rebuild: Bool) throws -> Table {
        let name = Catalog.indexTableName(entity, index.name)
        let options = Catalog.indexTableOptions(unique: index.isUnique)
        do {
            return try environment.openTable(named: name, options: options, create: true)
        } catch LMDBError.incompatible {
            let old = try environment.openTable(
                named: name, options: Catalog.indexTableOptions(unique: !index.isUnique))
            try environment.dropTable(old)
            return try environment.openTable(named: name, options: options, create: true)
        }
    }

    private func drop(entity: String, index: IndexCatalog) throws {
        let name = Catalog.indexTableName(entity, index.name)
        if let table = try? environment.openTable(
            named: name, options: Catalog.indexTableOptions(unique: index.isUnique))
        {
            try environment.dropTable(table)
        }
    }

    /// Builds indexes over the stored records, one write transaction per chunk. The catalog marks an index ready
    /// only when its last chunk is in, so an interrupted build starts again on the next open.
    private func build<M: Model>(_ unbuilt: [EntityStore<M>.StoredIndex], of store: EntityStore<M>) throws {
        var entry = store.catalogEntry(fields: store.fields)
        for index in entry.indexes.indices
        where unbuilt.contains(where: { $0.description.name == entry.indexes[index].name }) {
            entry.indexes[index].isReady = false
        }
        try environment.write { txn in
            for index in unbuilt { try txn.empty(index.table) }
            try Catalog.write(entry, key: Catalog.entityKey(store.name), in: txn, table: catalog)
        }
        guard !unbuilt.isEmpty else { return }
        var after: [UInt8]? = nil
        while true {
            let (last, count) = try environment.write { txn -> ([UInt8]?, Int) in
                try indexChunk(after: after, unbuilt, of: store, in: txn)
            }
            if count == 0 { break }
            after = last
        }
        try environment.write { txn in
            try Catalog.write(
                store.catalogEntry(fields: store.fields), key: Catalog.entityKey(store.name), in: txn, table: catalog)
        }
    }

    private func indexChunk<M: Model>(
        after: [UInt8]?,
        _ unbuilt: [EntityStore<M>.StoredIndex],
        of store: EntityStore<M>,
        in txn: borrowing Transaction
    ) throws -> ([UInt8]?, Int) {
        let (models, last, _) = try store.page(after: after, limit: Self.buildChunkSize, in: txn)
        for model in models {
            try withKey(model.id) { key in
                for index in unbuilt {
                    for indexKey in index.description.keys(model) {
                        guard index.description.isUnique else {
                            try txn.put(key, forKey: indexKey, in: index.table)
                            continue
                        }
                        do {
                            try txn.put(key, forKey: indexKey, in: index.table, options: .noOverwrite)
                        } catch LMDBError.keyExists {
                            throw KVStoreError(
                                .uniqueViolation, entity: store.name, id: model.id,
                                field: index.description.fields.joined(separator: ", "),
                                message: "Cannot build the unique index \(index.description.name) of \(store.name): "
                                    + "\(model.id) shares its value with another stored model")
                        }
                    }
                }
            }
        }
        return (last, models.count)
    }

    /// Decodes the first and the last stored records with the model type, so that a model that no longer reads the
    /// store fails at open, with the entity and field named, rather than at the first fetch.
    private func checkCompatibility<M: Model>(_ store: EntityStore<M>) throws {
        let reader = store.reader
        try environment.read { txn in
            try txn.withCursor(on: store.records) { cursor in
                for move in [true, false] {
                    guard try move ? cursor.first() : cursor.last() else { return }
                    try cursor.withCurrent { key, value in
                        do {
                            _ = try store.decodeRecord(value, fields: reader.fields, decoder: reader.decoder)
                        } catch let error as DecodingError {
                            throw Self.incompatibility(error, entity: store.name, id: UUID(bytes: key))
                        } catch {
                            throw KVStoreError(
                                .corruptRecord, entity: store.name, id: UUID(bytes: key),
                                message: "The stored \(store.name) \(UUID(bytes: key)) does not decode: the store is "
                                    + "damaged", underlying: error)
                        }
                    }
                }
            }
        }
    }

    /// The error for a stored record that the model does not decode, naming the entity and the field.
    static func incompatibility(_ error: DecodingError, entity: String, id: UUID) -> KVStoreError {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            (context.codingPath + (key.map { [$0] } ?? [])).map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context, key)
            return KVStoreError(
                .incompatibleSchema, entity: entity, id: id, field: field,
                message: "\(entity).\(field) is not optional, but stored records such as \(id) have no value for it; "
                    + "make it optional, or migrate the store", underlying: error)
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let field = path(context)
            return KVStoreError(
                .incompatibleSchema, entity: entity, id: id, field: field,
                message: "\(entity).\(field) is stored as another type than \(type) (record \(id)); "
                    + "its type changed: keep the old type, or migrate the store", underlying: error)
        case .dataCorrupted(let context):
            let field = path(context)
            return KVStoreError(
                .incompatibleSchema, entity: entity, id: id, field: field,
                message: "\(entity).\(field) of the stored record \(id) does not decode as the model declares it",
                underlying: error)
        @unknown default:
            return KVStoreError(
                .incompatibleSchema, entity: entity, id: id,
                message: "The stored \(entity) \(id) does not decode with the model", underlying: error)
        }
    }
}
