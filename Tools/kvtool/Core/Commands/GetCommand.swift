import CommandLineKit
import Foundation
import KVStore
import KVStoreInspection
import LMDB

/// `kvtool get <path> <entity> <id> ... [--follow <relationship> ...]`: records as pretty JSON, with related ones.
struct GetCommand: Command {
    static let configuration = CommandConfiguration(
        name: "get", abstract: "Print records by ID as pretty JSON, with their related records.",
        discussion: """
            Each record is printed in the form 'export' writes records. With --follow, the related records are added \
            under "$related", by relationship: one record (or null) for a to-one relationship, an array for a \
            to-many one. A to-one relationship reads its stored field, a many-to-many one its [UUID] field, and a \
            derived to-many one the target's index on the inverse's field. A reference to a record that does not \
            exist shows as null, with a warning.
            """)

    /// The arguments and options of `kvtool get`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let entity = CommonOptions.entity
        let ids = Argument<[String]>("id", help: "The ID of a record (a UUID).", isRequired: true)
        let follow = Option<[String]>(
            "follow", valueName: "relationship", help: "Include the records of this relationship; repeatable.")
    }

    /// The store's directory.
    let path: String
    /// The entity of the records.
    let entity: String
    /// The IDs to print.
    let ids: [UUID]
    /// The relationships to follow.
    let follow: [String]

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        entity = try arguments[\.entity]
        var ids: [UUID] = []
        for text in try arguments[\.ids] {
            guard let id = RecordKey.uuid(parsing: text) else { throw UsageError("Malformed UUID '\(text)'") }
            ids.append(id)
        }
        self.ids = ids
        follow = try arguments[\.follow]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let entity = try store.entity(named: entity)
            let records = try store.recordTable(of: entity)
            let paths = try follow.map { try RelationshipPath(named: $0, of: entity, in: store) }
            let kinds = RecordJSON.kinds(of: entity.fields)
            var missing: [UUID] = []
            for id in ids {
                let printed = try store.environment.read { txn -> String? in
                    guard let record = try RecordKey.record(id, of: entity, in: records, txn: txn) else { return nil }
                    var json = RecordJSON.json(forRecord: record, kinds: kinds)
                    if !paths.isEmpty, case .object(var members) = json {
                        let related = try paths.map { path in
                            JSONMember(
                                path.relationship.name,
                                try Self.related(path, of: record, id: id, entity: entity, txn: txn, console: console))
                        }
                        members.append(JSONMember("$related", .object(related)))
                        json = .object(members)
                    }
                    return json.serialized(pretty: true)
                }
                if let printed {
                    console.print(printed)
                } else {
                    missing.append(id)
                }
            }
            for id in missing { console.printError("Error: \(entity.name) has no record with ID \(id)") }
            return missing.isEmpty ? 0 : 1
        }
    }

    /// The JSON of the records related through `path`: one record or null, or an array.
    private static func related(
        _ path: RelationshipPath, of record: RecordValue, id: UUID, entity: EntityCatalog, txn: borrowing Transaction,
        console: Console
    ) throws -> JSONValue {
        let kinds = RecordJSON.kinds(of: path.target.fields)
        var values: [JSONValue] = []
        for relatedID in try path.relatedIDs(of: record, id: id, txn: txn) {
            if let target = try RecordKey.record(relatedID, of: path.target, in: path.targetRecords, txn: txn) {
                values.append(RecordJSON.json(forRecord: target, kinds: kinds))
            } else {
                console.printError(
                    "warning: \(entity.name) \(id): \(path.relationship.name) references \(path.target.name) "
                        + "\(relatedID), which does not exist")
                values.append(.null)
            }
        }
        return path.isToMany ? .array(values) : values.first ?? .null
    }
}
