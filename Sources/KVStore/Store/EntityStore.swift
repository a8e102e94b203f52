import Foundation
import LMDB

/// What the container knows of an entity whatever its model type.
protocol AnyEntityStore: AnyObject, Sendable {
    /// The entity's name.
    var name: String { get }
    /// The model type.
    var modelType: any Model.Type { get }
    /// The entity's relationships.
    var relationships: [RelationshipInfo] { get }
    /// Whether a model with `id` is stored.
    func exists(_ id: UUID, in txn: borrowing Transaction) throws -> Bool
    /// The models whose `field` holds each of `ids`, by referenced ID.
    func referrers(to ids: [UUID], field: String, in txn: borrowing Transaction) throws -> [UUID: [UUID]]
    /// The IDs the models with `ids` hold in a stored relationship.
    func storedReferences(of ids: [UUID], relationship name: String, in txn: borrowing Transaction) throws -> [UUID]
    /// Removes `ids` from `field` of the models `referrers`.
    func removeReferences(
        to ids: Set<UUID>,
        field: String,
        from referrers: [UUID],
        in txn: borrowing Transaction,
        changes: ChangeCollector?
    ) throws
    /// Deletes models and their index entries, without delete rules.
    func deleteModels(_ ids: [UUID], in txn: borrowing Transaction, changes: ChangeCollector?) throws
    /// The stored models with `ids`, in key order; missing IDs are skipped.
    func anyModels(for ids: [UUID], in txn: borrowing Transaction) throws -> [any Model]
}

/// An entity's tables, field names and indexes, and the record-level operations on them.
///
/// Every operation runs inside a transaction it is lent, so that callers group them as they need: a context's save
/// is one write transaction, a batch fetch one read transaction.
final class EntityStore<M: Model>: AnyEntityStore {
    let name: String
    let records: Table
    let indexes: [StoredIndex]
    let relationshipDescriptions: [Relationship<M>]
    /// The relationships without their model types, in the order of `relationshipDescriptions`; computed once,
    /// since naming a target entity asks the runtime for generic metadata.
    let relationships: [RelationshipInfo]
    /// For each relationship whose references must resolve, the position of the index on its field.
    let referenceIndexes: [(index: Int, field: String, target: String)]
    let catalogTable: Table
    private let state: Locked<FieldState>

    var modelType: any Model.Type { M.self }

    /// An index of the entity with its table.
    struct StoredIndex: Sendable {
        let description: ModelIndex<M>
        let table: Table
    }

    /// The field table and the encoder's buffers. Only writers change it, and LMDB runs one writer at a time.
    private struct FieldState {
        var fields: FieldTable
        /// The revision of `fields` the catalog holds for sure: names interned (or kinds first seen) by a
        /// transaction that then aborted are in `fields` but not in the catalog.
        var persistedRevision: Int
        /// The revision the catalog entry written by a transaction holds, until that transaction commits.
        var written: (transaction: Int, revision: Int)?
        var encoder = RecordEncoder()
        var buffer: [UInt8] = []
    }

    init(
        name: String,
        records: Table,
        indexes: [StoredIndex],
        relationships: [Relationship<M>],
        catalogTable: Table,
        fields: FieldTable
    ) {
        self.name = name
        self.records = records
        self.indexes = indexes
        self.relationshipDescriptions = relationships
        self.relationships = Self.describe(relationships)
        self.referenceIndexes = Self.referenceIndexes(self.relationships, indexes: indexes)
        self.catalogTable = catalogTable
        self.state = Locked(FieldState(fields: fields, persistedRevision: fields.revision))
    }

    /// The field table as it stands.
    var fields: FieldTable {
        state.withLock { $0.fields }
    }

    /// A reader for the records as they stand: the field table and a decoder to reuse across a batch.
    var reader: RecordReader {
        RecordReader(fields: fields)
    }

    /// The catalog entry of the entity as it stands.
    func catalogEntry(fields: FieldTable) -> EntityCatalog {
        EntityCatalog(
            name: name, fields: fields,
            indexes: indexes.map {
                IndexCatalog(
                    name: $0.description.name, fields: $0.description.fields, isUnique: $0.description.isUnique,
                    isMultiEntry: $0.description.isMultiEntry, isReady: true)
            }, relationships: relationships.map(\.catalog))
    }

    // MARK: - Reading

    /// The model stored under `id`, or `nil`.
    func model(for id: UUID, in txn: borrowing Transaction, reader: RecordReader) throws -> M? {
        try withKey(id) { key in
            try txn.withUnsafeBytes(forKey: key, in: records) { bytes in
                try bytes.map { try decode($0, id: id, reader: reader) }
            }
        }
    }

    /// Decodes a record, turning any failure into ``KVStoreError/corruptRecord`` naming the entity and the ID.
    func decode(_ bytes: UnsafeRawBufferPointer, id: UUID, reader: RecordReader) throws -> M {
        do {
            return try reader.decoder.decode(M.self, from: bytes, fields: reader.fields)
        } catch {
            throw KVStoreError(
                .corruptRecord, entity: name, id: id,
                message: "The stored \(name) \(id) does not decode: the store is damaged, or the model changed "
                    + "incompatibly", underlying: error)
        }
    }

    /// Decodes a record whose key is the 16 bytes in `key`.
    func decode(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, reader: RecordReader) throws -> M {
        try decode(bytes, id: UUID(bytes: key), reader: reader)
    }

    // MARK: - Writing

    /// Saves `model`, replacing the record with its ID, and keeps every index in step.
    ///
    /// - Throws: ``KVStoreError/uniqueViolation`` when a unique index holds the value for another model;
    ///   ``KVStoreError/encodingFailed`` when the model does not encode.
    ///
    /// - Parameter changes: Where to record the save, when the container is observed.
    /// - Returns: The references the model holds through relationships that must resolve, for the end of the write.
    @discardableResult
    func save(_ model: M, in txn: borrowing Transaction, changes: ChangeCollector? = nil) throws -> [PendingReference] {
        let id = model.id
        var references: [PendingReference] = []
        try withKey(id) { key in
            if !indexes.isEmpty {
                let old = try self.model(for: id, in: txn, reader: reader)
                let newKeys = indexes.map { $0.description.keys(model) }
                try updateIndexes(old: old, new: model, newKeys: newKeys, key: key, in: txn)
                references = requiredReferences(of: model, indexKeys: newKeys)
                changes?.saved(id, in: name, replacing: old != nil)
            } else if let changes {
                changes.saved(id, in: name, replacing: try txn.containsKey(key, in: records))
            }
            try state.withLock { state in
                do {
                    try state.encoder.encode(model, fields: &state.fields, into: &state.buffer)
                } catch {
                    throw KVStoreError(
                        .encodingFailed, entity: name, id: id, message: "The \(name) \(id) does not encode",
                        underlying: error)
                }
                try txn.put(state.buffer, forKey: key, in: records)
                // The entry goes into the transaction once per new revision of the field table, not once per save.
                let written = state.written?.transaction == txn.id ? state.written?.revision : nil
                if state.fields.revision != (written ?? state.persistedRevision) {
                    try Catalog.write(
                        catalogEntry(fields: state.fields), key: Catalog.entityKey(name), in: txn, table: catalogTable)
                    state.written = (txn.id, state.fields.revision)
                }
            }
        }
        return references
    }

    /// Records that a write transaction began: a catalog entry written by an earlier one is not in it.
    ///
    /// LMDB gives a write transaction the ID of the last commit plus one, so a transaction that did not commit (it
    /// aborted, or the map grew and the body runs again) shares its ID with the next one.
    func didBegin(transaction: Int) {
        state.withLock { state in state.written = nil }
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

    /// Deletes the model stored under `id` and its index entries.
    ///
    /// - Returns: The deleted model, or `nil` when there was none.
    @discardableResult
    func delete(_ id: UUID, in txn: borrowing Transaction, changes: ChangeCollector? = nil) throws -> M? {
        try withKey(id) { key in
            let old = try model(for: id, in: txn, reader: reader)
            guard let old else { return nil }
            try updateIndexes(old: old, new: nil, newKeys: [], key: key, in: txn)
            try txn.delete(forKey: key, in: records)
            changes?.deleted(id, in: name)
            return old
        }
    }

    /// Moves the index entries of the model stored under `key` from the keys of `old` to `newKeys` (one list per
    /// index, empty for a delete).
    private func updateIndexes(
        old: M?,
        new: M?,
        newKeys keysByIndex: [[[UInt8]]],
        key: UnsafeRawBufferPointer,
        in txn: borrowing Transaction
    ) throws {
        for (position, index) in indexes.enumerated() {
            let oldKeys = old.map(index.description.keys) ?? []
            let newKeys = keysByIndex.isEmpty ? [] : keysByIndex[position]
            for indexKey in oldKeys where !newKeys.contains(indexKey) {
                if index.description.isUnique {
                    // Only remove the entry if it is this model's.
                    let owner = try txn.value(forKey: indexKey, in: index.table)
                    if owner.map({ $0.elementsEqual(key) }) == true {
                        try txn.delete(forKey: indexKey, in: index.table)
                    }
                } else {
                    try txn.delete(Array(key), forKey: indexKey, in: index.table)
                }
            }
            for indexKey in newKeys where !oldKeys.contains(indexKey) {
                if index.description.isUnique {
                    do {
                        try txn.put(key, forKey: indexKey, in: index.table, options: .noOverwrite)
                    } catch LMDBError.keyExists {
                        let owner = try txn.value(forKey: indexKey, in: index.table) ?? []
                        if !owner.elementsEqual(key), let new {
                            throw uniqueViolation(index.description, model: new, owner: owner)
                        }
                    }
                } else {
                    try txn.put(key, forKey: indexKey, in: index.table)
                }
            }
        }
    }

    private func uniqueViolation(_ index: ModelIndex<M>, model: M, owner: [UInt8]) -> KVStoreError {
        let values = index.keyPaths.map { describe(model[keyPath: $0]) }.joined(separator: ", ")
        let existing = owner.count == 16 ? owner.withUnsafeBytes { UUID(bytes: $0).uuidString } : "another model"
        let fields = index.fields.joined(separator: ", ")
        return KVStoreError(
            .uniqueViolation, entity: name, id: model.id, field: fields,
            message: "\(name) \(model.id): \(fields) \(values) is already used by \(name) \(existing); "
                + "nothing of this save was written")
    }

    private func describe(_ value: Any) -> String {
        if let text = value as? String { return "'\(text)'" }
        if let optional = value as? any OptionalProtocol {
            return optional.isNil ? "nil" : describe(optional.unwrapped)
        }
        return String(describing: value)
    }
}

/// Lets a boxed `Optional` be unwrapped for messages.
private protocol OptionalProtocol {
    var isNil: Bool { get }
    var unwrapped: Any { get }
}

extension Optional: OptionalProtocol {
    var isNil: Bool { self == nil }
    var unwrapped: Any { self.map { $0 as Any } ?? "nil" }
}

/// Runs `body` with the 16 bytes of a UUID, the key of its record.
@inline(__always)
func withKey<R>(_ id: UUID, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: id.uuid, body)
}

extension UUID {
    /// A UUID from the first 16 bytes of `bytes`; zero-filled if there are fewer.
    init(bytes: UnsafeRawBufferPointer) {
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(16)))
        }
        self.init(uuid: value)
    }
}

/// What decoding a batch of records needs: the entity's field table, and one decoder reused for every record.
struct RecordReader {
    let fields: FieldTable
    let decoder = RecordDecoder()
}
