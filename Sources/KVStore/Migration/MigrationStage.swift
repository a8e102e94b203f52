import LMDB

/// A step of a ``SchemaMigrationPlan`` from one schema version to the next.
///
/// A **lightweight** stage needs no code: new optional fields, removed fields, new or removed indexes, entities that
/// are new or gone, fields renamed through ``Entity/renamedFields`` and entities renamed through
/// ``Entity/originalName``. Renamed fields are renamed in the catalog only; a renamed entity's records move to its
/// new tables in chunks. The stage refuses to start when the new models do not read the stored records (a new field
/// that is not optional, a changed type): such a change needs a custom stage.
///
/// A **custom** stage also runs an ``EntityMigration`` over every record of some entities: a closure reads each
/// model of the old version and returns the model of the new version (or `nil` to drop the record), and may insert
/// models of other entities, to split one entity into two. Entities without a migration are migrated as in a
/// lightweight stage.
///
/// ```swift
/// static let stages: [MigrationStage] = [
///     .lightweight(fromVersion: SchemaV1.self, toVersion: SchemaV2.self),
///     .custom(
///         fromVersion: SchemaV2.self, toVersion: SchemaV3.self,
///         migrations: [
///             .transform(SchemaV2.Note.self, to: SchemaV3.Note.self) { old in
///                 SchemaV3.Note(id: old.id, title: old.title, words: old.body.split(separator: " ").count)
///             }
///         ]),
/// ]
/// ```
///
/// Records are migrated in chunks of ``SchemaMigrationPlan/migrationChunkSize``, one write transaction each, and
/// the catalog records the progress in the same transaction: a migration that is killed resumes after its last
/// committed chunk on the next open. Indexes of the entities a stage rewrites are rebuilt when it ends.
public struct MigrationStage: Sendable {
    /// What the stage does besides the lightweight changes.
    enum Kind: Sendable {
        case lightweight
        case custom([EntityMigration])
    }

    /// The version the stage starts from.
    let fromVersion: any VersionedSchema.Type
    /// The version the stage ends at.
    let toVersion: any VersionedSchema.Type
    /// What the stage does.
    let kind: Kind

    /// A stage the library migrates by itself.
    ///
    /// - Parameters:
    ///   - fromVersion: The schema the stage starts from.
    ///   - toVersion: The schema the stage ends at.
    public static func lightweight(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type
    ) -> MigrationStage {
        MigrationStage(fromVersion: fromVersion, toVersion: toVersion, kind: .lightweight)
    }

    /// A stage that runs closures over the records of some entities.
    ///
    /// - Parameters:
    ///   - fromVersion: The schema the stage starts from; the old model type of each migration belongs to it.
    ///   - toVersion: The schema the stage ends at; the new model type of each migration belongs to it.
    ///   - migrations: The entities to transform, each at most once.
    public static func custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type, migrations: [EntityMigration]
    ) -> MigrationStage {
        MigrationStage(fromVersion: fromVersion, toVersion: toVersion, kind: .custom(migrations))
    }

    /// The entity migrations of a custom stage; none for a lightweight one.
    var migrations: [EntityMigration] {
        if case .custom(let migrations) = kind { return migrations }
        return []
    }

    /// `lightweight` or `custom`, as the catalog's history records it.
    var kindName: String {
        if case .custom = kind { return "custom" }
        return "lightweight"
    }
}

/// What a custom ``MigrationStage`` does to the records of one entity: a closure from each stored model of the old
/// version to its model of the new version.
///
/// The closure runs once per record, inside the write transaction of its chunk; if it throws, nothing of that chunk
/// is written, the migration stops with ``KVStoreError/migrationFailed``, and the next open resumes at that chunk.
/// The new model keeps the old model's `id`. The old and the new model types may name different entities: the
/// records then move to the new entity's tables and the old entity is removed.
public struct EntityMigration: Sendable {
    /// The transform without its model types.
    let transform: any AnyEntityTransform

    /// Transforms each model, or drops it by returning `nil`: fill a new non-optional field, change a field's type,
    /// keep only some records.
    ///
    /// - Parameters:
    ///   - oldType: The model type of the stage's old schema whose records are read.
    ///   - newType: The model type of the stage's new schema that replaces them.
    ///   - body: The new model for an old one, with the same `id`, or `nil` to delete the record.
    public static func transform<Old: Model, New: Model>(
        _ oldType: Old.Type, to newType: New.Type, _ body: @escaping @Sendable (Old) throws -> New?
    ) -> EntityMigration {
        EntityMigration(transform: EntityTransform<Old, New> { old, _ in try body(old) })
    }

    /// Transforms each model and inserts models of other entities of the new schema: split one entity into two.
    ///
    /// ```swift
    /// .split(SchemaV1.Person.self, to: SchemaV2.Person.self) { old, inserts in
    ///     let address = SchemaV2.Address(street: old.street, city: old.city)
    ///     inserts.insert(address)
    ///     return SchemaV2.Person(id: old.id, name: old.name, addressID: address.id)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - oldType: The model type of the stage's old schema whose records are read.
    ///   - newType: The model type of the stage's new schema that replaces them.
    ///   - body: The new model for an old one, with the same `id`, or `nil` to delete the record; models it inserts
    ///     into `inserts` are saved in the same transaction.
    public static func split<Old: Model, New: Model>(
        _ oldType: Old.Type, to newType: New.Type,
        _ body: @escaping @Sendable (Old, inout MigrationInserts) throws -> New?
    ) -> EntityMigration {
        EntityMigration(transform: EntityTransform<Old, New>(body: body))
    }
}

/// The models a ``EntityMigration/split(_:to:_:)`` closure inserts into other entities of the stage's new schema.
public struct MigrationInserts {
    /// The models inserted so far for the current record.
    var models: [any StoredModel] = []

    /// Inserts a model of another entity of the stage's new schema; a model with the same `id` is replaced.
    public mutating func insert<M: StoredModel>(_ model: M) {
        models.append(model)
    }
}

@available(*, unavailable)
extension MigrationInserts: Sendable {}

/// An entity transform whatever its model types.
protocol AnyEntityTransform: Sendable {
    /// The old model type.
    var oldType: any StoredModel.Type { get }
    /// The new model type.
    var newType: any StoredModel.Type { get }
    /// The old entity's name.
    var sourceName: String { get }
    /// The new entity's name.
    var targetName: String { get }
    /// Migrates one chunk of records.
    func migrateChunk(_ chunk: MigrationChunk, in txn: borrowing Transaction) throws -> MigrationChunk.Outcome
}

/// A transform from the model type `Old` to `New`.
struct EntityTransform<Old: Model, New: Model>: AnyEntityTransform {
    let body: @Sendable (Old, inout MigrationInserts) throws -> New?

    var oldType: any StoredModel.Type { Old.self }
    var newType: any StoredModel.Type { New.self }
    var sourceName: String { Old.entity.name }
    var targetName: String { New.entity.name }

    func migrateChunk(_ chunk: MigrationChunk, in txn: borrowing Transaction) throws -> MigrationChunk.Outcome {
        try chunk.migrate(Old.self, to: New.self, body: body, in: txn)
    }
}
