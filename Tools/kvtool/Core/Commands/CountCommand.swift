import CommandLineKit
import KVStore
import KVStoreInspection

/// `kvtool count <path> <entity> [--where <condition> ...] [--sum|--average|--min|--max|--distinct <field>]
/// [--group-by <field>] [--explain] [--json]`: how many records an entity has, or meet conditions, with aggregates of
/// their fields.
struct CountCommand: Command {
    static let configuration = CommandConfiguration(
        name: "count", abstract: "Count an entity's records, or those that meet conditions.",
        discussion: """
            Without conditions the count is the record table's size. Equalities on the fields of a ready index are \
            looked up in the index, and order and prefix conditions on a field read a range of its index (of a \
            compound index, after equalities on the fields before it); the entries are counted without reading \
            records when the index decides every condition (the plan then ends with '(exact)'). Other conditions, \
            and '!=', are checked on each record read, or on each record of a scan. --explain prints the plan \
            instead of counting.
            Conditions: '!=' holds for exactly the records '=' leaves out (a null or absent value, an array \
            without an equal element). Order conditions and prefixes hold for no null or absent value, and for an \
            array when one of its elements meets them. Numbers compare numerically (-0.0 equals 0.0, NaN is above \
            infinity), strings by the UTF-8 bytes of their NFC form (the index's order), UUIDs by their bytes, dates \
            by time; a value of another kind than the field's never meets one. Booleans, data, URLs, decimals and \
            containers have no order.
            Aggregates: --sum and --average take a number field (an integer sum is exact, and an error when it does \
            not fit in 64 bits; an average is a double); --min and --max a field with an order (numbers, strings in \
            the index's order, UUIDs, dates); --distinct counts different values. Null and absent values are left \
            out, but for --distinct, which counts null as a value; an array field gives each element. --group-by \
            counts and aggregates each value of a field apart: null, absent and empty-array values are one group, an \
            array counts in the group of each element. Without conditions, --min and --max of a field with a ready \
            index read one entry of it. Memory holds the groups and distinct values, never the records.
            A scan reports the damage 'list' reports (a key that is not a record key, a table whose own count \
            differs from the entries read) after the count of the records it could read, and the exit status is 1.
            """)

    /// The arguments and options of `kvtool count`.
    struct Arguments: ParsableArguments {
        let path = CommonOptions.path
        let entity = CommonOptions.entity
        let conditions = CommonOptions.condition
        let sum = Option<String?>("sum", valueName: "field", help: "Also print the sum of a number field.")
        let average = Option<String?>(
            "average", valueName: "field", help: "Also print the average of a number field.")
        let min = Option<String?>("min", valueName: "field", help: "Also print the smallest value of a field.")
        let max = Option<String?>("max", valueName: "field", help: "Also print the largest value of a field.")
        let distinct = Option<String?>(
            "distinct", valueName: "field", help: "Also print how many distinct values a field holds.")
        let groupBy = Option<String?>(
            "group-by", valueName: "field", help: "Count (and aggregate) the records of each value of a field.")
        let explain = CommonOptions.explain
        let json = Flag.json
    }

    /// The store's directory.
    let path: String
    /// The entity to count.
    let entity: String
    /// The `--where` conditions, as given.
    let conditions: [String]
    /// The aggregates asked for, in the order sum, average, min, max, distinct.
    let requests: [RecordAggregation.Request]
    /// The `--group-by` field.
    let groupBy: String?
    /// Whether to print the plan instead of counting.
    let explain: Bool
    /// Whether to print JSON.
    let json: Bool

    /// Reads the parsed arguments, checking the values that need no store.
    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        path = try arguments[\.path]
        entity = try arguments[\.entity]
        conditions = try arguments[\.conditions]
        json = arguments[\.json]
        explain = arguments[\.explain]
        for condition in conditions { _ = try Condition.split(condition) }
        let options: [(RecordAggregation.Function, String?)] = [
            (.sum, try arguments[\.sum]), (.average, try arguments[\.average]), (.min, try arguments[\.min]),
            (.max, try arguments[\.max]), (.distinct, try arguments[\.distinct]),
        ]
        requests = options.compactMap { function, field in field.map { .init(function, of: $0) } }
        groupBy = try arguments[\.groupBy]
    }

    /// Runs the command and returns its exit status.
    func run(_ console: Console) throws -> Int32 {
        try withStore(path) { store in
            let entity = try store.entity(named: entity)
            let conditions = try conditions.map { try Condition(parsing: $0, entity: entity) }
            try checkAggregates(of: entity)
            let query = try RecordQuery(store: store, entity: entity, conditions: conditions)
            // Without conditions or groups, a minimum or maximum is one entry of an index on its field.
            let indexes = requests.map { request -> IndexCatalog? in
                guard groupBy == nil, request.function == .min || request.function == .max else { return nil }
                return query.extremeIndex(of: request.field)
            }
            if explain {
                let explanation = QueryExplanation(query, aggregates: zip(requests, indexes).map { ($0.title, $1) })
                if json { console.print(explanation.json.serialized()) } else { console.output.write(explanation.text) }
                return 0
            }
            guard !requests.isEmpty || groupBy != nil else {
                let (count, damage) = try query.count()
                if json {
                    console.print(
                        JSONValue.object([
                            JSONMember("entity", .string(entity.name)), JSONMember("count", .number(String(count))),
                            JSONMember("plan", .string(query.planDescription)),
                        ]).serialized())
                } else {
                    console.print(String(count))
                }
                return report(damage, console)
            }
            return try aggregate(query, indexes: indexes, console: console)
        }
    }

    /// The kinds --sum and --average take.
    private static let numberKinds: Set<ValueKind> = [.int, .uint, .double, .float]

    /// Refuses aggregates of unknown fields, and of fields whose catalog kind the function does not take.
    ///
    /// - Throws: ``ToolError`` for an unknown field; ``UsageError`` for a field of the wrong kind.
    private func checkAggregates(of entity: EntityCatalog) throws {
        for field in requests.map(\.field) + (groupBy.map { [$0] } ?? []) where field != "id" {
            guard IndexEntries.fieldExists(field, in: entity.fields) else {
                throw ToolError("Unknown field '\(field)': \(entity.name) has no such field")
            }
        }
        for request in requests {
            guard
                let kind = entity.fields.existingID(for: request.field, in: .topLevel).flatMap({
                    entity.fields.kind(of: $0)
                }), kind != .array
            else { continue }
            let option = "--\(request.function.rawValue) \(request.field)"
            switch request.function {
            case .sum where !Self.numberKinds.contains(kind), .average where !Self.numberKinds.contains(kind):
                throw UsageError(
                    "\(option) needs a number field, and \(request.field) is of kind \(kind.typeName); "
                        + "use --min, --max or --distinct")
            case .min where !RecordOrder.isOrdered(kind), .max where !RecordOrder.isOrdered(kind):
                throw UsageError(
                    "\(option) needs a field with an order, and \(kind.typeName) fields have none; "
                        + "use --distinct or --group-by")
            default:
                break
            }
        }
    }

    /// Computes and prints the aggregates, and returns the exit status.
    ///
    /// - Throws: ``ToolError`` for an aggregate the records do not allow (``AggregationError``: a sum of text, an
    ///   integer sum beyond 64 bits); what the query throws.
    private func aggregate(_ query: RecordQuery, indexes: [IndexCatalog?], console: Console) throws -> Int32 {
        var aggregation = RecordAggregation(requests: requests, groupBy: groupBy)
        var damage: [InspectionError] = []
        var groups: [RecordAggregation.Group]
        var plan = query.planDescription
        do {
            if groupBy == nil, !requests.isEmpty, indexes.allSatisfy({ $0 != nil }),
                let results = try indexedExtremes(query, indexes: indexes.compactMap { $0 })
            {
                let count = try query.count().count
                groups = [RecordAggregation.Group(value: nil, count: count, results: results)]
                let names = Set(indexes.compactMap { $0?.name }).sorted().joined(separator: ", ")
                plan += "; " + requests.map(\.title).joined(separator: ", ") + " from one entry of index " + names
            } else {
                damage = try query.forEach { id, record in
                    try aggregation.add(record, id: id)
                    return true
                }
                groups = try aggregation.groups()
            }
        } catch let error as AggregationError {
            throw ToolError(error.message)
        }
        let total = groupBy == nil ? groups.first?.count ?? 0 : aggregation.recordCount
        if json {
            console.print(jsonResult(groups, total: total, entity: query.entity.name, plan: plan).serialized())
        } else {
            console.output.write(textResult(groups, total: total))
        }
        return report(damage, console)
    }

    /// Each request's minimum or maximum from one entry of its index, or `nil` when an entry cannot tell.
    ///
    /// - Throws: What ``RecordQuery/indexedExtreme(of:in:largest:)`` throws.
    private func indexedExtremes(_ query: RecordQuery, indexes: [IndexCatalog]) throws -> [RecordValue]? {
        var results: [RecordValue] = []
        for (request, index) in zip(requests, indexes) {
            guard let value = try query.indexedExtreme(of: request.field, in: index, largest: request.function == .max)
            else { return nil }
            results.append(value)
        }
        return results
    }

    /// The aggregates as JSON: the members of one group, or the groups under `groups`.
    private func jsonResult(
        _ groups: [RecordAggregation.Group], total: Int, entity: String, plan: String
    ) -> JSONValue {
        func members(of group: RecordAggregation.Group) -> [JSONMember] {
            var members = [JSONMember("count", .number(String(group.count)))]
            for function in RecordAggregation.Function.allCases {
                let values = zip(requests, group.results).filter { $0.0.function == function }
                guard !values.isEmpty else { continue }
                members.append(
                    JSONMember(
                        function.rawValue,
                        .object(values.map { JSONMember($0.field, RecordJSON.json(for: $1, kind: $1.kind)) })))
            }
            return members
        }
        var result = [JSONMember("entity", .string(entity))]
        if let groupBy {
            result.append(JSONMember("count", .number(String(total))))
            result.append(JSONMember("groupBy", .string(groupBy)))
            let list = groups.map { group in
                JSONValue.object(
                    [JSONMember("value", RecordJSON.json(for: group.value ?? .null, kind: group.value?.kind))]
                        + members(of: group))
            }
            result.append(JSONMember("groups", .array(list)))
        } else if let group = groups.first {
            result += members(of: group)
        }
        result.append(JSONMember("plan", .string(plan)))
        return .object(result)
    }

    /// The aggregates as text: `name  value` lines, or with `--group-by` a table of the groups.
    private func textResult(_ groups: [RecordAggregation.Group], total: Int) -> String {
        let titles = requests.map(\.title)
        guard let groupBy else {
            let group = groups.first
            let lines = [("count", String(group?.count ?? 0))] + zip(titles, (group?.results ?? []).map(cell))
            let width = (lines.map(\.0.count).max() ?? 0) + 2
            return lines.map { $0.padding(toLength: width, withPad: " ", startingAt: 0) + $1 + "\n" }.joined()
        }
        // Counts, sums, averages and distinct counts line up on the right; minimums and maximums are values.
        let numeric = requests.enumerated().filter { $0.element.function != .min && $0.element.function != .max }
        var table = TextTable(
            headers: [groupBy, "count"] + titles, rightAligned: Set([1] + numeric.map { $0.offset + 2 }))
        for group in groups {
            table.append([group.value.map(cell) ?? "null", String(group.count)] + group.results.map(cell))
        }
        return table.rendered()
            + "(\(Formatting.count(groups.count, "group")), \(Formatting.count(total, "record")))\n"
    }

    /// A value as text: `null`, or as a table cell shows it.
    private func cell(_ value: RecordValue) -> String {
        value == .null ? "null" : RecordPrinter.cell(value)
    }

    /// Prints what a scan found wrong with the record table, after the result, and returns the exit status.
    private func report(_ damage: [InspectionError], _ console: Console) -> Int32 {
        // A scan that met damage counted the records it could read: the result is printed, and said to be wrong.
        for problem in damage { console.printError("Error: \(problem.message)") }
        return damage.isEmpty ? 0 : 1
    }
}
