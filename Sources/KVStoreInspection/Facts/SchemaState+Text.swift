import KVStore

/// The schema version and the migration under way in words, as `kvtool info`, `kvtool schema` and the integrity
/// check's warning say them.
extension SchemaState {
    /// The version: `3.0.0`, or `none` for a store never opened with a versioned schema.
    package var versionText: String {
        version?.description ?? "none"
    }

    /// `2.0.0 → 3.0.0 (custom) under way: Todo, 9 records migrated`, or `nil` when no migration is under way.
    package var migrationText: String? {
        guard let migration else { return nil }
        let entity = migration.entity.map { "\($0), " } ?? ""
        return "\(migration.from) → \(migration.to) (\(migration.kind)) under way: \(entity)"
            + "\(Formatting.count(migration.records, "record")) migrated"
    }
}
