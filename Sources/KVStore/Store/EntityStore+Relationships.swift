import Foundation
import LMDB

/// A relationship seen without its model types, for the deletion engine and the catalog.
struct RelationshipInfo: Sendable {
    let name: String
    let target: String
    let inverse: String?
    let deleteRule: DeleteRule
    /// The field of this entity that holds the related IDs, or `nil` for a derived side.
    let field: String?
    /// For a derived side, the target's field that holds this entity's IDs.
    let inverseField: String?
    let isToMany: Bool
    let allowsDangling: Bool

    /// A relationship as the catalog describes it, for an entity or relationship the program does not declare.
    ///
    /// A delete rule this version does not know (written by a newer one) is taken as `deny`: refusing a delete loses
    /// nothing, where guessing could.
    init(catalog: RelationshipCatalog) {
        self.init(
            name: catalog.name, target: catalog.target, inverse: catalog.inverse,
            deleteRule: catalog.knownDeleteRule ?? .deny, field: catalog.field,
            inverseField: catalog.inverseField, isToMany: catalog.knownCardinality == .toMany,
            allowsDangling: catalog.allowsDangling)
    }

    init(
        name: String, target: String, inverse: String?, deleteRule: DeleteRule, field: String?, inverseField: String?,
        isToMany: Bool, allowsDangling: Bool
    ) {
        self.name = name
        self.target = target
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.field = field
        self.inverseField = inverseField
        self.isToMany = isToMany
        self.allowsDangling = allowsDangling
    }

    var catalog: RelationshipCatalog {
        RelationshipCatalog(
            name: name, target: target, inverse: inverse,
            cardinality: (isToMany ? RelationshipCatalog.Cardinality.toMany : .toOne).rawValue, field: field,
            inverseField: inverseField, deleteRule: deleteRule.rawValue, allowsDangling: allowsDangling)
    }
}

/// The entity name of a model type given as an existential.
func entityName<T: StoredModel>(of type: T.Type) -> String {
    T.entity.name
}

extension AnyEntityStore {
    /// The relationship of this entity with `name`.
    func relationship(named name: String) -> RelationshipInfo? {
        allRelationships.first { $0.name == name }
    }
}

extension EntityStore {
    /// Describes relationships without their model types; the container keeps the result.
    static func describe(_ relationships: [Relationship<M>]) -> [RelationshipInfo] {
        relationships.map { relationship in
            // A derived side is always to-many: many models can hold this model's ID in their field.
            let (isToMany, inverseField): (Bool, String?) =
                switch relationship.storage {
                case .field(_, let isToMany, _, _, _): (isToMany, nil)
                case .inverse(let field): (true, field)
                }
            return RelationshipInfo(
                name: relationship.name, target: entityName(of: relationship.target), inverse: relationship.inverse,
                deleteRule: relationship.deleteRule, field: relationship.field, inverseField: inverseField,
                isToMany: isToMany, allowsDangling: relationship.allowsDangling)
        }
    }

    /// Whether a model with `id` is stored.
    func exists(_ id: UUID, in txn: borrowing Transaction) throws -> Bool {
        try withKey(id) { key in try txn.containsKey(key, in: records) }
    }

    /// The positions in `ids` of the IDs no stored model has, in ascending order.
    ///
    /// The IDs are looked up in key order through one cursor, which LMDB serves from the leaf page it is on when it
    /// can; an ID repeated (ten tasks of one project) is looked up once.
    func missing(_ ids: [UUID], in txn: borrowing Transaction) throws -> [Int] {
        var missing: [Int] = []
        try txn.withCursor(on: records) { cursor in
            var last: (id: UUID, found: Bool)?
            for position in exactKeyOrder(of: ids) {
                let id = ids[position]
                let found: Bool
                if let last, last.id == id {
                    found = last.found
                } else {
                    found = try withKey(id) { key in try cursor.value(forKey: key) } != nil
                    last = (id, found)
                }
                if !found { missing.append(position) }
            }
        }
        return missing.sorted()
    }

    /// The models whose `field` holds each of `ids`, in key order, read through the index on `field`: one index read
    /// per ID, then the records. A model holding several of the IDs (many-to-many) is listed under each.
    ///
    /// - Returns: The referring models by referenced ID; IDs nothing refers to are absent.
    func children(of ids: [UUID], field: String, in txn: borrowing Transaction) throws -> [UUID: [M]] {
        let reader = self.reader
        var result: [UUID: [M]] = [:]
        result.reserveCapacity(ids.count)
        try forEachReferrers(to: ids, field: field, in: txn) { parent, childIDs in
            var children: [M] = []
            children.reserveCapacity(childIDs.count)
            for id in childIDs {
                guard let bytes = try withKey(id, { key in try txn.bytes(forKey: key, in: records) }) else {
                    continue
                }
                children.append(try decode(bytes, id: id, reader: reader))
            }
            result[parent] = children
        }
        return result
    }

    /// The IDs of the models whose `field` holds each of `ids`, found through the index on `field`: one index read
    /// per ID, never one lookup per referring record.
    ///
    /// - Returns: The referring models' IDs by referenced ID; IDs nothing refers to are absent.
    func referrers(to ids: [UUID], field: String, in txn: borrowing Transaction) throws -> [UUID: [UUID]] {
        var found: [UUID: [UUID]] = [:]
        try forEachReferrers(to: ids, field: field, in: txn) { id, referring in found[id] = referring }
        return found
    }

    /// Calls `body` with each of `ids`, in key order, and the IDs of the models whose `field` holds it, read through
    /// the index on `field` with one cursor; IDs nothing refers to are skipped.
    private func forEachReferrers(
        to ids: [UUID],
        field: String,
        in txn: borrowing Transaction,
        _ body: (UUID, [UUID]) throws -> Void
    ) throws {
        guard let index = indexes.first(where: { $0.description.fields == [field] }) else {
            throw KVStoreError(
                .invalidRelationship, entity: name, field: field,
                message: "\(name) has no index on \(field), which a relationship needs")
        }
        let isUnique = index.description.isUnique
        var key: [UInt8] = []
        try txn.withCursor(on: index.table) { cursor in
            for position in keyOrder(of: ids) {
                let id = ids[position]
                key.removeAll(keepingCapacity: true)
                Optional(id).appendIndexKey(to: &key)
                var referring: [UUID] = []
                if isUnique {
                    if try cursor.seek(to: key) {
                        _ = try cursor.withCurrentEntry { _, value in referring.append(UUID(bytes: value)) }
                    }
                } else {
                    try cursor.forEachValuePage(ofKey: key) { page in
                        referring.reserveCapacity(referring.count + page.count / 16)
                        for offset in stride(from: 0, to: page.count - 15, by: 16) {
                            referring.append(UUID(bytes: page.extracting(offset..<offset + 16)))
                        }
                    }
                }
                if !referring.isEmpty { try body(id, referring) }
            }
        }
    }

    /// The IDs that the models with `ids` hold in the stored relationship `name`.
    func storedReferences(of ids: [UUID], relationship name: String, in txn: borrowing Transaction) throws -> [UUID] {
        guard let relationship = relationshipDescriptions.first(where: { $0.name == name }),
            case .field(_, _, _, let references, _) = relationship.storage
        else { return [] }
        let reader = self.reader
        var related: [UUID] = []
        for id in ids {
            if let model = try model(for: id, in: txn, reader: reader) { related += references(model) }
        }
        return related
    }

    /// Passes the IDs that the models `referrers` hold in `field` through `rewrittenID`, and saves the models whose IDs
    /// changed, with their indexes.
    func rewriteReferences(
        in field: String,
        of referrers: [UUID],
        through rewrittenID: (UUID) -> UUID?,
        in txn: borrowing Transaction,
        changes: ChangeCollector?
    ) throws {
        let rewrites = relationshipDescriptions.compactMap {
            relationship -> (@Sendable (inout M, (UUID) -> UUID?) -> Bool)? in
            guard case .field(let name, _, _, _, let rewrite) = relationship.storage, name == field else { return nil }
            return rewrite
        }
        guard let rewrite = rewrites.first else {
            throw KVStoreError(
                .invalidRelationship, entity: name, field: field,
                message: "\(name) declares no relationship stored in \(field), so references in it cannot be changed")
        }
        let reader = self.reader
        for id in referrers {
            guard var model = try model(for: id, in: txn, reader: reader), rewrite(&model, rewrittenID) else {
                continue
            }
            try save(model, in: txn, changes: changes)
        }
    }

    /// The stored models with `ids`, read in key order; missing IDs are skipped.
    func anyModels(for ids: [UUID], in txn: borrowing Transaction) throws -> [any StoredModel] {
        try models(for: ids.sorted { $0.isOrdered(before: $1) }, in: txn).compactMap { $0 }
    }

    /// Deletes the models with `ids` and their index entries, without applying delete rules.
    func deleteModels(_ ids: [UUID], in txn: borrowing Transaction, changes: ChangeCollector?) throws {
        let reader = self.reader
        for id in ids.sorted(by: { $0.isOrdered(before: $1) }) {
            try delete(id, in: txn, changes: changes, reader: reader)
        }
    }

    /// Records the references the model `id` holds through relationships that must resolve, read from its freshly
    /// computed index keys (a stored relationship's field is indexed, and each of its keys is a presence byte and the
    /// 16 bytes of a referenced ID), so the model is not read through key paths a second time.
    ///
    /// - Parameter indexKeys: The model's keys, one list per index of ``indexes``.
    func collectReferences(of id: UUID, indexKeys: IndexKeySet, into writes: WriteState) {
        for reference in referenceIndexes {
            indexKeys.forEachKey(of: reference.index) { key in
                guard key.count == 17, key[0] == IndexKey.present else { return }
                writes.references.append(
                    PendingReference(
                        entity: name, id: id, field: reference.field, target: reference.target,
                        targetID: UUID(bytes: key.extracting(1...))))
            }
        }
    }

    /// Where `collectReferences(of:indexKeys:into:)` finds each checked relationship's IDs: the index on its field.
    static func referenceIndexes(
        _ relationships: [RelationshipInfo],
        indexes: [StoredIndex]
    ) -> [(index: Int, field: String, target: String)] {
        relationships.compactMap { relationship in
            guard !relationship.allowsDangling, let field = relationship.field,
                let position = indexes.firstIndex(where: { $0.description.fields == [field] })
            else { return nil }
            return (position, field, relationship.target)
        }
    }
}

/// A reference a write made, to be resolved before it commits (so that the order of inserts in a save is free).
struct PendingReference: Sendable {
    /// The entity of the referring model.
    let entity: String
    /// The referring model.
    let id: UUID
    /// The field that holds the reference.
    let field: String
    /// The referenced entity.
    let target: String
    /// The referenced model.
    let targetID: UUID
}
