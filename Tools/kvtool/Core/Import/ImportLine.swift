import Foundation
import KVStore
import KVStoreInspection

/// One line of an import, parsed: its kind and members, checked for form; what the record holds is read against the
/// schema later (``ImportEntity/record(from:)``).
///
/// A line is an export's header (it has a `kvtool-export` member), or has a `kind`: `record` (the default for a line
/// without one, as hand-written lines are), `chunk`, `delete` or `end`. Any other kind is refused with a message naming
/// it, so that a newer export's lines are never misread.
enum ImportLine {
    /// The header: the export's version and catalog.
    case header(ExportHeader)
    /// A record of an entity.
    case record(RecordLine)
    /// A chunk of an external value.
    case chunk(ChunkLine)
    /// A model to delete: an incremental export's model deleted since its token.
    case delete(DeleteLine)
    /// The last line of an export, with its counts.
    case end(ExportEnd)

    /// A delete line: `{"kind":"delete","entity":…,"id":…}`.
    struct DeleteLine {
        /// The entity.
        let entity: String
        /// The ID of the record to delete.
        let id: UUID
    }

    /// A record line: `{"kind":"record","entity":…,"id":…,"record":{…}}`.
    struct RecordLine {
        /// The entity.
        let entity: String
        /// The record's ID.
        let id: UUID
        /// The record, as JSON.
        let record: JSONValue
    }

    /// A chunk line: `{"kind":"chunk","entity":…,"id":…,"field":…,"index":…,"data":"<Base64>"}`.
    struct ChunkLine {
        /// The entity of the value's record.
        let entity: String
        /// The ID of the value's record.
        let id: UUID
        /// The external field.
        let field: String
        /// The chunk's number, from 0.
        let index: Int
        /// The chunk's bytes.
        let data: Data
    }

    /// Parses a line.
    ///
    /// - Parameter bytes: The line, without its line break.
    /// - Throws: ``ToolError`` saying what is wrong (without the line number): malformed JSON (a member named twice
    ///   included), an unknown kind, a missing or unexpected member, a bad UUID, Base64 or chunk number.
    static func parse(_ bytes: [UInt8]) throws(ToolError) -> ImportLine {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw ToolError(error.description)
        }
        guard case .object(let members) = json else {
            throw ToolError("expected a JSON object, got \(json.kindDescription)")
        }
        if json[member: ExportHeader.marker] != nil {
            if let kind = json[member: "kind"], kind != .string(ExportLineKind.header) {
                throw ToolError(
                    "a line with \"\(ExportHeader.marker)\" is a header, but its kind is \(kind.serialized())")
            }
            return .header(try ExportHeader(json))
        }
        let kind: String
        switch json[member: "kind"] {
        case nil: kind = ExportLineKind.record
        case .string(let text)?: kind = text
        case let other?: throw ToolError("the line's \"kind\" is \(other.kindDescription), not a string")
        }
        switch kind {
        case ExportLineKind.record:
            try expectMembers(
                members, ["kind", "entity", "id", "record"], shape: "{\"entity\":…,\"id\":…,\"record\":{…}}")
            let (entity, id) = try owner(json)
            guard let record = json[member: "record"] else { throw ToolError("the line has no \"record\"") }
            return .record(RecordLine(entity: entity, id: id, record: record))
        case ExportLineKind.chunk:
            try expectMembers(
                members, ["kind", "entity", "id", "field", "index", "data"],
                shape: "{\"kind\":\"chunk\",\"entity\":…,\"id\":…,\"field\":…,\"index\":…,\"data\":…}")
            let (entity, id) = try owner(json)
            guard case .string(let field)? = json[member: "field"] else {
                throw ToolError("the chunk line has no \"field\" string")
            }
            guard case .number(let indexText)? = json[member: "index"], let index = Int(indexText), index >= 0,
                index <= Int(UInt32.max)
            else { throw ToolError("the chunk line's \"index\" is not a chunk number (0 to 2^32 - 1)") }
            guard case .string(let text)? = json[member: "data"] else {
                throw ToolError("the chunk line has no \"data\" string")
            }
            guard let data = Data(base64Encoded: text) else {
                throw ToolError("the chunk line's \"data\" is not Base64")
            }
            return .chunk(ChunkLine(entity: entity, id: id, field: field, index: index, data: data))
        case ExportLineKind.delete:
            try expectMembers(
                members, ["kind", "entity", "id"], shape: "{\"kind\":\"delete\",\"entity\":…,\"id\":…}")
            let (entity, id) = try owner(json)
            return .delete(DeleteLine(entity: entity, id: id))
        case ExportLineKind.end:
            return .end(try ExportEnd(json))
        case ExportLineKind.header:
            throw ToolError("a header line needs \"\(ExportHeader.marker)\" with the export's version")
        default:
            throw ToolError(
                "the line's kind '\(kind)' is not one this kvtool reads (\(ExportLineKind.known.joined(separator: ", "))); "
                    + "the export was written by a newer kvtool: import it with that one")
        }
    }

    private static func expectMembers(_ members: [JSONMember], _ allowed: [String], shape: String) throws(ToolError) {
        for member in members where !allowed.contains(member.name) {
            throw ToolError("unexpected member '\(member.name)'; a line is \(shape)")
        }
    }

    /// The `entity` and `id` of a record or chunk line.
    private static func owner(_ json: JSONValue) throws(ToolError) -> (String, UUID) {
        guard case .string(let entity)? = json[member: "entity"] else {
            throw ToolError("the line has no \"entity\" string")
        }
        guard case .string(let idText)? = json[member: "id"] else { throw ToolError("the line has no \"id\" string") }
        guard let id = RecordKey.uuid(parsing: idText) else { throw ToolError("malformed UUID '\(idText)' in \"id\"") }
        return (entity, id)
    }
}
