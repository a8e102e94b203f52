import Foundation
import LMDB

/// What the container knows of an entity whatever its model type, or without one (``CatalogEntityStore``).
protocol AnyEntityStore: AnyObject, Sendable {
    /// The entity's name.
    var name: String { get }
    /// The entity's relationships, declared or only in the catalog: the delete rules of all of them apply.
    var allRelationships: [RelationshipInfo] { get }
    /// The tables a save of a model writes: its records and each index's entries.
    var modelTables: [Table] { get }
    /// Whether a model with `id` is stored.
    func exists(_ id: UUID, in txn: borrowing Transaction) throws -> Bool
    /// The positions in `ids` of the IDs no stored model has, in ascending order.
    func missing(_ ids: [UUID], in txn: borrowing Transaction) throws -> [Int]
    /// The models whose `field` holds each of `ids`, by referenced ID.
    func referrers(to ids: [UUID], field: String, in txn: borrowing Transaction) throws -> [UUID: [UUID]]
    /// The IDs the models with `ids` hold in a stored relationship.
    func storedReferences(of ids: [UUID], relationship name: String, in txn: borrowing Transaction) throws -> [UUID]
    /// Passes the IDs that the models `referrers` hold in `field` through `rewrittenID`, which keeps, replaces or
    /// removes (`nil`) each, and saves the models whose IDs changed.
    func rewriteReferences(
        in field: String,
        of referrers: [UUID],
        through rewrittenID: (UUID) -> UUID?,
        in txn: borrowing Transaction,
        changes: ChangeCollector?
    ) throws
    /// Deletes models and their index entries, without delete rules.
    func deleteModels(_ ids: [UUID], in txn: borrowing Transaction, changes: ChangeCollector?) throws
    /// The stored models with `ids`, in key order; missing IDs are skipped.
    func anyModels(for ids: [UUID], in txn: borrowing Transaction) throws -> [any StoredModel]
}

/// An entity's tables, field names and indexes, and the record-level operations on them.
///
/// Every operation runs inside a transaction it is lent, so that callers group them as they need: a context's save
/// is one write transaction, a batch fetch one read transaction.
final class EntityStore<M: StoredModel>: AnyEntityStore {
    let name: String
    let records: Table
    let indexes: [StoredIndex]
    /// The position in ``indexes`` of each index, by name: a search of the array, generic over the model, compared
    /// names through unspecialized code and cost more than the key lookup of a query.
    let indexPositions: [String: Int]
    /// The record key and the indexes as the query planner sees them, made once: making them for every fetch cost
    /// more than a key lookup.
    let plannerIndexes: [PlannerIndex]
    /// The class of a fetch's sink, kept: making a `ModelSink<M>()` in code generic over the model looks its
    /// metadata up at every fetch, and a sink made from this value does not.
    let sinkType = ModelSink<M>.self
    /// The plans of equalities, one per attribute, reused with each new constant.
    let equalityPlans = EqualityPlans<M>()
    /// The templates of the plans of predicates made of equalities and comparisons.
    let comparisonPlans = ComparisonPlans<M>()
    /// Whether scans may test stored fields (``Entity/testsStoredFields``).
    let testsStoredFields: Bool
    /// The answers of ``storedFieldName(of:)``, which prints the key path.
    let storedFieldNames = KeyPathMemo<String?>()
    let relationshipDescriptions: [Relationship<M>]
    /// The relationships without their model types, in the order of `relationshipDescriptions`; computed once,
    /// since naming a target entity asks the runtime for generic metadata.
    let relationships: [RelationshipInfo]
    /// For each relationship whose references must resolve, the position of the index on its field.
    let referenceIndexes: [(index: Int, field: String, target: String)]
    let catalogTable: Table
    /// The index tables without their model type, in the order of `indexes`, for the index maintenance that runs
    /// on every save: code that is not generic over the model runs without asking the runtime for metadata.
    let indexTables: [IndexTable]
    /// Whether a save must check a unique constraint before it writes the record.
    let hasUniqueIndex: Bool
    /// How the store completes index keys that LMDB's key limit cuts.
    let longKeyHash: LongKeyHash
    /// Each index's key function, by position.
    private let keyAppenders: [IndexKeyAppender]
    /// How the model writes and reads its fields when it is ``FieldCodable``; `nil` for `Codable` alone.
    /// Whether models are coded through their ``FieldCodable`` conformance, ``fieldCoding``.
    let codesFields: Bool
    /// The model's ``FieldCodable`` coding when ``codesFields``; otherwise functions that are never called.
    let fieldCoding: FieldCoding<M>
    /// The chunk and staging tables of the entity's external values, if it declares any.
    let externalTable: ExternalValueTable?
    /// The external attributes with their field ids.
    let externalAttributes: [StoredExternalAttribute]
    /// Whether ``externalAttributes`` is not empty, kept apart for every decode: asking the array, whose element type
    /// depends on the model, costs about a thousand instructions of metadata lookups in this unspecialized code.
    let hasExternalAttributes: Bool
    /// External fields of earlier versions of the model: their values stay until their model is saved, which deletes
    /// them, or deleted.
    let retiredExternalFields: [ExternalFieldCatalog]
    /// For a ``PersistentModel`` class whose attributes a bitwise comparison can trust and that has no external
    /// attributes, where they lie: a context then finds its objects' changes by comparing them with a copy of their
    /// attributes (``FieldShadow``) instead of encoding them. `nil` otherwise.
    let objectLayout: ObjectLayout?
    /// Where a ``PersistentModel`` object of `M` keeps the state of its relationship properties that its record
    /// stores (to-one, many-to-many), by offset; empty for a struct.
    let storedRelationshipOffsets: [Int]
    /// Where a ``PersistentModel`` object of `M` keeps the state of each of its relationship properties, by offset;
    /// empty for a struct.
    let relationshipOffsets: [Int]
    /// The relationship properties of a ``PersistentModel`` object of `M`, by offset, with their targets' types;
    /// empty for a struct.
    let relationshipTargets: [(offset: Int, target: any PersistentModel.Type)]
    private let state: Locked<EntityWriterState>

    /// An index of the entity with its table.
    struct StoredIndex: Sendable {
        let description: ModelIndex<M>
        let table: Table
    }

    /// An external attribute of the entity with its field id.
    struct StoredExternalAttribute: Sendable {
        let name: String
        let id: UInt32
        /// The attribute's declaration: its key path, and how to read and set it.
        let declaration: ExternalAttribute<M>

        var keyPath: AnyKeyPath & Sendable { declaration.keyPath }

        /// The attribute's value in `model`; `nil` when an optional attribute holds none.
        func value(in model: M) -> ExternalData? {
            declaration.get(model)
        }

        /// Sets the attribute's value in `model`.
        func set(_ value: ExternalData?, in model: inout M) {
            declaration.set(&model, value)
        }
    }

    init(
        name: String,
        records: Table,
        indexes: [StoredIndex],
        relationships: [Relationship<M>],
        catalogTable: Table,
        entry: EntityCatalog,
        derivedIndexes: [DerivedIndex] = [],
        longKeyHash: LongKeyHash = .standard,
        usesFieldCodable: Bool = true,
        externalTable: ExternalValueTable? = nil,
        externalAttributes: [StoredExternalAttribute] = [],
        retiredExternalFields: [ExternalFieldCatalog] = [],
        testsStoredFields: Bool = true
    ) {
        self.name = name
        self.records = records
        self.indexes = indexes
        self.indexPositions = Dictionary(
            indexes.enumerated().map { ($1.description.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.plannerIndexes = Self.plannerIndexes(of: indexes)
        self.testsStoredFields = testsStoredFields
        self.relationshipDescriptions = relationships
        self.relationships = Self.describe(relationships)
        self.referenceIndexes = Self.referenceIndexes(self.relationships, indexes: indexes)
        self.catalogTable = catalogTable
        self.indexTables = indexes.map { IndexTable(table: $0.table, isUnique: $0.description.isUnique) }
        self.hasUniqueIndex = indexes.contains { $0.description.isUnique }
        self.keyAppenders = indexes.map(\.description.appendKeys)
        let fieldCoding = usesFieldCodable ? FieldCoding.of(M.self) : nil
        self.codesFields = fieldCoding != nil
        self.fieldCoding = fieldCoding ?? FieldCoding.unavailable()
        self.externalTable = externalTable
        self.externalAttributes = externalAttributes
        self.hasExternalAttributes = !externalAttributes.isEmpty
        self.retiredExternalFields = retiredExternalFields
        self.relationshipOffsets = relationships.compactMap { $0.property?.offset }
        self.relationshipTargets = relationships.compactMap { relationship in
            guard let offset = relationship.property?.offset,
                let target = relationship.target as? any PersistentModel.Type
            else { return nil }
            return (offset, target)
        }
        self.storedRelationshipOffsets = relationships.compactMap { relationship in
            relationship.property.flatMap { $0.kind == .toMany ? nil : $0.offset }
        }
        self.objectLayout = externalAttributes.isEmpty ? (M.self as? AnyClass).flatMap(ObjectLayout.init(of:)) : nil
        self.longKeyHash = longKeyHash
        self.state = Locked(
            EntityWriterState(
                fields: entry.fields, persistedRevision: entry.fields.revision, entry: entry, derived: derivedIndexes,
                keys: IndexKeySets(longKeyHash: longKeyHash)))
    }

    /// The field table as it stands.
    var fields: FieldTable {
        state.withLock { $0.fields }
    }

    /// A reader for the records as they stand: the field table and a decoder to reuse across a batch.
    var reader: RecordReader {
        RecordReader(fields: fields)
    }

    /// The entity's catalog entry as the container last read it, with the field table as it stands.
    var catalogEntry: EntityCatalog {
        state.withLock { state in
            var entry = state.entry
            entry.fields = state.fields
            return entry
        }
    }

    /// The indexes of the store that the model does not declare, which writes maintain from the records.
    var derivedIndexes: [DerivedIndex] {
        state.withLock { $0.derived }
    }

    var modelTables: [Table] {
        [records] + indexes.map(\.table) + derivedIndexes.map(\.table)
    }

    /// The entity's relationships: those the model declares, then those the catalog has and the model does not
    /// declare, whose delete rules apply all the same.
    var allRelationships: [RelationshipInfo] {
        let stored = state.withLock { $0.entry.relationships }
        let declared = Set(relationships.map(\.name))
        return relationships + stored.filter { !declared.contains($0.name) }.map(RelationshipInfo.init(catalog:))
    }

    // MARK: - Reading

    /// The model stored under `id`, or `nil`.
    func model(for id: UUID, in txn: borrowing Transaction, reader: RecordReader) throws -> M? {
        guard let bytes = try withKey(id, { key in try txn.bytes(forKey: key, in: records) }) else { return nil }
        return try decode(bytes, id: id, reader: reader)
    }

    /// Decodes a record, turning any failure into ``KVStoreError/corruptRecord`` naming the entity and the ID.
    func decode(_ bytes: BorrowedBytes, id: UUID, reader: RecordReader) throws -> M {
        try decode(bytes, id: id, fields: reader.fields, decoder: reader.decoder)
    }

    /// Decodes a record with `decoder`, through the model's ``FieldCodable`` conformance when it has one and through
    /// `Decodable` otherwise; errors are left as they are.
    func decodeRecord(_ bytes: BorrowedBytes, fields: FieldTable, decoder: RecordDecoder) throws -> M {
        guard codesFields else {
            guard hasExternalAttributes else { return try decoder.decode(M.self, from: bytes, fields: fields) }
            return withOrigins(try decoder.decode(M.self, from: bytes, fields: fields))
        }
        // Read in place: binding the coding to a constant would copy it, and retain its closures, for every record.
        guard hasExternalAttributes else {
            return try decoder.decodeFields(from: bytes, fields: fields, fieldCoding.read)
        }
        return withOrigins(try decoder.decodeFields(from: bytes, fields: fields, fieldCoding.read))
    }

    /// Decodes a record with `decoder`, turning any failure into ``KVStoreError/corruptRecord``.
    func decode(_ bytes: BorrowedBytes, id: UUID, fields: FieldTable, decoder: RecordDecoder) throws -> M {
        do {
            return try decodeRecord(bytes, fields: fields, decoder: decoder)
        } catch {
            throw KVStoreError.undecodable(error, entity: name, id: id, table: Catalog.recordTableName(name))
        }
    }

    /// Decodes a record whose key is the 16 bytes in `key`.
    func decode(_ bytes: BorrowedBytes, key: BorrowedBytes, reader: RecordReader) throws -> M {
        try decode(bytes, id: UUID(bytes: key), reader: reader)
    }

    // MARK: - Writing

    /// Saves `model`, replacing the record with its ID, and keeps every index in step.
    ///
    /// - Throws: ``KVStoreError/uniqueViolation`` when a unique index holds the value for another model;
    ///   ``KVStoreError/encodingFailed`` when the model does not encode.
    ///
    /// - Parameter writes: What the write transaction collects: the save is recorded in its changes when the
    ///   container is observed, and the references the model holds through relationships that must resolve go into
    ///   its list, checked at the end of the write.
    ///
    /// - Returns: The ID the model's values are stored under: its own, or, when a unique constraint that merges on
    ///   conflict (``UniqueConflictPolicy/update``) found its value held by another stored model, that model's.
    @discardableResult
    func save(_ model: M, in txn: borrowing Transaction, writes: WriteState?) throws -> UUID {
        do {
            try saveWithExternalValues(model, in: txn, writes: writes)
            return model.id
        } catch let merge as UniqueMerge {
            // Nothing of the new model's record was written; the external values stored for it go.
            try externalTable?.deleteAll(owner: model.id, in: txn)
            let merged = try reidentified(model, as: merge.holder, index: merge.index)
            do {
                try saveWithExternalValues(merged, in: txn, writes: writes)
            } catch let error as KVStoreError where error == .uniqueViolation {
                // The holder is stored, so another conflict is a second stored model holding one of its values.
                throw KVStoreError(
                    .uniqueViolation, entity: name, id: model.id, field: error.field,
                    message: "\(name) \(model.id) would merge into \(name) \(merge.holder), which holds its "
                        + "\(merge.index), but two stored models hold its unique values (\(error.message))",
                    cause: error)
            }
            writes?.merges[model.id] = merge.holder
            return merge.holder
        }
    }

    private func saveWithExternalValues(_ model: M, in txn: borrowing Transaction, writes: WriteState?) throws {
        // A model without external values is saved as it is, not copied.
        guard externalTable != nil else { return try saveRecord(model, in: txn, changes: nil, writes: writes) }
        try saveRecord(
            try storeExternalValues(of: model, in: txn, writes: writes), in: txn, changes: nil, writes: writes)
    }

    /// `model`'s record as a save would write it now, for comparing a ``PersistentModel`` object with its encoding as
    /// fetched, with an encoder the caller reuses: the field table is not changed (a name new to it is numbered in a
    /// copy).
    ///
    /// - Throws: ``KVStoreError/encodingFailed`` when the model does not encode.
    func comparisonEncoding(of model: M, encoder: inout RecordEncoder) throws -> [UInt8] {
        var fields = self.fields
        return try comparisonEncoding(of: model, fields: &fields, encoder: &encoder)
    }

    /// `model`'s record as a save would write it now with `fields`, to which new names are added.
    private func comparisonEncoding(
        of model: M, fields: inout FieldTable, encoder: inout RecordEncoder
    ) throws -> [UInt8] {
        encoder.encodesUnsavedExternalValues = true
        defer { encoder.encodesUnsavedExternalValues = false }
        var bytes: [UInt8] = []
        do {
            if codesFields {
                try encoder.encodeFields(fields: &fields, into: &bytes) { try fieldCoding.write(model, $0) }
            } else {
                try encoder.encode(model, fields: &fields, into: &bytes)
            }
        } catch {
            throw KVStoreError(
                .encodingFailed, entity: name, id: model.id, message: "The \(name) \(model.id) does not encode",
                cause: error)
        }
        return bytes
    }

    /// `model`, or, for a ``PersistentModel`` with external attributes, a copy of it: a write sets the descriptors of
    /// the values it stores into the model it saves, which must not be the caller's object, since the transaction may
    /// yet abort or run again.
    ///
    /// - Throws: ``KVStoreError/encodingFailed`` when the model does not encode, and what decoding its record throws.
    func writableCopy(of model: M) throws -> M {
        guard hasExternalAttributes, M.self is AnyClass else { return model }
        var fields = self.fields
        var encoder = RecordEncoder()
        let bytes = try comparisonEncoding(of: model, fields: &fields, encoder: &encoder)
        var copy = try bytes.withBorrowedBytes { try decodeRecord($0, fields: fields, decoder: RecordDecoder()) }
        for attribute in externalAttributes { attribute.set(attribute.value(in: model), in: &copy) }
        return copy
    }

    /// `model` with the ID `id`: its record with the `id` field set to `id`, decoded again, to merge it into the
    /// stored model of that ID.
    ///
    /// - Throws: ``KVStoreError/uniqueViolation`` when the model keeps its ID elsewhere than in an `id` field, so that
    ///   it cannot be merged; what encoding and decoding the model throw.
    private func reidentified(_ model: M, as id: UUID, index: String) throws -> M {
        // External values not saved yet do not encode: they stand aside, and go back on the merged model.
        var encodable = try writableCopy(of: model)
        let placeholder = ExternalData(stored: ExternalValueDescriptor(valueID: id, byteCount: 0, chunkSize: 1))
        let externalValues = externalAttributes.map { $0.value(in: model) }
        for (attribute, value) in zip(externalAttributes, externalValues) where value != nil {
            attribute.set(placeholder, in: &encodable)
        }
        var fields = self.fields
        var encoder = RecordEncoder()
        var bytes: [UInt8] = []
        if codesFields {
            try encoder.encodeFields(fields: &fields, into: &bytes) { try fieldCoding.write(encodable, $0) }
        } else {
            try encoder.encode(encodable, fields: &fields, into: &bytes)
        }
        let record = try bytes.withBorrowedBytes { try RecordValue.decode(from: $0, fields: fields) }
        if case .object(var entries) = record, let position = entries.firstIndex(where: { $0.name == "id" }) {
            switch entries[position].value {
            case .uuid: entries[position].value = .uuid(id)
            case .string: entries[position].value = .string(id.uuidString)
            default: break
            }
            let rebuilt = RecordValue.object(entries).encode(fields: &fields)
            var merged = try rebuilt.withBorrowedBytes {
                try decodeRecord($0, fields: fields, decoder: RecordDecoder())
            }
            for (attribute, value) in zip(externalAttributes, externalValues) { attribute.set(value, in: &merged) }
            if merged.id == id { return merged }
        }
        throw KVStoreError(
            .uniqueViolation, entity: name, id: model.id, field: index,
            message: "\(name) \(model.id) has the \(index) of \(name) \(id), whose unique index merges on conflict, "
                + "but its ID is not stored in a field named id, so it cannot take that model's place; nothing of this "
                + "save was written")
    }

    /// Saves `model` as ``save(_:in:writes:)`` does, without checking its references (a delete rule rewriting a
    /// referrer), and records the save in `changes`.
    func save(_ model: M, in txn: borrowing Transaction, changes: ChangeCollector?) throws {
        guard externalTable != nil else { return try saveRecord(model, in: txn, changes: changes, writes: nil) }
        try saveRecord(try storeExternalValues(of: model, in: txn, writes: nil), in: txn, changes: changes, writes: nil)
    }

    /// Saves `model`, whose external values are stored, recording the save in `changes` or in the changes of
    /// `writes`, and its references in the list of `writes`.
    ///
    /// The transaction's state is passed whole and read in place: passing its change collector apart would retain
    /// and release it for every save.
    private func saveRecord(
        _ model: M, in txn: borrowing Transaction, changes: ChangeCollector?, writes: WriteState?
    ) throws {
        let id = model.id
        // Only writers take the lock, and LMDB runs one writer at a time; holding it for the whole save lets the
        // read of the old record reuse the writer's decoder.
        return try withKey(id) { key in
            try state.withLock { state in
                // The writer's key sets and record buffer, taken out of the state while `write` reads the rest of
                // it (reading the state while one of its parts is in use would copy all of it).
                var keys = IndexKeySets()
                swap(&keys, &state.keys)
                defer { swap(&keys, &state.keys) }
                var buffer: [UInt8] = []
                swap(&buffer, &state.buffer)
                defer { swap(&buffer, &state.buffer) }
                keys.new.removeAll()
                indexKeys(of: model, into: &keys.new)
                do {
                    if codesFields {
                        try state.encoder.encodeFields(fields: &state.fields, into: &buffer) { fields in
                            try fieldCoding.write(model, fields)
                        }
                    } else {
                        try state.encoder.encode(model, fields: &state.fields, into: &buffer)
                    }
                } catch {
                    throw KVStoreError(
                        .encodingFailed, entity: name, id: id, message: "The \(name) \(id) does not encode",
                        cause: error)
                }
                let derived =
                    state.derived.isEmpty
                    ? nil
                    : try derivedChanges(state.derived, id: id, key: key, record: buffer, fields: state.fields, in: txn)
                let replaced = try buffer.withBorrowedBytes { record in
                    try write(record, of: model, key: key, id: id, keys: &keys, state: &state, in: txn)
                }
                try derived?.apply(key: key, in: txn)
                (changes ?? writes?.changes)?.saved(id, in: name, replacing: replaced)
                // The entry goes into the transaction once per new revision of the field table, not once per save.
                let written = state.written?.transaction == txn.id ? state.written?.revision : nil
                if state.fields.revision != (written ?? state.persistedRevision) {
                    var entry = state.entry
                    entry.fields = state.fields
                    try Catalog.write(entry, key: Catalog.entityKey(name), in: txn, table: catalogTable)
                    state.written = (txn.id, state.fields.revision)
                    writes?.catalogChanged = true
                }
                // Passed in place: binding the list to a constant would retain and release it for every save.
                if let writes, !referenceIndexes.isEmpty {
                    collectReferences(of: id, indexKeys: keys.new, into: writes)
                }
            }
        }
    }

    /// Writes an encoded record and moves its index entries from the old record's keys to `keys.new`, computing
    /// the old ones in `keys.old`.
    ///
    /// With no unique index, the record is put first: the put finds the old record in the same descent of the
    /// tree, so a new model costs no separate lookup. With a unique index, the index entries go first, so that a
    /// violation throws before the record is written.
    ///
    /// - Parameter state: The writer's state, whose decoder reads the old record; `inout` only because a borrow of
    ///   the closure-captured state would copy it.
    /// - Returns: Whether the record replaced one.
    private func write(
        _ record: BorrowedBytes,
        of model: M,
        key: BorrowedBytes,
        id: UUID,
        keys: inout IndexKeySets,
        state: inout EntityWriterState,
        in txn: borrowing Transaction
    ) throws -> Bool {
        keys.old.removeAll()
        var replaced = false
        if hasUniqueIndex {
            if let bytes = try txn.bytes(forKey: key, in: records) {
                replaced = true
                indexKeys(of: try decode(bytes, id: id, fields: state.fields, decoder: state.decoder), into: &keys.old)
            }
            if let conflict = try updateIndexEntries(
                old: keys.old, new: keys.new, key: key, fields: state.fields, in: txn)
            {
                let index = indexes[conflict.index].description
                // A new model merges into the holder; a stored one never takes another's value.
                if index.onConflict == .update, !replaced,
                    let merge = UniqueMerge(owner: conflict.owner, index: index.name)
                {
                    throw merge
                }
                throw uniqueViolation(index, model: model, owner: conflict.owner)
            }
            try txn.put(record, forKey: key, in: records)
            return replaced
        }
        // A key after every stored one (time-ordered IDs saved in order, as a chunk is) is appended: LMDB goes to
        // the last leaf without searching the pages on the way (8% of a chunked insert's instructions). The first
        // key that is not after the last stops the attempts for the rest of the transaction, so a write of random
        // IDs or of stored models pays one refused append.
        if state.appendRefused != txn.id {
            if try txn.append(record, forKey: key, in: records) {
                _ = try updateIndexEntries(old: keys.old, new: keys.new, key: key, fields: state.fields, in: txn)
                return false
            }
            state.appendRefused = txn.id
        }
        if let bytes = try txn.putIfAbsent(record, forKey: key, in: records) {
            replaced = true
            // The old record's bytes are valid until the next write: decode them before overwriting.
            if !indexes.isEmpty {
                indexKeys(of: try decode(bytes, id: id, fields: state.fields, decoder: state.decoder), into: &keys.old)
            }
            try txn.put(record, forKey: key, in: records)
        }
        _ = try updateIndexEntries(old: keys.old, new: keys.new, key: key, fields: state.fields, in: txn)
        return replaced
    }

    /// The entry changes of the derived indexes for the record under `key` becoming `record`, checked before anything
    /// is written.
    private func derivedChanges(
        _ derived: [DerivedIndex], id: UUID, key: BorrowedBytes, record: [UInt8]?, fields: FieldTable,
        in txn: borrowing Transaction
    ) throws -> DerivedIndexChanges {
        let old = try txn.bytes(forKey: key, in: records).map { try recordValue($0, id: id, fields: fields) }
        let new = try record.map { try $0.withBorrowedBytes { try recordValue($0, id: id, fields: fields) } }
        return try DerivedIndexChanges(
            derived, entity: name, id: id, old: old, new: new, key: key, records: records, fields: fields,
            hash: longKeyHash, mergesNewModels: true, in: txn)
    }

    /// A record as a value tree, for the derived indexes.
    private func recordValue(_ bytes: BorrowedBytes, id: UUID, fields: FieldTable) throws -> RecordValue {
        do {
            return try RecordValue.decode(from: bytes, fields: fields)
        } catch {
            throw KVStoreError.undecodable(error, entity: name, id: id, table: Catalog.recordTableName(name))
        }
    }

    /// Appends the index keys of `model` to `keys`, as the keys of each index of ``indexes`` by position.
    private func indexKeys(of model: M, into keys: inout IndexKeySet) {
        withAddress(of: model) { model in
            for (position, append) in keyAppenders.enumerated() { append(model, position, &keys) }
        }
    }

    /// Records that a write transaction committed: if it wrote the entity's catalog entry, that revision of the
    /// field table is now durable.
    func didCommit(transaction: Int) {
        state.withLock { state in
            guard let written = state.written, written.transaction == transaction else { return }
            state.persistedRevision = written.revision
            state.written = nil
        }
    }

    /// Forgets a catalog entry written by an earlier write transaction that did not commit, as a new one begins.
    ///
    /// LMDB gives the next write transaction the ID of one that aborted (and a write retried after the map grew
    /// keeps its ID), so the ID alone cannot tell that the entry went with the abort.
    func didBeginWrite() {
        state.withLock { $0.written = nil }
    }

    /// Brings the field table in line with the catalog entry `stored`, after another process (or container) of the
    /// store interned names that this one has not read.
    ///
    /// In a write transaction the catalog is the latest and no other write of this container is under way, so the
    /// catalog's table replaces this one whenever it does not begin this one: names interned here by a transaction
    /// that aborted go, as no record uses them. In a read transaction a write of this container may be under way
    /// and the snapshot may be older than this table, so the table is only ever extended.
    func refreshFields(from stored: FieldTable, isWriting: Bool) {
        state.withLock { state in
            let mine = state.fields.names
            let extends = stored.count > mine.count && Array(stored.names.prefix(mine.count)) == mine
            let conflicts = Array(mine.prefix(stored.count)) != stored.names
            guard extends || (isWriting && conflicts) else { return }
            state.fields = stored
            state.persistedRevision = stored.revision
            state.written = nil
        }
    }

    /// Takes the catalog entry a write transaction reads, after another process or container changed the schema:
    /// its fields, the indexes that writes maintain from the records, and the relationships whose delete rules
    /// apply.
    func reload(_ entry: EntityCatalog, derivedIndexes: [DerivedIndex]) {
        refreshFields(from: entry.fields, isWriting: true)
        state.withLock { state in
            state.entry = entry
            state.derived = derivedIndexes
        }
    }

    /// Deletes the model stored under `id`, its index entries and its external values.
    ///
    /// - Parameter reader: Decodes the old record, whose index entries go; pass one to a series of deletes.
    /// - Returns: The deleted model, or `nil` when there was none.
    @discardableResult
    func delete(
        _ id: UUID, in txn: borrowing Transaction, changes: ChangeCollector? = nil, reader: RecordReader? = nil
    ) throws -> M? {
        try withKey(id) { key in
            let old = try model(for: id, in: txn, reader: reader ?? self.reader)
            guard let old else { return nil }
            let keepsValues = changes?.keepsDeletedValues == true
            let (derived, fields, preserved) = state.withLock { state in
                (state.derived, state.fields, keepsValues ? state.entry.preservedOnDeletion : [])
            }
            if let changes, !preserved.isEmpty {
                try keepPreservedValues(preserved, of: id, key: key, fields: fields, in: txn, changes: changes)
            }
            if !derived.isEmpty {
                try derivedChanges(derived, id: id, key: key, record: nil, fields: fields, in: txn).apply(
                    key: key, in: txn)
            }
            var oldKeys = IndexKeySet(longKeyHash: longKeyHash)
            indexKeys(of: old, into: &oldKeys)
            _ = try updateIndexEntries(old: oldKeys, new: IndexKeySet(longKeyHash: longKeyHash), key: key, in: txn)
            try txn.delete(forKey: key, in: records)
            try externalTable?.deleteAll(owner: id, in: txn)
            changes?.deleted(id, in: name)
            return old
        }
    }

    /// Gives `changes` the values of the fields `preserved` (those the entity preserves on deletion) of the record
    /// under `key`, for its history tombstone.
    private func keepPreservedValues(
        _ preserved: [String], of id: UUID, key: BorrowedBytes, fields: FieldTable, in txn: borrowing Transaction,
        changes: ChangeCollector
    ) throws {
        guard
            let record = try txn.withBytes(
                forKey: key, in: records,
                { bytes in
                    try bytes.map { try RecordValue.decode(from: $0, fields: fields) }
                })
        else { return }
        changes.keep(record.fields(named: preserved), of: id, in: name)
    }

    /// Moves the index entries of the record under `key` from `old` to `new` keys (one list per index, `nil` when
    /// there was no record).
    ///
    /// - Returns: The index whose unique constraint `new` breaks and the ID bytes of the model that holds the value,
    ///   or `nil`; on a conflict the caller throws, which aborts the transaction.
    private func updateIndexEntries(
        old: IndexKeySet,
        new: IndexKeySet,
        key: BorrowedBytes,
        fields: FieldTable? = nil,
        in txn: borrowing Transaction
    ) throws -> (index: Int, owner: [UInt8])? {
        // Unique constraints are checked before anything is written, so that a refused save changes nothing even
        // when the caller goes on with the transaction.
        if hasUniqueIndex {
            for position in 0..<indexTables.count where indexTables[position].isUnique {
                let conflict = try new.withOnlyKey(of: position) { newKey -> [UInt8]? in
                    guard let newKey, uniqueKeyChanged(old: old, new: new, at: position) else { return nil }
                    let whole = IndexKey.isGrouped(newKey) ? new.wholeKey(of: newKey, index: position) : []
                    return try UniqueIndexEntries.holder(
                        of: newKey, other: key, in: indexTables[position].table, txn: txn
                    ) { holder in
                        // The writer's lock is held: the field table is passed, not read from the state.
                        try holds(
                            holder, wholeKey: whole, position: position,
                            reader: RecordReader(fields: fields ?? self.fields), in: txn)
                    }
                }
                if let conflict { return (position, conflict) }
            }
        }
        for position in 0..<indexTables.count {
            let index = indexTables[position]
            guard index.isUnique else {
                try old.forEachKey(of: position) { indexKey in
                    if !new.contains(indexKey, of: position) {
                        _ = try txn.delete(key, forKey: indexKey, in: index.table)
                    }
                }
                try new.forEachKey(of: position) { indexKey in
                    if !old.contains(indexKey, of: position) { try txn.put(key, forKey: indexKey, in: index.table) }
                }
                continue
            }
            guard uniqueKeyChanged(old: old, new: new, at: position) else { continue }
            try old.withOnlyKey(of: position) { oldKey in
                if let oldKey { try UniqueIndexEntries.remove(oldKey, owner: key, in: index.table, txn: txn) }
            }
            try new.withOnlyKey(of: position) { newKey in
                if let newKey { try UniqueIndexEntries.place(newKey, owner: key, in: index.table, txn: txn) }
            }
        }
        return nil
    }

    /// Whether a save changes the value a unique index holds for the model: its stored key changed, or, for a cut
    /// key, the whole value behind it.
    private func uniqueKeyChanged(old: IndexKeySet, new: IndexKeySet, at position: Int) -> Bool {
        old.withOnlyKey(of: position) { oldKey in
            new.withOnlyKey(of: position) { newKey in
                guard let oldKey, let newKey else { return oldKey != nil || newKey != nil }
                guard oldKey.elementsEqual(newKey) else { return true }
                return IndexKey.isGrouped(newKey)
                    && old.wholeKey(of: oldKey, index: position) != new.wholeKey(of: newKey, index: position)
            }
        }
    }

    /// Adds the entry of the model whose ID bytes are `owner`, under the stored key `indexKey` (of the whole key
    /// `whole`), to the unique index named `index`, unless another model holds the value: an index build's write.
    ///
    /// - Returns: The ID bytes of the model that holds the value, or `nil` when the entry was added (or was there).
    func addUniqueEntry(
        _ indexKey: [UInt8], whole: [UInt8], index name: String, owner: BorrowedBytes,
        in txn: borrowing Transaction
    ) throws -> [UInt8]? {
        guard let position = indexPositions[name] else { return nil }
        let table = indexTables[position].table
        let reader = self.reader
        return try indexKey.withBorrowedBytes { storedKey in
            let holder = try UniqueIndexEntries.holder(of: storedKey, other: owner, in: table, txn: txn) { holder in
                try holds(holder, wholeKey: whole, position: position, reader: reader, in: txn)
            }
            if holder == nil { try UniqueIndexEntries.place(storedKey, owner: owner, in: table, txn: txn) }
            return holder
        }
    }

    /// Whether the stored model whose ID is `holder` has the whole key `wholeKey` in the index at `position`: how a
    /// unique index tells values apart that share a cut key.
    private func holds(
        _ holder: [UInt8], wholeKey: [UInt8], position: Int, reader: RecordReader, in txn: borrowing Transaction
    ) throws -> Bool {
        guard holder.count == 16 else { return false }
        let id = holder.withBorrowedBytes { UUID(bytes: $0) }
        // An entry whose model is gone holds nothing (kvtool check reports it).
        guard let model = try model(for: id, in: txn, reader: reader) else { return false }
        var keys = IndexKeySet(longKeyHash: longKeyHash)
        indexKeys(of: model, into: &keys)
        var holds = false
        keys.forEachKey(of: position) { if keys.wholeKey(of: $0, index: position) == wholeKey { holds = true } }
        return holds
    }

    private func uniqueViolation(_ index: ModelIndex<M>, model: M, owner: [UInt8]) -> KVStoreError {
        let values = index.keyPaths.map { describe(model[keyPath: $0]) }.joined(separator: ", ")
        let existing = owner.count == 16 ? owner.withBorrowedBytes { UUID(bytes: $0).uuidString } : "another model"
        let fields = index.fields.joined(separator: ", ")
        return KVStoreError(
            .uniqueViolation, entity: name, id: model.id, field: fields,
            message: "\(name) \(model.id): \(fields) \(values) is already used by \(name) \(existing); "
                + "nothing of this save was written")
    }

    private func describe(_ value: Any) -> String {
        if let text = value as? String { return "'\(text)'" }
        if let optional = value as? any AnyOptional {
            return optional.wrappedValue.map(describe) ?? "nil"
        }
        return String(describing: value)
    }
}

/// A ``FieldCodable`` model's own field coding, reached from code that only knows it as a `Model`.
struct FieldCoding<M>: Sendable {
    /// Writes a model's fields.
    let write: @Sendable (M, FieldWriter) throws -> Void
    /// Reads a model from a record's fields.
    let read: @Sendable (FieldReader) throws -> M

    /// Functions for a model that is not coded through its fields, which are never called: they throw.
    static func unavailable() -> FieldCoding {
        FieldCoding(
            write: { _, _ in throw KVStoreError(.encodingFailed, message: "\(M.self) is not coded through its fields")
            },
            read: { _ in throw KVStoreError(.corruptRecord, message: "\(M.self) is not coded through its fields") })
    }

    /// The field coding of `type`, or `nil` when it is not ``FieldCodable``.
    static func of(_ type: M.Type) -> FieldCoding? {
        guard let coding = type as? any FieldCodable.Type else { return nil }
        return make(coding)
    }

    /// The field coding of `M`, which is `F`: the cast above found it, so `knownTypeCast` converts functions of `F`
    /// to functions of their own type, without the run-time cast `as!` would make for every model. Casting the
    /// functions whole, rather than each model, passes models in and out as they are instead of copying them.
    private static func make<F: FieldCodable>(_: F.Type) -> FieldCoding {
        let write: @Sendable (F, FieldWriter) throws -> Void = { model, fields in try model.write(to: fields) }
        let read: @Sendable (FieldReader) throws -> F = { fields in try F(fields: fields) }
        return FieldCoding(
            write: knownTypeCast(write, to: (@Sendable (M, FieldWriter) throws -> Void).self),
            read: knownTypeCast(read, to: (@Sendable (FieldReader) throws -> M).self))
    }
}

/// An index table and what maintaining it needs to know, whatever the model type.
struct IndexTable: Sendable {
    let table: Table
    let isUnique: Bool
}

/// An entity's field table and the writer's buffers. Only writers change it, and LMDB runs one writer at a time.
private struct EntityWriterState {
    var fields: FieldTable
    /// The revision of `fields` the catalog holds for sure: names interned (or kinds first seen) by a transaction
    /// that then aborted are in `fields` but not in the catalog.
    var persistedRevision: Int
    /// The revision the catalog entry written by a transaction holds, until that transaction commits.
    var written: (transaction: Int, revision: Int)?
    /// The entity's catalog entry as last read (its field table aside, which is `fields`): the store's indexes,
    /// relationships and external fields, declared or not.
    var entry: EntityCatalog
    /// The indexes of the store that the model does not declare, maintained from the records.
    var derived: [DerivedIndex]
    var encoder = RecordEncoder()
    var buffer: [UInt8] = []
    /// The index keys of the model being saved and of the one it replaces.
    var keys: IndexKeySets
    /// Decodes the record a save replaces.
    let decoder = RecordDecoder()
    /// The write transaction in which a record's append was refused, its key not being after the table's last: the
    /// rest of that transaction's saves put their records without trying (see `write`).
    var appendRefused: Int?
}

/// The index keys of a model being saved and of the model it replaces, reused from save to save.
struct IndexKeySets {
    var new: IndexKeySet
    var old: IndexKeySet

    init(longKeyHash: LongKeyHash = .standard) {
        new = IndexKeySet(longKeyHash: longKeyHash)
        old = IndexKeySet(longKeyHash: longKeyHash)
    }
}

/// What decoding a batch of records needs: the entity's field table, and one decoder reused for every record.
struct RecordReader {
    let fields: FieldTable
    let decoder = RecordDecoder()
}
