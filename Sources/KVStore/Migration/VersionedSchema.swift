/// One version of a program's models, as in SwiftData: the version number and the model types of that version.
///
/// Nest the models of each version in the schema's type, so that several versions of a model can live side by side
/// in the program, and name the current ones with type aliases:
///
/// ```swift
/// enum SchemaV1: VersionedSchema {
///     static let versionIdentifier = SchemaVersion(1, 0, 0)
///     static let models: [any Model.Type] = [Note.self]
///
///     struct Note: Model {
///         var id = UUID.timeOrdered()
///         var title: String
///     }
/// }
/// typealias Note = SchemaV2.Note
/// ```
///
/// Open a store with ``ModelContainer/init(for:migrationPlan:configuration:observer:migrationProgress:)`` to migrate
/// it from older versions with a ``SchemaMigrationPlan``, or with the schema alone when there is nothing to migrate.
public protocol VersionedSchema: Sendable {
    /// The version; each schema of a plan has its own.
    static var versionIdentifier: SchemaVersion { get }

    /// The model types of this version. Two versions may share a model type when it did not change.
    static var models: [any Model.Type] { get }

    /// The ``PersistentModel`` classes of this version, beside ``models``; none by default.
    ///
    /// Lightweight stages migrate them as they do structs. A custom stage's transforms take and return structs: give
    /// a class whose records a custom stage rewrites a struct twin with the same entity name for that stage.
    static var referenceModels: [any PersistentModel.Type] { get }
}

extension VersionedSchema {
    /// No reference models.
    public static var referenceModels: [any PersistentModel.Type] { [] }

    /// Every model type of this version: its structs, then its classes.
    static var allModels: [any StoredModel.Type] {
        models.map { $0 as any StoredModel.Type } + referenceModels.map { $0 as any StoredModel.Type }
    }
}

/// The versions of a program's schema and the stages that migrate a store from each version to the next, as in
/// SwiftData.
///
/// Opening a store with a plan migrates it, on open, from the version the catalog records to the last of
/// ``schemas``, one stage after the other: see ``MigrationStage``. A store with no recorded version but with
/// entities is taken to be at the first schema's version; a new store is stamped with the last one.
///
/// ```swift
/// enum NotesMigrationPlan: SchemaMigrationPlan {
///     static let schemas: [any VersionedSchema.Type] = [SchemaV1.self, SchemaV2.self]
///     static let stages: [MigrationStage] = [.lightweight(fromVersion: SchemaV1.self, toVersion: SchemaV2.self)]
/// }
/// ```
public protocol SchemaMigrationPlan: Sendable {
    /// Every version of the schema, oldest first; the last one is the current one.
    static var schemas: [any VersionedSchema.Type] { get }

    /// The stages between versions. Each version but the last is the start of exactly one stage.
    static var stages: [MigrationStage] { get }

    /// How many records one write transaction of a migration reads. The default is 1,000: memory stays bounded by
    /// one chunk of models, and a killed migration redoes at most one chunk.
    static var migrationChunkSize: Int { get }
}

extension SchemaMigrationPlan {
    /// 1,000 records per write transaction.
    public static var migrationChunkSize: Int { 1000 }
}
