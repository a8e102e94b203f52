import KVStore
import LMDB

/// The catalog's consistency: entries decode, tables exist with the right flags, indexes and relationships fit the
/// fields and entities.
extension IntegrityChecker {
    /// The cardinalities the library knows.
    static let cardinalities: Set<String> = ["toOne", "toMany"]

    /// Checks the catalog, and returns the entities whose records can be checked, with their tables.
    func checkCatalog() throws -> [CheckedEntity] {
        for damaged in store.damagedEntries {
            problem(.error, "The catalog entry '\(damaged.key)' does not decode: \(damaged.reason)")
        }
        if let migration = SchemaHistory.migrationText(store.schema) {
            problem(
                .warning,
                "A schema migration is under way (\(migration)): the store holds records of two schema versions "
                    + "until a program opens it with its migration plan")
        }
        try checkImportEntry()
        let tables = Set(try store.tableNames())
        let names = Set(store.entities.map(\.name))
        var checked: [CheckedEntity] = []
        for entity in store.entities {
            let recordTable = Catalog.recordTableName(entity.name)
            guard tables.contains(recordTable) else {
                problem(.error, "\(entity.name) has no record table '\(recordTable)'", entity: entity.name)
                continue
            }
            let records = try store.recordTable(of: entity)
            // A damaged table is not read through LMDB, not even for its count: its record's count stands in.
            let count =
                if isReadable(recordTable, of: entity.name) {
                    try store.environment.read { txn in try txn.count(of: records) }
                } else {
                    store.pages.table(named: recordTable)?.entries ?? 0
                }
            let kinds = RecordJSON.kinds(of: entity.fields)
            if count > 0 && kinds["id"] != .uuid {
                problem(.error, "\(entity.name)'s field table has no id field of kind uuid", entity: entity.name)
            }
            var indexes: [(catalog: IndexCatalog, table: Table)] = []
            for index in entity.indexes {
                if let table = try checkIndexCatalog(
                    index, of: entity, kinds: kinds, tables: tables, hasRecords: count > 0)
                {
                    indexes.append((index, table))
                }
            }
            var references: [Reference] = []
            for relationship in entity.relationships {
                guard checkRelationshipCatalog(relationship, of: entity, kinds: kinds, names: names) else { continue }
                guard let field = relationship.field,
                    let target = store.entities.first(where: { $0.name == relationship.target }),
                    tables.contains(Catalog.recordTableName(target.name))
                else { continue }
                guard isReadable(Catalog.recordTableName(target.name), of: target.name) else {
                    problem(
                        .warning,
                        "relationship \(entity.name).\(relationship.name): its references were not checked, as "
                            + "\(target.name)'s record table has damaged pages", entity: entity.name,
                        part: relationship.name)
                    continue
                }
                references.append(
                    Reference(
                        relationship: relationship, field: field, target: try store.recordTable(of: target),
                        tolerance: Self.tolerance(of: relationship, field: field, of: entity, target: target)))
            }
            checked.append(
                CheckedEntity(entity: entity, records: records, indexes: indexes, references: references, kinds: kinds))
        }
        for table in tables.sorted() { checkLeftover(table, names: names) }
        return checked
    }

    /// Warns about an import under way or interrupted: the store is consistent, but holds part of an input.
    private func checkImportEntry() throws {
        let entry: ImportProgress?
        do {
            entry = try store.environment.read { txn in try ImportProgress.read(in: txn, catalog: store.catalog) }
        } catch let error as ToolError {
            problem(.error, error.message)
            return
        }
        guard let entry else { return }
        if try entry.isRunning(in: store.path) {
            problem(
                .warning,
                "An import is under way (\(entry.input == "-" ? "standard input" : "'\(entry.input)'"), at line "
                    + "\(Formatting.grouped(entry.nextLine))): the store holds part of its input")
        } else {
            problem(
                .warning,
                "\(entry.description.prefix(1).uppercased())\(entry.description.dropFirst()); the store holds part of "
                    + "its input: 'kvtool import --resume \(store.path) <file>' finishes it, '--abandon' forgets it")
        }
    }

    /// Checks an index's description and table; returns the table when its entries can be checked.
    private func checkIndexCatalog(
        _ index: IndexCatalog, of entity: EntityCatalog, kinds: [String: ValueKind], tables: Set<String>,
        hasRecords: Bool
    ) throws -> Table? {
        let label = "index \(entity.name).\(index.name)"
        func fail(_ message: String) {
            problem(.error, "\(label): \(message)", entity: entity.name, part: index.name)
        }
        if index.fields.isEmpty { fail("it has no fields") }
        if index.isMultiEntry && (index.fields.count != 1 || index.isUnique) {
            fail("a multi-entry index has exactly one field and is not unique")
        }
        for field in index.fields {
            guard IndexEntries.fieldExists(field, in: entity.fields) else {
                if hasRecords {
                    problem(
                        .warning, "\(label): the field '\(field)' is not in the field table (no record has stored it)",
                        entity: entity.name, part: index.name)
                }
                continue
            }
            guard let kind = kinds[field] else { continue }
            if index.isMultiEntry && kind != .array {
                fail("the multi-entry field '\(field)' holds \(kind.typeName), not arrays")
            } else if !index.isMultiEntry
                && [.array, .object, .stringMap, .intMap, .data, .url, .decimal].contains(kind)
            {
                fail("the field '\(field)' holds \(kind.typeName), which no index key holds")
            }
        }
        let name = Catalog.indexTableName(entity.name, index.name)
        guard tables.contains(name) else {
            fail("its table '\(name)' is missing")
            return nil
        }
        let table: Table
        do {
            table = try store.environment.openTable(
                named: name, options: Catalog.indexTableOptions(unique: index.isUnique))
        } catch {
            // A catch-all: Swift 6.3.1 can crash compiling a `catch LMDBError.incompatible` that lets
            // the other typed errors through (swiftlang/swift#90582).
            guard error == .incompatible else { throw error }
            fail("its table '\(name)' has the flags of a\(index.isUnique ? " non-unique" : " unique") index")
            return nil
        }
        guard isReadable(name, of: entity.name) else { return nil }
        guard index.isReady else {
            problem(
                .warning, "\(label) is not ready (its build was interrupted); the library rebuilds it on the next open",
                entity: entity.name, part: index.name)
            return nil
        }
        return table
    }

    /// Checks a relationship's description; returns whether its references can be checked.
    private func checkRelationshipCatalog(
        _ relationship: RelationshipCatalog, of entity: EntityCatalog, kinds: [String: ValueKind], names: Set<String>
    ) -> Bool {
        let label = "relationship \(entity.name).\(relationship.name)"
        var isSound = true
        func fail(_ message: String) {
            problem(.error, "\(label): \(message)", entity: entity.name, part: relationship.name)
            isSound = false
        }
        if !Self.cardinalities.contains(relationship.cardinality) {
            fail("unknown cardinality '\(relationship.cardinality)'")
        }
        if DeleteRule(rawValue: relationship.deleteRule) == nil {
            fail("unknown delete rule '\(relationship.deleteRule)'")
        }
        guard let target = store.entities.first(where: { $0.name == relationship.target }) else {
            fail("its target '\(relationship.target)' is not in the catalog")
            return false
        }
        if let inverse = relationship.inverse, !target.relationships.contains(where: { $0.name == inverse }),
            !IndexEntries.fieldExists(inverse, in: target.fields)
        {
            fail("its inverse '\(inverse)' is neither a relationship nor a field of \(target.name)")
        }
        if let field = relationship.field, let kind = kinds[field] {
            let expected: ValueKind = relationship.cardinality == "toMany" ? .array : .uuid
            if kind != expected { fail("its field '\(field)' holds \(kind.typeName), not \(expected.typeName)") }
        } else if relationship.field == nil {
            guard let field = RelationshipPath.derivedField(of: relationship, entity: entity, target: target) else {
                problem(
                    .warning,
                    "\(label): the catalog does not tell which field of \(target.name) holds its IDs, so "
                        + "'get --follow \(relationship.name)' cannot follow it",
                    entity: entity.name, part: relationship.name)
                return isSound
            }
            if !target.indexes.contains(where: { $0.name == field || $0.fields == [field] }) {
                fail("it is derived from \(target.name).\(field), which has no index")
            }
        }
        return isSound
    }

    /// Why a dangling ID in a relationship field is allowed, or `nil` when it is an error: the relationship allows
    /// dangling IDs, its delete rule is `noAction`, or the target's derived side has the delete rule `noAction`
    /// (deleting a target then leaves the references as they are).
    static func tolerance(
        of relationship: RelationshipCatalog, field: String, of entity: EntityCatalog, target: EntityCatalog
    ) -> String? {
        if relationship.allowsDangling { return "dangling allowed" }
        if relationship.deleteRule == DeleteRule.noAction.rawValue { return "delete rule noAction" }
        let derived = target.relationships.first { other in
            other.field == nil && other.target == entity.name && other.deleteRule == DeleteRule.noAction.rawValue
                && RelationshipPath.derivedField(of: other, entity: target, target: entity) == field
        }
        return derived.map { "\(target.name).\($0.name) has the delete rule noAction" }
    }

    /// Warns about a record or index table that no catalog entry accounts for.
    private func checkLeftover(_ table: String, names: Set<String>) {
        let parts = table.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("records", 2) where !names.contains(parts[1]):
            problem(.warning, "The table '\(table)' belongs to no entity of the catalog")
        case ("external", 2), ("staging", 2), ("checksums", 2):
            if store.entities.first(where: { $0.name == parts[1] })?.external.isEmpty != false {
                problem(.warning, "The table '\(table)' belongs to no entity with external values in the catalog")
            }
        case ("index", 3):
            let entity = store.entities.first { $0.name == parts[1] }
            if entity?.indexes.contains(where: { $0.name == parts[2] }) != true {
                problem(.warning, "The table '\(table)' belongs to no index of the catalog")
            }
        default:
            break
        }
    }
}
