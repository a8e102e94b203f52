import Foundation
import KVStore
import LMDB

/// A relationship of an entity resolved against the catalog: where its IDs come from and where its targets live.
///
/// A relationship with a stored field reads the IDs from the record (`UUID?` for to-one, `[UUID]` for
/// many-to-many). One without (the derived side of a one-to-many) finds them in the target's index named after the
/// inverse's field, looking up the record's own ID.
///
/// ```swift
/// let tasks = try RelationshipPath(named: "tasks", of: project, in: store)
/// let ids = try store.environment.read { txn in try tasks.relatedIDs(of: record, id: id, txn: txn) }
/// ```
package struct RelationshipPath {
    /// Where the related IDs come from.
    package enum Source {
        /// A field of the record.
        case field(String)
        /// An index of the target, looked up with the record's ID.
        case index(IndexCatalog, Table)
    }

    /// The relationship as the catalog describes it.
    package let relationship: RelationshipCatalog
    /// The entity on the other side.
    package let target: EntityCatalog
    /// The target's record table.
    package let targetRecords: Table
    /// Where the related IDs come from.
    package let source: Source

    /// Resolves the relationship `name` of `entity`.
    ///
    /// - Throws: ``InspectionError/notFound`` when the entity has no such relationship, its target is not in the
    ///   catalog, or a derived relationship has no inverse or no index to follow; ``InspectionError/damaged`` when
    ///   a table is missing; what LMDB throws.
    package init(named name: String, of entity: EntityCatalog, in store: InspectedStore) throws {
        guard let relationship = entity.relationships.first(where: { $0.name == name }) else {
            let known = entity.relationships.map(\.name)
            throw InspectionError(
                .notFound,
                "Unknown relationship '\(name)': \(entity.name) has "
                    + (known.isEmpty ? "no relationships" : "the relationships " + known.joined(separator: ", ")))
        }
        try self.init(relationship, of: entity, in: store)
    }

    /// Resolves a relationship of `entity`.
    ///
    /// - Throws: ``InspectionError/notFound`` when the target is not in the catalog, or a derived relationship has no
    ///   inverse or no index to follow; ``InspectionError/damaged`` when a table is missing; what LMDB throws.
    package init(_ relationship: RelationshipCatalog, of entity: EntityCatalog, in store: InspectedStore) throws {
        self.relationship = relationship
        target = try store.entity(named: relationship.target)
        targetRecords = try store.recordTable(of: target)
        if let field = relationship.field {
            source = .field(field)
            return
        }
        let what = "\(entity.name).\(relationship.name)"
        guard let inverseField = Self.derivedField(of: relationship, entity: entity, target: target) else {
            throw InspectionError(
                .notFound,
                "\(what) is derived, but the catalog does not tell which field of \(target.name) holds the IDs: "
                    + "\(target.name) declares no single to-one or many-to-many relationship back to \(entity.name)")
        }
        guard
            let index = target.indexes.first(where: { $0.name == inverseField })
                ?? target.indexes.first(where: { $0.fields == [inverseField] })
        else {
            throw InspectionError(
                .notFound, "\(what) is derived from \(target.name).\(inverseField), which has no index to follow")
        }
        source = .index(index, try store.indexTable(of: target, index))
    }

    /// The field of `target` that holds the IDs of a derived relationship of `entity`, as far as the catalog tells:
    /// the field of the target's relationship the inverse names, or of the one that names this relationship as its
    /// inverse, or of the only one pointing back at `entity` without an inverse.
    package static func derivedField(
        of relationship: RelationshipCatalog, entity: EntityCatalog, target: EntityCatalog
    ) -> String? {
        let stored = target.relationships.filter { $0.target == entity.name && $0.field != nil }
        if let inverse = relationship.inverse {
            if let named = target.relationships.first(where: { $0.name == inverse }) { return named.field }
            return inverse
        }
        if let declared = stored.first(where: { $0.inverse == relationship.name }) { return declared.field }
        let undeclared = stored.filter { $0.inverse == nil }
        return undeclared.count == 1 ? undeclared[0].field : nil
    }

    /// Whether the relationship relates many models.
    package var isToMany: Bool {
        Self.isToMany(relationship)
    }

    /// Whether a relationship relates many models: its cardinality says so, or it is derived (a derived side
    /// gathers every model whose field points back, however the catalog records its cardinality).
    package static func isToMany(_ relationship: RelationshipCatalog) -> Bool {
        relationship.knownCardinality == .toMany || relationship.field == nil
    }

    /// The IDs of the models related to the record `id`.
    ///
    /// - Throws: What LMDB throws.
    package func relatedIDs(of record: RecordValue, id: UUID, txn: borrowing Transaction) throws -> [UUID] {
        switch source {
        case .field(let field):
            return Self.storedIDs(RecordIndexKeys.value(of: field, in: record)).ids
        case .index(let index, let table):
            let key = try RecordIndexKeys.key(for: [.uuid(id)], fields: index.fields)
            return try RecordKey.ids(forKey: key, in: table, txn: txn)
        }
    }

    /// The IDs a relationship field holds, and the values in it that are not UUIDs.
    package static func storedIDs(_ value: RecordValue) -> (ids: [UUID], invalid: [RecordValue]) {
        switch value {
        case .null: return ([], [])
        case .uuid(let id): return ([id], [])
        case .array(let elements):
            var ids: [UUID] = []
            var invalid: [RecordValue] = []
            for element in elements {
                if case .uuid(let id) = element { ids.append(id) } else if element != .null { invalid.append(element) }
            }
            return (ids, invalid)
        default: return ([], [value])
        }
    }
}
