import Foundation
import KVStore
import KVStoreInspection

/// The first line of an export: the export format's version, and the store's catalog, from which an import into an
/// empty store creates the schema.
///
/// ```json
/// {"kvtool-export":2,"kind":"header","format":1,"created":"2026-05-09T06:13:20Z","schema":{"history":[]},
///  "entities":[{"external":[],"fields":{"kinds":[10,7],"names":["id","name"]},"indexes":[…],"name":"Project",…}]}
/// ```
///
/// `entities` holds every entity's catalog entry exactly as the store's catalog holds it (the library's JSON: field
/// names in id order with the record-format tag of the kind first stored in each, indexes, relationships, external
/// fields, removed indexes), whichever entities' records follow; `schema` holds the schema version and the migrations
/// applied. An export of format version 1 (kvtool 0.1's) has `fields` (each entity's top-level field kinds by name)
/// instead, and no catalog: it imports only into a store whose entities exist.
///
/// The export of a store whose change history is on records `through`, the store's last history token when the export
/// read it: a copy made from the export holds the store's changes through that token, and goes on with
/// `kvtool export --since <through>`. An incremental export (`--since`) is of format version 3 and records `since`,
/// the token it starts after; its lines hold the changes between the two tokens (records and deletes), which an older
/// kvtool refuses by the version rather than import as a full export.
struct ExportHeader {
    /// The member that marks an export's header, with the export format's version as its value.
    static let marker = "kvtool-export"
    /// The export format this kvtool writes for a whole store.
    static let version = 2
    /// The export format of an incremental export: version 2 with `since` and delete lines.
    static let incrementalVersion = 3

    /// The export format's version: 1 or 2.
    var version: Int
    /// The store's format version (``Catalog/formatVersion`` of the library that wrote it).
    var storeFormat: Int
    /// When the source store was created, as ISO 8601 text; `nil` in version 1.
    var created: String?
    /// The source store's schema state: its version and the migrations applied; `nil` in version 1.
    var schema: SchemaState?
    /// Every entity's catalog entry; empty in version 1.
    var entities: [EntityCatalog]
    /// For version 1, each entity's top-level field kinds.
    var kinds: [String: [String: ValueKind]]
    /// For an incremental export, the token it starts after: it holds the changes committed after it.
    var since: HistoryToken?
    /// The source store's last history token when the export read it, when its history is on.
    var through: HistoryToken?

    /// Whether the export holds the changes after a token rather than the whole store.
    var isIncremental: Bool {
        since != nil
    }

    /// The header of an export of `store`: its catalog as it was read when the store was opened.
    ///
    /// - Parameter through: The store's last history token, when its history is on.
    init(store: InspectedStore, through: HistoryToken?) {
        self.init(store: store, entities: store.entities, schema: store.schema, since: nil, through: through)
    }

    /// The header of an export of `store` with the catalog read in the export's transaction.
    ///
    /// - Parameters:
    ///   - entities: The catalog's entity entries.
    ///   - schema: The catalog's schema state.
    ///   - since: For an incremental export, the token it starts after.
    ///   - through: The store's last history token, when its history is on.
    init(
        store: InspectedStore, entities: [EntityCatalog], schema: SchemaState, since: HistoryToken?,
        through: HistoryToken?
    ) {
        version = since == nil ? Self.version : Self.incrementalVersion
        storeFormat = store.format.formatVersion
        created = ISO8601.exactString(store.format.created) ?? ISO8601.displayString(store.format.created)
        var schema = schema
        // Housekeeping of the source store, not part of its schema.
        schema.pendingDrops = []
        self.schema = schema
        self.entities = entities
        kinds = [:]
        self.since = since
        self.through = through
    }

    /// The entry of `name`, if the header has one.
    func entity(named name: String) -> EntityCatalog? {
        entities.first { $0.name == name }
    }

    /// The kinds the values of each entity's top-level fields were written with, by entity and field.
    var fieldKinds: [String: [String: ValueKind]] {
        guard version >= 2 else { return kinds }
        return Dictionary(uniqueKeysWithValues: entities.map { ($0.name, RecordJSON.kinds(of: $0.fields)) })
    }

    /// The header line's JSON.
    ///
    /// - Throws: What the catalog's encoding throws (nothing for a catalog that decoded).
    func json() throws -> JSONValue {
        var members = [
            JSONMember(Self.marker, .number(String(version))), JSONMember("kind", .string(ExportLineKind.header)),
            JSONMember("format", .number(String(storeFormat))),
        ]
        if let created { members.append(JSONMember("created", .string(created))) }
        if let since { members.append(JSONMember("since", .string(since.description))) }
        if let through { members.append(JSONMember("through", .string(through.description))) }
        if let schema { members.append(JSONMember("schema", try Self.catalogJSON(schema))) }
        members.append(JSONMember("entities", .array(try entities.map(Self.catalogJSON))))
        return .object(members)
    }

    /// Reads a header line.
    ///
    /// - Throws: ``ToolError`` for a version this kvtool does not read, or a catalog that does not decode.
    init(_ json: JSONValue) throws(ToolError) {
        guard case .number(let versionText)? = json[member: Self.marker], let version = Int(versionText) else {
            throw ToolError("the export header's \"\(Self.marker)\" is not a version number")
        }
        guard version >= 1 else { throw ToolError("the export header gives the unknown version \(versionText)") }
        guard version <= Self.incrementalVersion else {
            throw ToolError(
                "the export is of format version \(version); this kvtool reads versions 1 to "
                    + "\(Self.incrementalVersion). Use a newer kvtool")
        }
        self.version = version
        guard case .number(let formatText)? = json[member: "format"], let storeFormat = Int(formatText) else {
            throw ToolError("the export header has no store \"format\" number")
        }
        guard storeFormat <= Catalog.formatVersion else {
            throw ToolError(
                "the export holds a store of KVStore format \(storeFormat); this kvtool writes format "
                    + "\(Catalog.formatVersion) and older. Use a newer kvtool")
        }
        self.storeFormat = storeFormat
        kinds = [:]
        entities = []
        guard version >= 2 else {
            created = nil
            schema = nil
            kinds = try Self.version1Kinds(json)
            return
        }
        for member in ["kind", "created", "schema", "entities"] where json[member: member] == nil {
            throw ToolError("the export header has no \"\(member)\"")
        }
        guard case .string(let created)? = json[member: "created"] else {
            throw ToolError("the export header's \"created\" is not a string")
        }
        self.created = created
        since = try Self.token(json, "since")
        through = try Self.token(json, "through")
        if (version == Self.incrementalVersion) != (since != nil) {
            throw ToolError(
                version == Self.incrementalVersion
                    ? "the export header of version 3 (an incremental export) has no \"since\" token"
                    : "the export header of version \(version) has a \"since\" token, which only version 3 has")
        }
        if let since {
            guard let through else { throw ToolError("the incremental export's header has no \"through\" token") }
            guard since.storeID == through.storeID, since.position <= through.position else {
                throw ToolError(
                    "the export header's \"since\" (\(since)) is not a token of the same history before its "
                        + "\"through\" (\(through))")
            }
        }
        schema = try Self.decode(SchemaState.self, json[member: "schema"] ?? .null, what: "schema state")
        guard case .array(let entries)? = json[member: "entities"] else {
            throw ToolError("the export header's \"entities\" is not an array")
        }
        var names: Set<String> = []
        for entry in entries {
            let entity = try Self.decode(EntityCatalog.self, entry, what: "catalog entry")
            guard !entity.name.isEmpty, !entity.name.contains("/"), names.insert(entity.name).inserted else {
                throw ToolError("the export header's catalog names the entity '\(entity.name)' twice, or badly")
            }
            entities.append(entity)
        }
    }

    /// The history token of the member `name`, or `nil` when the header has none.
    private static func token(_ json: JSONValue, _ name: String) throws(ToolError) -> HistoryToken? {
        guard let value = json[member: name] else { return nil }
        guard case .string(let text) = value, let token = HistoryToken(text) else {
            throw ToolError(
                "the export header's \"\(name)\" is not a history token (<store ID>:<position>): \(value.serialized())")
        }
        return token
    }

    /// The field kinds of a version 1 header: `"fields":{"Task":{"id":"uuid",…}}`.
    private static func version1Kinds(_ json: JSONValue) throws(ToolError) -> [String: [String: ValueKind]] {
        guard case .object(let entities)? = json[member: "fields"] else {
            throw ToolError("the export header has no \"fields\" object")
        }
        var kinds: [String: [String: ValueKind]] = [:]
        for entity in entities {
            guard case .object(let fields) = entity.value else {
                throw ToolError("the export header's fields of \(entity.name) are not an object")
            }
            for field in fields {
                guard case .string(let name) = field.value, let kind = RecordJSON.kind(named: name) else {
                    throw ToolError("the export header gives \(entity.name).\(field.name) an unknown kind")
                }
                kinds[entity.name, default: [:]][field.name] = kind
            }
        }
        return kinds
    }

    /// The catalog's JSON encoding (sorted keys, ISO 8601 dates), as ``JSONValue``.
    private static func catalogJSON(_ value: some Encodable) throws -> JSONValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try JSONParser.parse(Array(try encoder.encode(value)))
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ json: JSONValue, what: String) throws(ToolError) -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(T.self, from: Data(json.serialized().utf8))
        } catch {
            throw ToolError("the export header's \(what) does not decode: \(error)")
        }
    }
}

/// The values of the `kind` member of an export's lines.
///
/// A reader rejects a kind it does not know with a message naming it, so that later versions can add kinds that older
/// readers refuse rather than misread (as kvtool 0.1 refuses `delete`).
enum ExportLineKind {
    /// The first line.
    static let header = "header"
    /// A record.
    static let record = "record"
    /// One chunk of an external value, after its record.
    static let chunk = "chunk"
    /// A model deleted since an incremental export's `since` token: import deletes its record if stored.
    static let delete = "delete"
    /// The last line.
    static let end = "end"
    /// The kinds this kvtool reads.
    static let known = [header, record, chunk, delete, end]
}
