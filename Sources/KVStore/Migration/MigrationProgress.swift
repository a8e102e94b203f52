/// How far a migration on open has come, reported after each chunk's write transaction commits.
///
/// ```swift
/// let container = try ModelContainer(
///     for: SchemaV3.self, migrationPlan: NotesMigrationPlan.self,
///     configuration: ModelConfiguration(path: path),
///     migrationProgress: { print("\($0.fromVersion) → \($0.toVersion): \($0.entity ?? "") \($0.migratedRecords)") })
/// ```
public struct MigrationProgress: Sendable, Equatable {
    /// The version the stage under way starts from.
    public let fromVersion: SchemaVersion
    /// The version the stage under way ends at.
    public let toVersion: SchemaVersion
    /// The entity whose records are being migrated, or `nil` in the report that the stage finished.
    public let entity: String?
    /// How many records of the entity are migrated, this chunk included.
    public let migratedRecords: Int
    /// How many records of the entity the stage migrates in all.
    public let totalRecords: Int
    /// Whether the stage finished: the store is now at ``toVersion``.
    public let isStageFinished: Bool
}
