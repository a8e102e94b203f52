import KVStore
import KVStoreInspection

/// The schema version, the migration under way and the migrations applied, as `info` and `schema` print them.
enum SchemaHistory {
    /// The version as printed: `3.0.0`, or `none` for a store never opened with a versioned schema.
    static func versionText(_ schema: SchemaState) -> String {
        schema.versionText
    }

    /// `2.0.0 → 3.0.0 (custom) under way: Todo, 9 records migrated`, or `nil` when no migration is under way.
    static func migrationText(_ schema: SchemaState) -> String? {
        schema.migrationText
    }

    /// The migrations applied, a row each, or `nil` when there were none.
    static func table(_ schema: SchemaState) -> String? {
        guard !schema.history.isEmpty else { return nil }
        var table = TextTable(
            headers: ["Migration", "Kind", "Records", "Started", "Finished"], rightAligned: [2], maximumWidth: 40)
        for record in schema.history {
            table.append([
                "\(record.from) → \(record.to)", record.kind, Formatting.grouped(record.records),
                ISO8601.displayString(record.started), ISO8601.displayString(record.finished),
            ])
        }
        return table.rendered()
    }

    /// The JSON members `schemaVersion`, `migration` (or `null`) and `migrations`.
    static func jsonMembers(_ schema: SchemaState) -> [JSONMember] {
        let migration: JSONValue =
            schema.migration.map { migration in
                .object([
                    JSONMember("from", .string(migration.from.description)),
                    JSONMember("to", .string(migration.to.description)),
                    JSONMember("target", .string(migration.target.description)),
                    JSONMember("kind", .string(migration.kind)),
                    JSONMember("entity", migration.entity.map(JSONValue.string) ?? .null),
                    JSONMember("records", .number(String(migration.records))),
                    JSONMember("started", .string(ISO8601.displayString(migration.started))),
                ])
            } ?? .null
        let history = schema.history.map { record in
            JSONValue.object([
                JSONMember("from", .string(record.from.description)), JSONMember("to", .string(record.to.description)),
                JSONMember("kind", .string(record.kind)), JSONMember("records", .number(String(record.records))),
                JSONMember("started", .string(ISO8601.displayString(record.started))),
                JSONMember("finished", .string(ISO8601.displayString(record.finished))),
            ])
        }
        return [
            JSONMember("schemaVersion", schema.version.map { .string($0.description) } ?? .null),
            JSONMember("migration", migration), JSONMember("migrations", .array(history)),
        ]
    }
}
