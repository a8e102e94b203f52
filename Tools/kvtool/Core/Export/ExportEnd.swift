import KVStoreInspection

/// The last line of an export: how many records and chunks of each entity it holds, and the fields every exported
/// record has, which import takes as required.
///
/// ```json
/// {"kind":"end","records":6,"chunks":3,"entities":{"Photo":{"records":2,"chunks":3,"required":["id","title"]}}}
/// ```
///
/// Its counts tell an import that the export is whole: an export cut short (a full disk, a copy stopped part-way) has
/// no end line, or fewer lines than it counts. An incremental export's end line also counts its delete lines, in
/// total and by entity: `"deletes":2`; it lists the entities it has lines of.
struct ExportEnd: Equatable {
    /// What the export holds of one entity.
    struct Entity: Equatable {
        /// The entity's name.
        var name: String
        /// Its record lines.
        var records = 0
        /// Its chunk lines.
        var chunks = 0
        /// The top-level fields that every exported record holds a value other than null for, in the catalog's
        /// order; empty when there is no record.
        var required: [String] = []
        /// Its delete lines.
        var deletes = 0
    }

    /// The entities, in export order.
    var entities: [Entity] = []
    /// Whether the line counts delete lines: the end line of an incremental export.
    var countsDeletes = false

    /// All record lines.
    var records: Int { entities.reduce(0) { $0 + $1.records } }

    /// All chunk lines.
    var chunks: Int { entities.reduce(0) { $0 + $1.chunks } }

    /// All delete lines.
    var deletes: Int { entities.reduce(0) { $0 + $1.deletes } }

    /// What the export holds of `name`, if it holds records of it.
    func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The end line's JSON.
    var json: JSONValue {
        var members = [
            JSONMember("kind", .string(ExportLineKind.end)), JSONMember("records", .number(String(records))),
            JSONMember("chunks", .number(String(chunks))),
        ]
        if countsDeletes { members.append(JSONMember("deletes", .number(String(deletes)))) }
        members.append(
            JSONMember(
                "entities",
                .object(
                    entities.map { entity in
                        var counts = [
                            JSONMember("records", .number(String(entity.records))),
                            JSONMember("chunks", .number(String(entity.chunks))),
                            JSONMember("required", .array(entity.required.map(JSONValue.string))),
                        ]
                        if countsDeletes { counts.append(JSONMember("deletes", .number(String(entity.deletes)))) }
                        return JSONMember(entity.name, .object(counts))
                    })))
        return .object(members)
    }

    /// Creates an empty end line, to count into.
    init() {}

    /// Reads an end line.
    ///
    /// - Throws: ``ToolError`` naming what is missing or malformed.
    init(_ json: JSONValue) throws(ToolError) {
        guard case .object(let members) = json else { throw ToolError("the end line is not an object") }
        for member in members where !["kind", "records", "chunks", "deletes", "entities"].contains(member.name) {
            throw ToolError("unexpected member '\(member.name)' in the end line")
        }
        countsDeletes = json[member: "deletes"] != nil
        guard case .object(let entries)? = json[member: "entities"] else {
            throw ToolError("the end line has no \"entities\" object")
        }
        for entry in entries {
            guard let records = Self.count(entry.value[member: "records"]),
                let chunks = Self.count(entry.value[member: "chunks"]),
                case .array(let required)? = entry.value[member: "required"]
            else {
                throw ToolError("the end line's \(entry.name) needs \"records\", \"chunks\" and \"required\"")
            }
            var names: [String] = []
            for name in required {
                guard case .string(let text) = name else {
                    throw ToolError("the end line's required fields of \(entry.name) are not strings")
                }
                names.append(text)
            }
            var deletes = 0
            if countsDeletes {
                guard let count = Self.count(entry.value[member: "deletes"]) else {
                    throw ToolError("the end line's \(entry.name) needs \"deletes\", as the line counts deletes")
                }
                deletes = count
            }
            entities.append(
                Entity(name: entry.name, records: records, chunks: chunks, required: names, deletes: deletes))
        }
        guard Self.count(json[member: "records"]) == records, Self.count(json[member: "chunks"]) == chunks,
            !countsDeletes || Self.count(json[member: "deletes"]) == deletes
        else {
            throw ToolError("the end line's totals are not the sums of its entities' counts")
        }
    }

    private static func count(_ json: JSONValue?) -> Int? {
        guard case .number(let text)? = json, let value = Int(text), value >= 0 else { return nil }
        return value
    }
}
