import Foundation
import LMDB

/// Opens an entity's tables and brings the store in line with the model: new indexes are built, and the stored
/// records are checked against the model type.
///
/// The catalog is the one truth about the store's schema, so opening only ever adds to it (entities, indexes, field
/// names, relationships). An index the model does not declare stays and is maintained from the records
/// (``DerivedIndex``); it is removed only when the entity names it in ``Entity/removedIndexes``, which the catalog
/// records, or by a migration (``appliesSchemaChanges``). A table the catalog names and the file lacks is damage,
/// never an empty entity.
struct SchemaLoader {
    let environment: Environment
    let catalog: Table
    /// How the store completes index keys that LMDB's key limit cuts (its catalog's format entry says).
    var longKeyHash = LongKeyHash.standard
    /// Whether every external chunk of the store has a checksum (its format is 2 or later).
    var hasChecksums = true
    /// Whether the container opens read-only: the store must hold what the model declares, since nothing is written.
    var isReadOnly = false
    /// Whether ``FieldCodable`` models are coded through their fields (see ``ModelConfiguration/usesFieldCodable``).
    var usesFieldCodable = true
    /// Whether this open migrated the store, which makes the models' indexes the store's: indexes they do not
    /// declare are deleted, and those whose definition changed are rebuilt. Otherwise such changes are refused.
    var appliesSchemaChanges = false

    /// How many records one write transaction indexes while building an index.
    static let buildChunkSize = 10_000

    /// Opens the entity of a model type given as an existential.
    func open<M: StoredModel>(declared type: M.Type) throws -> any DeclaredEntityStore {
        try open(type)
    }

    func open<M: StoredModel>(_ type: M.Type) throws -> EntityStore<M> {
        let entity = M.entity
        try validate(entity)
        let stored = try environment.read { txn in
            try Catalog.read(EntityCatalog.self, key: Catalog.entityKey(entity.name), in: txn, table: catalog)
        }
        if stored == nil, isReadOnly {
            throw readOnly("the store has no entity \(entity.name) yet", entity: entity.name)
        }
        let records =
            stored == nil
            ? try environment.openTable(named: Catalog.recordTableName(entity.name), create: true)
            : try Self.existingTable(
                Catalog.recordTableName(entity.name), options: [], entity: entity.name, environment: environment)
        var entry = stored ?? EntityCatalog(name: entity.name, fields: FieldTable(), indexes: [])
        var indexes: [EntityStore<M>.StoredIndex] = []
        var unbuilt: [EntityStore<M>.StoredIndex] = []
        var drops: [Table] = []
        for index in entity.indexes {
            let (table, isBuilt) = try declare(index, of: entity.name, in: &entry, drops: &drops)
            let storedIndex = EntityStore<M>.StoredIndex(description: index, table: table)
            indexes.append(storedIndex)
            if !isBuilt { unbuilt.append(storedIndex) }
        }
        let derived = try undeclaredIndexes(of: entity, in: &entry, drops: &drops)
        entry.relationships = merged(entry.relationships, entity.relationships)
        // Every program's preserved fields are kept: a program that declares fewer must not drop another's.
        entry.preservedOnDeletion = Array(Set(entry.preservedOnDeletion).union(entity.preservedOnDeletion)).sorted()
        var externalTable: ExternalValueTable?
        // External fields the model no longer declares keep their values until their model is saved or deleted. A
        // field a migration renamed keeps its id, and is the declared attribute of its new name, not a retired one.
        let declaredExternalIDs = Set(
            entity.externalStorage.compactMap { entry.fields.existingID(for: $0.name, in: .topLevel) })
        let retiredExternal = entry.external.filter { field in
            !entity.externalStorage.contains { $0.name == field.name } && !declaredExternalIDs.contains(field.fieldID)
        }
        if !entity.externalStorage.isEmpty || !retiredExternal.isEmpty {
            externalTable = try ExternalValueTable.open(
                entity: entity.name, environment: environment, exists: !(stored?.external.isEmpty ?? true),
                isChecked: hasChecksums)
            Self.internExternalFields(of: entity, retired: retiredExternal, in: &entry)
        }
        func makeStore(_ entry: EntityCatalog) -> EntityStore<M> {
            // The field ids are the chunks' keys: the entry interned them, and records them before any value is
            // written.
            let externalAttributes = entity.externalStorage.map { declaration in
                EntityStore<M>.StoredExternalAttribute(
                    name: declaration.name, id: entry.fields.existingID(for: declaration.name, in: .topLevel) ?? 0,
                    declaration: declaration)
            }
            return EntityStore<M>(
                name: entity.name, records: records, indexes: indexes, relationships: entity.relationships,
                catalogTable: catalog, entry: entry, derivedIndexes: derived, longKeyHash: longKeyHash,
                usesFieldCodable: usesFieldCodable,
                externalTable: externalTable, externalAttributes: externalAttributes,
                retiredExternalFields: retiredExternal, testsStoredFields: entity.testsStoredFields)
        }
        var store = makeStore(entry)
        try checkCompatibility(store)
        if isReadOnly {
            guard unbuilt.isEmpty, drops.isEmpty else {
                let change = unbuilt.first.map { "the index \($0.description.name) of \(entity.name) is not built" }
                throw readOnly(
                    change ?? "\(entity.name) declares the removal of an index it still has", entity: entity.name)
            }
            return store
        }
        if let externalTable { try deleteAbandonedValues(externalTable) }
        if stored != entry || !unbuilt.isEmpty {
            let written = try environment.write { txn -> EntityCatalog in
                let current = try Catalog.read(
                    EntityCatalog.self, key: Catalog.entityKey(entity.name), in: txn, table: catalog)
                let written =
                    current == stored
                    ? entry
                    : try Self.rebased(entry, from: stored, onto: current, entity: entity, retired: retiredExternal)
                for index in unbuilt { try txn.empty(index.table) }
                try Catalog.write(written, key: Catalog.entityKey(entity.name), in: txn, table: catalog)
                return written
            }
            if written != entry { store = makeStore(written) }
        }
        for table in drops { try environment.dropTable(table) }
        try build(unbuilt, of: store)
        return store
    }

    /// Interns the names of the entity's external fields in the entry's field table, and lists them, with the
    /// retired ones, as the entry's external fields.
    private static func internExternalFields<M: StoredModel>(
        of entity: Entity<M>, retired: [ExternalFieldCatalog], in entry: inout EntityCatalog
    ) {
        entry.external =
            entity.externalStorage.map {
                ExternalFieldCatalog(name: $0.name, fieldID: entry.fields.id(for: $0.name, in: .topLevel))
            } + retired
    }

    /// The entry this open planned from `stored`, moved onto `current`, the entry as the open's write transaction
    /// reads it, when a writer in another process interned field names since the open read `stored`.
    ///
    /// Writers intern names without the migration lock, which this open holds, so the field table is the one part of
    /// the entry that can change meanwhile: its names only grow, and the kinds of their values fill in. The planned
    /// entry takes the current table, with the external fields' names interned in it again.
    ///
    /// - Throws: ``KVStoreError/schemaChanged`` when more than the field table changed, or the table lost names: a
    ///   program that changes the schema without the migration lock is at work.
    private static func rebased<M: StoredModel>(
        _ planned: EntityCatalog, from stored: EntityCatalog?, onto current: EntityCatalog?, entity: Entity<M>,
        retired: [ExternalFieldCatalog]
    ) throws -> EntityCatalog {
        guard let stored, let current, current.fields.names.starts(with: stored.fields.names) else {
            throw concurrentSchemaChange(entity.name)
        }
        var unchanged = current
        unchanged.fields = stored.fields
        guard unchanged == stored else { throw concurrentSchemaChange(entity.name) }
        var rebased = planned
        rebased.fields = current.fields
        rebased.preservedOnDeletion = Array(Set(planned.preservedOnDeletion).union(current.preservedOnDeletion))
            .sorted()
        if !planned.external.isEmpty { internExternalFields(of: entity, retired: retired, in: &rebased) }
        return rebased
    }

    private static func concurrentSchemaChange(_ entity: String) -> KVStoreError {
        KVStoreError(
            .schemaChanged, entity: entity,
            message: "The catalog entry of \(entity) changed while this program opened the store, beyond the field "
                + "names writers add: another program changed the schema without taking the store's migration lock; "
                + "open the store again")
    }

    /// Adds a declared index to the entry, or checks it against the one stored under its name, and opens its table.
    ///
    /// - Returns: The table, and whether the index holds every record already.
    /// - Throws: ``KVStoreError/schemaChanged`` for an index whose removal the catalog records,
    ///   ``KVStoreError/incompatibleSchema`` for one stored with another definition (outside a migration),
    ///   ``KVStoreError/damaged`` when the catalog names its table and the file lacks it.
    private func declare<M: StoredModel>(
        _ index: ModelIndex<M>, of entity: String, in entry: inout EntityCatalog, drops: inout [Table]
    ) throws -> (Table, isBuilt: Bool) {
        var declared = IndexCatalog(
            name: index.name, fields: index.fields, isUnique: index.isUnique, onConflict: index.onConflict,
            isMultiEntry: index.isMultiEntry, isReady: false, isDerivable: index.isDerivable)
        let name = Catalog.indexTableName(entity, index.name)
        let options = Catalog.indexTableOptions(unique: index.isUnique)
        if entry.removedIndexes.contains(index.name) {
            guard appliesSchemaChanges else {
                throw KVStoreError(
                    .schemaChanged, entity: entity, field: index.name,
                    message: "The index \(index.name) of \(entity) was removed from the store (a program declared its "
                        + "removal), and this program still declares it; stop declaring it, or give the index "
                        + "another name to build it again")
            }
            entry.removedIndexes.removeAll { $0 == index.name }
        }
        guard let position = entry.indexes.firstIndex(where: { $0.name == index.name }) else {
            if isReadOnly { throw readOnly("the store has no index \(index.name) of \(entity) yet", entity: entity) }
            entry.indexes.append(declared)
            return (try environment.openTable(named: name, options: options, create: true), false)
        }
        let known = entry.indexes[position]
        if known.hasSameDefinition(as: declared) {
            entry.indexes[position].isDerivable = index.isDerivable
            let table = try Self.existingTable(name, options: options, entity: entity, environment: environment)
            return (table, known.isReady)
        }
        guard appliesSchemaChanges else {
            throw KVStoreError(
                .incompatibleSchema, entity: entity, field: index.name,
                message: "The index \(index.name) of \(entity) is stored as \(Self.describe(known)) but declared as "
                    + "\(Self.describe(declared)); other programs of the store maintain it as stored. Give the changed "
                    + "index another name, or change it in a migration stage")
        }
        // A migration that changes only the conflict policy keeps the index's entries as they are.
        var samePolicy = known
        samePolicy.onConflict = declared.onConflict
        if samePolicy.hasSameDefinition(as: declared) {
            entry.indexes[position].onConflict = declared.onConflict
            entry.indexes[position].isDerivable = index.isDerivable
            let table = try Self.existingTable(name, options: options, entity: entity, environment: environment)
            return (table, known.isReady)
        }
        // A migration redefines the index: its old table goes, and a new one is built.
        if let old = try Self.presentTable(
            name, options: Catalog.indexTableOptions(unique: known.isUnique), entity: entity, environment: environment)
        {
            if known.isUnique == index.isUnique { return (old, false) }
            try environment.dropTable(old)
        }
        declared.isReady = false
        entry.indexes[position] = declared
        return (try environment.openTable(named: name, options: options, create: true), false)
    }

    /// The stored indexes the model does not declare: kept and maintained from the records, or deleted when the
    /// entity declares their removal or a migration ran.
    private func undeclaredIndexes<M: StoredModel>(
        of entity: Entity<M>, in entry: inout EntityCatalog, drops: inout [Table]
    ) throws -> [DerivedIndex] {
        let declared = Set(entity.indexes.map(\.name))
        let removals = Set(entity.removedIndexes)
        if let both = removals.intersection(declared).first {
            throw KVStoreError(
                .invalidModel, entity: entity.name, field: both,
                message: "\(entity.name) declares the index \(both) and its removal; keep one of them")
        }
        var derived: [DerivedIndex] = []
        var kept: [IndexCatalog] = []
        for index in entry.indexes {
            guard !declared.contains(index.name) else {
                kept.append(index)
                continue
            }
            let name = Catalog.indexTableName(entity.name, index.name)
            let options = Catalog.indexTableOptions(unique: index.isUnique)
            if removals.contains(index.name) || appliesSchemaChanges {
                if let table = try Self.presentTable(
                    name, options: options, entity: entity.name, environment: environment)
                {
                    drops.append(table)
                }
                continue
            }
            kept.append(index)
            derived.append(
                DerivedIndex(
                    catalog: index,
                    table: try Self.existingTable(name, options: options, entity: entity.name, environment: environment)
                ))
        }
        entry.indexes = kept
        for name in removals where !entry.removedIndexes.contains(name) { entry.removedIndexes.append(name) }
        return derived
    }

    /// The stored relationships with the declared ones in place of those of the same name.
    private func merged<M: StoredModel>(
        _ stored: [RelationshipCatalog], _ declared: [Relationship<M>]
    ) -> [RelationshipCatalog] {
        let declaredCatalog = EntityStore<M>.describe(declared).map(\.catalog)
        let names = Set(declaredCatalog.map(\.name))
        return declaredCatalog + stored.filter { !names.contains($0.name) }
    }

    /// Opens a table that the catalog names.
    ///
    /// - Throws: ``KVStoreError/damaged`` naming the table when the file lacks it, or has it with other options;
    ///   the binding's error when the table cannot be opened otherwise.
    static func existingTable(
        _ name: String, options: Table.Options, entity: String, environment: Environment
    ) throws -> Table {
        guard let table = try presentTable(name, options: options, entity: entity, environment: environment) else {
            throw KVStoreError(
                .damaged, entity: entity,
                message: "The store at \(environment.path) is damaged: its catalog names the table '\(name)' of "
                    + "\(entity), and the file has no such table. Nothing was changed; run 'kvtool check "
                    + "\(environment.path)', and restore the store from a backup")
        }
        return table
    }

    /// Opens a table that the catalog describes and the file may lack (an index table about to be deleted, the
    /// checksums of external values in a store older than them), or returns `nil` when the file has no such table.
    ///
    /// - Throws: ``KVStoreError/damaged`` naming the table when the file has it with other options; the binding's
    ///   error when the table cannot be opened otherwise.
    static func presentTable(
        _ name: String, options: Table.Options, entity: String, environment: Environment
    ) throws -> Table? {
        do {
            return try environment.tableIfPresent(named: name, options: options)
        } catch LMDBError.incompatible {
            throw KVStoreError(
                .damaged, entity: entity,
                message: "The store at \(environment.path) is damaged: the table '\(name)' of \(entity) is not the "
                    + "kind of table its catalog describes. Nothing was changed; run 'kvtool check "
                    + "\(environment.path)'")
        }
    }

    /// The error of a read-only open that would have to write.
    private func readOnly(_ reason: String, entity: String) -> KVStoreError {
        KVStoreError(
            .readOnly, entity: entity,
            message: "Cannot open the store at \(environment.path) read-only for these models: \(reason), and a "
                + "read-only open writes nothing. Open it writable once, with these models")
    }

    /// `unique on (email)`, for messages.
    private static func describe(_ index: IndexCatalog) -> String {
        let kind = index.isUnique ? "unique" : index.isMultiEntry ? "multi-entry" : "an index"
        let policy = index.isUnique ? ", onConflict: .\(index.onConflict.rawValue)" : ""
        return "\(kind) on (\(index.fields.joined(separator: ", ")))\(policy)"
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

    /// Checks a ``PersistentModel`` class: it inherits from nothing, and its entity declares each of its relationship
    /// properties under the property's name, with the property's type.
    private func validateClass<M: StoredModel>(_ type: AnyClass, _ entity: Entity<M>) throws {
        guard !ObjectContents.hasSuperclass(type) else {
            throw KVStoreError(
                .invalidModel, entity: entity.name,
                message: "The model class \(M.self) inherits from another class; a PersistentModel is a final class "
                    + "that inherits from nothing")
        }
        let properties = ObjectContents.storedProperties(of: type) ?? []
        for relationship in entity.relationships {
            guard let property = relationship.property else { continue }
            let found = properties.first { $0.name == "_" + relationship.name }
            guard let found, found.type == property.wrapper, property.offset != nil else {
                throw KVStoreError(
                    .invalidModel, entity: entity.name, field: relationship.name,
                    message: "\(entity.name) declares the relationship \(relationship.name) with a property of type "
                        + "\(property.wrapper), but \(M.self) has "
                        + (found.map { "its property \(relationship.name) of type \($0.type)" } ?? "no such property")
                        + "; name the relationship after its property")
            }
        }
        let declared = Set(entity.relationships.map { "_" + $0.name })
        for property in properties where property.type is any RelationshipPropertyWrapper.Type {
            guard declared.contains(property.name) else {
                let name = String(property.name.dropFirst())
                throw KVStoreError(
                    .invalidModel, entity: entity.name, field: name,
                    message: "The relationship property \(name) of \(M.self) is not declared in its entity: add it to "
                        + "the entity's relationships, with its inverse and delete rule")
            }
        }
    }

    private func validate<M: StoredModel>(_ entity: Entity<M>) throws {
        guard !entity.name.isEmpty, !entity.name.contains("/") else {
            throw KVStoreError(
                .invalidModel, entity: entity.name,
                message: "The entity name '\(entity.name)' of \(M.self) must be non-empty and free of '/'")
        }
        if let type = M.self as? AnyClass { try validateClass(type, entity) }
        for index in entity.indexes where index.fields.contains(where: { $0.contains(ModelIndex<M>.computedMarker) }) {
            throw KVStoreError(
                .invalidModel, entity: entity.name,
                message: "\(entity.name) declares an index on a computed property without a name, which would differ "
                    + "from one build to the next; name it, as in .index(\\.nameFolded, name: \"nameFolded\") "
                    + "(compound indexes take stored properties only)")
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

    /// Builds indexes over the stored records, one write transaction per chunk. The catalog marks an index ready
    /// only when its last chunk is in, so an interrupted build starts again on the next open.
    ///
    /// The catalog lists the index (not ready) before the first chunk, so every other writer of the store maintains
    /// it meanwhile, from the records if it does not declare it: a record written between two chunks is in the index
    /// either way. Builds run under the store's migration lock, so two opens never build one index at once.
    private func build<M: StoredModel>(_ unbuilt: [EntityStore<M>.StoredIndex], of store: EntityStore<M>) throws {
        guard !unbuilt.isEmpty else { return }
        var after: [UInt8]? = nil
        while true {
            let (last, count) = try environment.write { txn -> ([UInt8]?, Int) in
                try indexChunk(after: after, unbuilt, of: store, in: txn)
            }
            if count == 0 { break }
            after = last
        }
        let ready = try environment.write { txn -> EntityCatalog? in
            // The entry as the catalog has it now: other writers may have interned field names meanwhile.
            let key = Catalog.entityKey(store.name)
            guard var entry = try Catalog.read(EntityCatalog.self, key: key, in: txn, table: catalog) else {
                return nil
            }
            for position in entry.indexes.indices
            where unbuilt.contains(where: { $0.description.name == entry.indexes[position].name }) {
                entry.indexes[position].isReady = true
            }
            try Catalog.write(entry, key: key, in: txn, table: catalog)
            return entry
        }
        if let ready { store.reload(ready, derivedIndexes: store.derivedIndexes) }
    }

    private func indexChunk<M: StoredModel>(
        after: [UInt8]?,
        _ unbuilt: [EntityStore<M>.StoredIndex],
        of store: EntityStore<M>,
        in txn: borrowing Transaction
    ) throws -> ([UInt8]?, Int) {
        let (models, last, _) = try store.page(after: after, limit: Self.buildChunkSize, in: txn)
        for model in models {
            try withKey(model.id) { key in
                for index in unbuilt {
                    for (indexKey, whole) in index.description.keys(model, longKeyHash: longKeyHash) {
                        guard index.description.isUnique else {
                            try txn.put(key, forKey: indexKey, in: index.table)
                            continue
                        }
                        // An entry another writer of the store made for this very record meanwhile is kept.
                        let holder = try store.addUniqueEntry(
                            indexKey, whole: whole, index: index.description.name, owner: key, in: txn)
                        if holder != nil {
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
    ///
    /// The records are read with the field table of the same snapshot: a writer in another process may have interned
    /// names since the open read the catalog.
    private func checkCompatibility<M: StoredModel>(_ store: EntityStore<M>) throws {
        let reader = store.reader
        try environment.read { txn in
            let snapshot = try Catalog.read(
                EntityCatalog.self, key: Catalog.entityKey(store.name), in: txn, table: catalog)
            let fields = snapshot?.fields ?? reader.fields
            try txn.withCursor(on: store.records) { cursor in
                for move in [true, false] {
                    guard try move ? cursor.first() : cursor.last() else { return }
                    try cursor.withCurrentEntry { key, value in
                        do {
                            _ = try store.decodeRecord(value, fields: fields, decoder: reader.decoder)
                        } catch let error as DecodingError {
                            throw Self.incompatibility(error, entity: store.name, id: UUID(bytes: key))
                        } catch {
                            throw KVStoreError.undecodable(
                                error, entity: store.name, id: UUID(bytes: key),
                                table: Catalog.recordTableName(store.name))
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
                    + "make it optional, or migrate the store", cause: error)
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let field = path(context)
            return KVStoreError(
                .incompatibleSchema, entity: entity, id: id, field: field,
                message: "\(entity).\(field) is stored as another type than \(type) (record \(id)); "
                    + "its type changed: keep the old type, or migrate the store", cause: error)
        case .dataCorrupted(let context):
            let field = path(context)
            return KVStoreError(
                .incompatibleSchema, entity: entity, id: id, field: field,
                message: "\(entity).\(field) of the stored record \(id) does not decode as the model declares it",
                cause: error)
        @unknown default:
            return KVStoreError(
                .incompatibleSchema, entity: entity, id: id,
                message: "The stored \(entity) \(id) does not decode with the model", cause: error)
        }
    }
}
