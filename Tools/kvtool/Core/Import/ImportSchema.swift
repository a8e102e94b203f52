import Foundation
import KVStore
import KVStoreInspection

/// An entity as an import validates and writes its records: the store's catalog entry when the store has the entity,
/// otherwise the export's, from which the import creates it.
struct ImportEntity {
    /// A relationship field whose IDs must name records of its target, which `check` requires.
    struct Reference {
        /// The relationship's name.
        let relationship: String
        /// The field that holds the IDs.
        let field: String
        /// The target entity.
        let target: String
    }

    /// The entity's name.
    let name: String
    /// Its position among the schema's entities, for the import's scratch tables.
    let ordinal: UInt16
    /// The catalog entry records are checked and written against.
    let catalog: EntityCatalog
    /// Whether the store lacks the entity: the import creates it from the export's catalog entry.
    let isNew: Bool
    /// The kinds natural JSON forms are read with: the export's, which wrote them, else the store's.
    let readKinds: [String: ValueKind]
    /// The kind each top-level field must hold: the store's, else the export's.
    let kinds: [String: ValueKind]
    /// The field names the store's or the export's catalog knows.
    let knownNames: Set<String>
    /// Whether those catalogs know the entity's fields: a record of it was stored or exported (an entity a program
    /// declared but never stored a record of has only its external fields' names, if any).
    let knowsFields: Bool
    /// The relationship fields whose references must resolve.
    var references: [Reference] = []
    /// The unique indexes, with their position among the entity's indexes.
    let uniqueIndexes: [(position: Int, catalog: IndexCatalog)]
    /// The external fields by name, with their field ids.
    let external: [String: UInt32]
    /// An index only a program that declares it can maintain, which keeps kvtool from writing the entity.
    let underivableIndex: IndexCatalog?

    /// Describes the entity from the store's entry, `stored`, or when the store has none from the export's.
    ///
    /// - Parameters:
    ///   - catalog: The store's entry, or the export's when `isNew`.
    ///   - isNew: Whether the store lacks the entity.
    ///   - exported: The export's entry, if the export has one.
    ///   - exportedKinds: The kinds the export wrote the entity's fields with, if the file is an export.
    ///   - ordinal: The entity's position among the schema's entities.
    init(
        catalog: EntityCatalog, isNew: Bool, exported: EntityCatalog?, exportedKinds: [String: ValueKind]?,
        ordinal: UInt16
    ) {
        name = catalog.name
        self.ordinal = ordinal
        self.catalog = catalog
        self.isNew = isNew
        let storedKinds = isNew ? [:] : RecordJSON.kinds(of: catalog.fields)
        readKinds = exportedKinds ?? storedKinds
        kinds = storedKinds.merging(exportedKinds ?? [:]) { stored, _ in stored }
        let tables = [catalog.fields] + (exported.map { [$0.fields] } ?? [])
        knownNames = Set(tables.flatMap { $0.names + $0.topLevelNames.values }).union((exportedKinds ?? [:]).keys)
        knowsFields = !storedKinds.isEmpty || !(exportedKinds ?? [:]).isEmpty
        uniqueIndexes = catalog.indexes.enumerated().filter { $0.element.isUnique }.map { ($0.offset, $0.element) }
        external = Dictionary(catalog.external.map { ($0.name, $0.fieldID) }, uniquingKeysWith: { first, _ in first })
        underivableIndex = catalog.indexes.first { !$0.isDerivable }
    }

    /// Reads a record line's record with the entity's kinds, and checks its `id`.
    ///
    /// - Throws: ``ToolError`` naming the field whose JSON does not read as a value of its kind, or an `id` that is
    ///   missing or differs from the line's.
    func record(from line: ImportLine.RecordLine) throws(ToolError) -> RecordValue {
        let record: RecordValue
        do {
            record = try RecordJSON.record(
                from: line.record, kinds: readKinds.merging(["id": .uuid]) { kind, _ in kind })
        } catch {
            throw ToolError("\(name) \(line.id): \(error)")
        }
        switch RecordIndexKeys.value(of: "id", in: record) {
        case .uuid(line.id): return record
        case .null: throw ToolError("\(name) \(line.id): the record has no id field")
        case let other:
            throw ToolError(
                "\(name) \(line.id): the record's id field (\(RecordJSON.defaultJSON(other).serialized())) differs from "
                    + "the line's id")
        }
    }
}

/// The schema an import works against: every entity of the store, and those of the export's catalog that the store
/// lacks, which the import creates when it writes.
///
/// The store's catalog is the truth for the entities it has; the export's catalog only adds field names (which
/// import interns) and tells how natural JSON forms were written. An import into a store without entities (or
/// into a directory without a store) creates every entity of the export's catalog and its schema version, so that
/// exporting the new store gives the same header (but for its creation time).
struct ImportSchema {
    /// The entities by name.
    let entities: [String: ImportEntity]
    /// The entities' names in order; an entity's ordinal is its position.
    let names: [String]
    /// The export's header, if the file has one.
    let header: ExportHeader?
    /// Whether the store has no entity yet: every entity of the export's catalog is created.
    let isEmptyStore: Bool
    /// The schema state the import writes, for an empty store: the export's version and history.
    let schemaState: SchemaState?
    /// What keeps the export from being imported into this store, whatever its records: each a sentence.
    let problems: [String]

    /// Puts together the store's entities and the export's.
    ///
    /// - Parameters:
    ///   - stored: The store's catalog entries; empty for a store to create.
    ///   - storedSchema: The store's schema state.
    ///   - header: The export's header, if the file has one.
    init(stored: [EntityCatalog], storedSchema: SchemaState, header: ExportHeader?) {
        self.header = header
        isEmptyStore = stored.isEmpty
        var problems: [String] = []
        let storedByName = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let exported = header?.entities ?? []
        let exportedByName = Dictionary(exported.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let exportedKinds = header?.fieldKinds
        names = Set(storedByName.keys).union(exportedByName.keys).sorted()
        var entities: [String: ImportEntity] = [:]
        for (ordinal, name) in names.enumerated() {
            let stored = storedByName[name]
            let export = exportedByName[name]
            guard let catalog = stored ?? export else { continue }
            entities[name] = ImportEntity(
                catalog: catalog, isNew: stored == nil, exported: export, exportedKinds: exportedKinds?[name],
                ordinal: UInt16(truncatingIfNeeded: ordinal))
            if let stored, let export {
                let kept = Set(stored.external.map(\.name))
                let exportedExternal = Set(export.external.map(\.name))
                if kept != exportedExternal {
                    problems.append(
                        "\(name) keeps \(Self.list(exportedExternal)) in external storage in the export, and "
                            + "\(Self.list(kept)) in the store; the store's program must declare the same external "
                            + "attributes")
                }
            }
        }
        for name in names {
            guard var entity = entities[name] else { continue }
            for relationship in entity.catalog.relationships {
                guard let field = relationship.field else { continue }
                guard let target = entities[relationship.target] else {
                    if entity.isNew {
                        problems.append(
                            "\(name).\(relationship.name) targets \(relationship.target), which neither the export's "
                                + "catalog nor the store has")
                    }
                    continue
                }
                let tolerance = IntegrityChecker.tolerance(
                    of: relationship, field: field, of: entity.catalog, target: target.catalog)
                if tolerance == nil {
                    entity.references.append(
                        ImportEntity.Reference(relationship: relationship.name, field: field, target: target.name))
                }
            }
            entities[name] = entity
        }
        self.entities = entities
        var schemaState: SchemaState?
        if let exportedSchema = header?.schema {
            if let migration = exportedSchema.migration {
                problems.append(
                    "the export was taken while the store was migrating from schema version \(migration.from) to "
                        + "\(migration.to), and holds records of both: finish the migration and export again")
            }
            if let version = storedSchema.version, let exportedVersion = exportedSchema.version,
                version != exportedVersion
            {
                problems.append(
                    "the export is of schema version \(exportedVersion) and the store of \(version): migrate one of "
                        + "them first")
            }
            let storeRecordsNoSchema = storedSchema.version == nil && storedSchema.history.isEmpty
            if stored.isEmpty && storeRecordsNoSchema && storedSchema.migration == nil
                && (exportedSchema.version != nil || !exportedSchema.history.isEmpty)
            {
                schemaState = exportedSchema
            }
        }
        self.schemaState = schemaState
        self.problems = problems
    }

    /// The entity named `name`, if the store or the export has it.
    subscript(name: String) -> ImportEntity? {
        entities[name]
    }

    /// The entity with this ordinal.
    func entity(ordinal: UInt16) -> ImportEntity? {
        Int(ordinal) < names.count ? entities[names[Int(ordinal)]] : nil
    }

    /// The catalog entries the import creates, in name order: in a store without entities every entity of the
    /// export's catalog; otherwise the new entities the file has records of, and those their relationships reach.
    func entitiesToCreate(withRecords written: Set<String>) -> [EntityCatalog] {
        var chosen: Set<String> = []
        if isEmptyStore {
            chosen = Set(entities.values.filter(\.isNew).map(\.name))
        } else {
            var queue = written.filter { entities[$0]?.isNew == true }.sorted()
            while let name = queue.popLast() {
                guard chosen.insert(name).inserted, let entity = entities[name] else { continue }
                for relationship in entity.catalog.relationships where entities[relationship.target]?.isNew == true {
                    queue.append(relationship.target)
                }
            }
        }
        return names.compactMap { name in chosen.contains(name) ? entities[name]?.catalog : nil }
    }

    private static func list(_ names: Set<String>) -> String {
        names.isEmpty ? "no field" : names.sorted().joined(separator: ", ")
    }
}
