import CommandLineKit
import KVStore
import KVStoreInspection

/// `kvtool count <path> <entity> [--where <field=value> ...]`: how many records an entity has, or meet conditions.
struct CountCommand: Command {
    static let configuration = CommandConfiguration(
        name: "count", abstract: "Count an entity's records, or those that meet conditions.",
        discussion: """
            Without conditions the count is the record table's size. An equality on the fields of a ready index is \
            looked up in the index (its entries are counted without reading records when the index covers every \
            condition); other conditions are checked on each record of a scan. A scan reports the damage 'list' \
            reports (a key that is not a record key, a table whose own count differs from the entries read) after \
            the count of the records it could read, and the exit status is 1.
            """)

    /// The arguments and options of `kvtool count`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let entity = CommonOptions.entity
        let conditions = CommonOptions.condition
        let json = Flag.json
    }

    /// The store's directory.
    let path: String
    /// The entity to count.
    let entity: String
    /// The `--where` conditions, as given.
    let conditions: [String]
    /// Whether to print JSON.
    let json: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        entity = try arguments[\.entity]
        conditions = try arguments[\.conditions]
        json = arguments[\.json]
        for condition in conditions { _ = try Condition.split(condition) }
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let entity = try store.entity(named: entity)
            let conditions = try conditions.map { try Condition(parsing: $0, entity: entity) }
            let query = try RecordQuery(store: store, entity: entity, conditions: conditions)
            let (count, damage) = try query.count()
            if json {
                let members = [
                    JSONMember("entity", .string(entity.name)), JSONMember("count", .number(String(count))),
                    JSONMember("plan", .string(query.planDescription)),
                ]
                console.print(JSONValue.object(members).serialized())
            } else {
                console.print(String(count))
            }
            // A scan that met damage counted the records it could read: the count is printed, and said to be wrong.
            for problem in damage { console.printError("Error: \(problem.message)") }
            return damage.isEmpty ? 0 : 1
        }
    }
}
