import CommandLineKit
import KVStore
import KVStoreInspection
import LMDB

/// `kvtool schema <path>`: each entity's fields, indexes, unique constraints and relationships, from the catalog.
struct SchemaCommand: Command {
    static let configuration = CommandConfiguration(
        name: "schema", abstract: "Show each entity's fields, indexes, constraints and relationships.",
        discussion: """
            A store opened with a versioned schema shows its version and the migrations applied first. A field's \
            type is the kind of value first stored in it; 'unknown' for a field only ever absent or null, \
            and for the fields of nested values, whose names share the entity's field table.
            """)

    /// The arguments and options of `kvtool schema`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let json = Flag.json
    }

    /// The store's directory.
    let path: String
    /// Whether to print JSON.
    let json: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        json = arguments[\.json]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            var counts: [String: Int] = [:]
            for entity in store.entities {
                guard let table = try? store.recordTable(of: entity) else { continue }
                counts[entity.name] = try store.environment.read { txn in try txn.count(of: table) }
            }
            if json {
                let entities = store.entities.map { Self.json($0, records: counts[$0.name]) }
                let members = SchemaHistory.jsonMembers(store.schema) + [JSONMember("entities", .array(entities))]
                console.print(JSONValue.object(members).serialized(pretty: true))
            } else {
                if store.schema.version != nil || store.schema.migration != nil {
                    var header = "Schema version \(SchemaHistory.versionText(store.schema))\n"
                    if let migration = SchemaHistory.migrationText(store.schema) {
                        header += "Migration \(migration)\n"
                    }
                    if let history = SchemaHistory.table(store.schema) { header += history }
                    console.output.write(header + "\n")
                }
                let texts = store.entities.map { Self.text($0, records: counts[$0.name]) }
                console.output.write(texts.joined(separator: "\n"))
                for damaged in store.damagedEntries {
                    console.print("\n\(damaged.key): the catalog entry does not decode (\(damaged.reason))")
                }
                if store.entities.isEmpty && store.damagedEntries.isEmpty { console.print("No entities.") }
            }
            return 0
        }
    }

    /// The type name of each field, in id order; a top-level field that a migration renamed comes with the name
    /// its id keeps in nested values, whose type is unknown.
    static func fields(of entity: EntityCatalog) -> [(id: Int, name: String, type: String)] {
        let fields = entity.fields
        return fields.names.indices.flatMap { offset in
            let id = UInt32(offset + 1)
            let type = fields.kind(of: id)?.typeName ?? "unknown"
            let topLevel = fields.name(for: id, in: .topLevel)
            let nested = fields.name(for: id, in: .nested)
            guard let topLevel else { return [(offset + 1, nested ?? fields.names[offset], type)] }
            guard let nested, nested != topLevel else { return [(offset + 1, topLevel, type)] }
            return [(offset + 1, topLevel, type), (offset + 1, nested, "unknown")]
        }
    }

    private static func text(_ entity: EntityCatalog, records: Int?) -> String {
        var text = "\(entity.name): " + (records.map { Formatting.count($0, "record") } ?? "no record table") + "\n"
        func section(_ title: String, _ rows: [[String]]) {
            text += "  \(title):" + (rows.isEmpty ? " none\n" : "\n")
            let widths = rows.reduce(into: [Int]()) { widths, row in
                for (column, cell) in row.enumerated() {
                    if column == widths.count { widths.append(0) }
                    widths[column] = max(widths[column], cell.count)
                }
            }
            for row in rows {
                let cells = row.enumerated().map { column, cell in
                    column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
                }
                text += "    " + cells.joined(separator: "  ") + "\n"
            }
        }
        section("Fields", fields(of: entity).map { [$0.name, $0.type] })
        section(
            "Indexes",
            entity.indexes.map { index in
                let traits = [
                    index.isUnique ? "unique" : nil, index.isMultiEntry ? "multi-entry" : nil,
                    index.isReady ? "ready" : "not ready",
                ]
                return [
                    index.name, "(" + index.fields.joined(separator: ", ") + ")",
                    traits.compactMap { $0 }.joined(separator: ", "),
                ]
            })
        section("Unique constraints", entity.indexes.filter(\.isUnique).map { [$0.fields.joined(separator: ", ")] })
        section(
            "Relationships",
            entity.relationships.map { relationship in
                var details = [
                    "\(RelationshipPath.isToMany(relationship) ? "to-many" : "to-one") \(relationship.target)"
                ]
                details.append(relationship.field.map { "field \($0)" } ?? "derived")
                if let inverse = relationship.inverse { details.append("inverse \(inverse)") }
                details.append("delete rule \(relationship.deleteRule)")
                if relationship.allowsDangling { details.append("allows dangling") }
                return [relationship.name, details.joined(separator: ", ")]
            })
        // Listed only for entities that have external attributes, so the schema of others reads as before.
        if !entity.external.isEmpty {
            section(
                "External storage",
                entity.external.map { [$0.name, "chunks in \(Catalog.externalTableName(entity.name))"] })
        }
        return text
    }

    private static func json(_ entity: EntityCatalog, records: Int?) -> JSONValue {
        func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
        let fields = fields(of: entity).map { field in
            JSONValue.object([
                JSONMember("id", .number(String(field.id))), JSONMember("name", .string(field.name)),
                JSONMember("type", .string(field.type)),
            ])
        }
        let indexes = entity.indexes.map { index in
            JSONValue.object([
                JSONMember("name", .string(index.name)), JSONMember("fields", strings(index.fields)),
                JSONMember("unique", .bool(index.isUnique)), JSONMember("multiEntry", .bool(index.isMultiEntry)),
                JSONMember("ready", .bool(index.isReady)),
            ])
        }
        let relationships = entity.relationships.map { relationship in
            JSONValue.object([
                JSONMember("name", .string(relationship.name)), JSONMember("target", .string(relationship.target)),
                JSONMember("inverse", relationship.inverse.map(JSONValue.string) ?? .null),
                JSONMember("cardinality", .string(relationship.cardinality)),
                JSONMember("field", relationship.field.map(JSONValue.string) ?? .null),
                JSONMember("deleteRule", .string(relationship.deleteRule)),
                JSONMember("allowsDangling", .bool(relationship.allowsDangling)),
            ])
        }
        var members = [
            JSONMember("name", .string(entity.name)),
            JSONMember("records", records.map { .number(String($0)) } ?? .null),
            JSONMember("fields", .array(fields)), JSONMember("indexes", .array(indexes)),
            JSONMember("uniqueConstraints", .array(entity.indexes.filter(\.isUnique).map { strings($0.fields) })),
            JSONMember("relationships", .array(relationships)),
        ]
        if !entity.external.isEmpty {
            members.append(JSONMember("externalStorage", strings(entity.external.map(\.name))))
        }
        return .object(members)
    }
}
