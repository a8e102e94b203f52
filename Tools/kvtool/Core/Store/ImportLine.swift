import Foundation
import KVStore

/// One line of a JSON Lines import, parsed and checked against the catalog.
///
/// A line is an export header (`{"kvtool-export":1,…,"fields":{…}}`), whose field kinds read the natural forms of
/// later lines where the store's catalog has no kind yet, or a record: `{"entity":…,"id":…,"record":{…}}`, whose
/// record holds an `id` field equal to the line's.
enum ImportLine {
    /// Field kinds by entity and field, from an export header.
    case header([String: [String: ValueKind]])
    /// A record of an entity.
    case record(entity: String, id: UUID, value: RecordValue)

    /// Parses a line.
    ///
    /// - Parameters:
    ///   - bytes: The line, without its line break.
    ///   - entities: The store's entities by name, with their current field tables.
    ///   - kinds: The kinds of each entity's fields, from ``kinds(of:header:)``.
    /// - Throws: ``ToolError`` saying what is wrong (without the line number): malformed JSON, an unknown entity, a
    ///   bad UUID, a field whose value contradicts its kind, a record whose `id` differs.
    static func parse(
        _ bytes: [UInt8], entities: [String: EntityCatalog], kinds: [String: [String: ValueKind]]
    ) throws(ToolError) -> ImportLine {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw ToolError(error.description)
        }
        guard case .object(let members) = json else {
            throw ToolError("expected a JSON object, got \(json.kindDescription)")
        }
        if json[member: ExportCommand.headerMarker] != nil { return .header(try header(json)) }
        for member in members where !["entity", "id", "record"].contains(member.name) {
            throw ToolError("unexpected member '\(member.name)'; a line is {\"entity\":…,\"id\":…,\"record\":{…}}")
        }
        guard case .string(let name)? = json[member: "entity"] else {
            throw ToolError("the line has no \"entity\" string")
        }
        guard entities[name] != nil else {
            let known = entities.keys.sorted().joined(separator: ", ")
            throw ToolError("unknown entity '\(name)' (the store has \(known.isEmpty ? "none" : known))")
        }
        guard case .string(let idText)? = json[member: "id"] else { throw ToolError("the line has no \"id\" string") }
        guard let id = RecordKey.uuid(parsing: idText) else { throw ToolError("malformed UUID '\(idText)' in \"id\"") }
        guard let recordJSON = json[member: "record"] else { throw ToolError("the line has no \"record\"") }
        let record: RecordValue
        do {
            record = try RecordJSON.record(from: recordJSON, kinds: kinds[name] ?? ["id": .uuid])
        } catch {
            throw ToolError("\(name) \(id): \(error)")
        }
        switch IndexEntries.value(of: "id", in: record) {
        case .uuid(id): break
        case .null: throw ToolError("\(name) \(id): the record has no id field")
        case let other:
            throw ToolError(
                "\(name) \(id): the record's id field (\(RecordJSON.defaultJSON(other).serialized())) differs from the "
                    + "line's id")
        }
        return .record(entity: name, id: id, value: record)
    }

    /// The kinds each entity's fields are read with: the catalog's, else the export header's; an `id` is a UUID
    /// whether or not the catalog has seen one yet (an empty store's field table is empty).
    static func kinds(
        of entities: [String: EntityCatalog], header: [String: [String: ValueKind]]
    ) -> [String: [String: ValueKind]] {
        entities.mapValues { entity in
            var kinds = header[entity.name] ?? [:]
            kinds.merge(RecordJSON.kinds(of: entity.fields)) { _, catalog in catalog }
            if kinds["id"] == nil { kinds["id"] = .uuid }
            return kinds
        }
    }

    /// Reads the field kinds of a header line.
    private static func header(_ json: JSONValue) throws(ToolError) -> [String: [String: ValueKind]] {
        guard json[member: ExportCommand.headerMarker] == .number("1") else {
            throw ToolError("this kvtool reads export version 1 only")
        }
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
}
