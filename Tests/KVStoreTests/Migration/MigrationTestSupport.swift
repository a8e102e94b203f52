import Foundation
import KVStoreInspection
import LMDB
import Testing

@testable import KVStore

/// Opening, seeding and inspecting the stores of the migration tests.
enum MigrationSupport {
    static func configuration(_ path: String) -> ModelConfiguration {
        ModelConfiguration(path: path, durability: .off)
    }

    /// Writes `models` into the store at `path`, opened at `schema`.
    static func seed<M: Model>(_ path: String, schema: any VersionedSchema.Type, _ models: [M]) throws {
        let container = try ModelContainer(for: schema, configuration: configuration(path))
        defer { try? container.close() }
        let context = ModelContext(container)
        for model in models { context.insert(model) }
        try context.save()
    }

    /// Every model of a type, in key order.
    static func all<M: Model>(_ type: M.Type, in container: ModelContainer) throws -> [M] {
        try ModelContext(container).fetch(FetchDescriptor<M>())
    }

    /// The catalog's schema entry.
    static func schemaState(_ container: ModelContainer) throws -> SchemaState {
        try container.environment.read { txn in
            try Catalog.schemaState(in: txn, table: container.catalogTable)
        }
    }

    /// The schema entry of the store at `path`, read with the environment alone.
    static func schemaState(at path: String) throws -> SchemaState {
        let environment = try Environment.open(path: path)
        defer { try? environment.close() }
        let catalog = try environment.openTable(named: Catalog.tableName)
        return try environment.read { txn in try Catalog.schemaState(in: txn, table: catalog) }
    }

    /// Runs the integrity check (`kvtool check`'s) on the store and returns whether it found no error, with every
    /// problem it found, or the error that stopped it, as text.
    static func check(_ path: String) -> (isConsistent: Bool, output: String) {
        do {
            let report = try StoreInspection.check(path: path)
            return (report.isConsistent, report.problems.map(\.description).joined(separator: "\n"))
        } catch {
            return (false, "the check stopped: \(error)")
        }
    }

    /// The names of the store's tables.
    static func tableNames(_ container: ModelContainer) throws -> [String] {
        let main = try container.environment.openTable(named: nil)
        return try container.environment.read { txn in
            var names: [String] = []
            try txn.scan(main) { key, _ in
                names.append(String(decoding: key, as: UTF8.self))
                return true
            }
            return names
        }
    }

    /// The to-do items of version 1 used by the three-version tests: ten, one obsolete.
    static func todos(count: Int = 10) -> [TodosV1.Todo] {
        (0..<count).map { number in
            TodosV1.Todo(
                title: number == 4 ? "obsolete \(number)" : "item \(number)",
                notes: Array(repeating: "word", count: number).joined(separator: " "))
        }
    }
}
