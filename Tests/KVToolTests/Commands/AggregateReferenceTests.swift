import Foundation
import KVStore
import KVStoreInspection
import TestSupport
import Testing

/// `kvtool count`'s aggregates and groups on random items, against a reference that holds every item in memory:
/// sums, averages, minimums, maximums and distinct counts, grouped or not, with and without conditions.
@Suite struct AggregateReferenceTests {
    /// A field's values as the store holds them, from the Swift values.
    static func recordValues(_ item: Item, _ field: String) -> [RecordValue] {
        switch field {
        case "name": [.string(item.name)]
        case "rank": [.int(Int64(item.rank))]
        case "score": item.score.map { [.double($0)] } ?? []
        case "size": [.uint(item.size)]
        case "weight": [.float(item.weight)]
        case "group": [.string(item.group)]
        case "tags": item.tags.map { .string($0) }
        case "isOpen": [.bool(item.isOpen)]
        case "due": item.due.map { [.date($0)] } ?? []
        default: []
        }
    }

    /// The identity of a value for distinct counts and groups: numbers by value (one NaN, one zero), strings by
    /// their NFC form.
    static func identity(_ value: RecordValue?) -> String {
        switch value {
        case nil: "null"
        case .double(let number)?: number.isNaN ? "nan" : number == 0 ? "d0" : "d\(number)"
        case .string(let text)?: "s" + text.precomposedStringWithCanonicalMapping
        case .date(let date)?: "t\(date.timeIntervalSinceReferenceDate)"
        case let other?: "\(other)"
        }
    }

    /// The reference's order of two values of one field.
    static func order(_ left: RecordValue, _ right: RecordValue) -> Int {
        func reference(_ value: RecordValue) -> ReferenceValue {
            switch value {
            case .int(let number): .integer(Int128(number))
            case .uint(let number): .integer(Int128(number))
            case .double(let number): .double(number)
            case .float(let number): .double(Double(number))
            case .date(let date): .double(date.timeIntervalSinceReferenceDate)
            case .string(let text): .string(text)
            default: .bool(false)
            }
        }
        if case .bool(let left) = left, case .bool(let right) = right { return left == right ? 0 : left ? 1 : -1 }
        return ReferenceValue.order(reference(left), reference(right)) ?? 0
    }

    /// One aggregate of the reference over some items, in ID order.
    static func aggregate(_ function: String, _ field: String, of items: [Item]) -> RecordValue {
        let values = items.flatMap { recordValues($0, field) }
        switch function {
        case "sum", "average":
            var integers: Int128 = 0
            var doubles = 0.0
            var isDouble = false
            for value in values {
                switch value {
                case .int(let number): integers += Int128(number)
                case .uint(let number): integers += Int128(number)
                case .double(let number):
                    isDouble = true
                    doubles += number
                case .float(let number):
                    isDouble = true
                    doubles += Double(number)
                default: break
                }
            }
            // A NaN result is the one quiet NaN, whatever NaN the arithmetic made.
            func canonical(_ number: Double) -> RecordValue { .double(number.isNaN ? .nan : number) }
            if function == "average" {
                return values.isEmpty ? .null : canonical((Double(integers) + doubles) / Double(values.count))
            }
            return isDouble ? canonical(Double(integers) + doubles) : .int(Int64(integers))
        case "min", "max":
            var best: RecordValue?
            for value in values {
                guard let current = best else {
                    best = value
                    continue
                }
                let order = order(value, current)
                if function == "min" ? order < 0 : order > 0 { best = value }
            }
            return best ?? .null
        default:
            let identities = items.flatMap { item in
                let values = recordValues(item, field)
                return values.isEmpty ? ["null"] : values.map { identity($0) }
            }
            return .int(Int64(Set(identities).count))
        }
    }

    /// The JSON kvtool prints for a value.
    static func json(_ value: RecordValue) -> JSONValue {
        RecordJSON.json(for: value, kind: value.kind)
    }

    static let requestSets: [[(function: String, field: String)]] = [
        [("sum", "rank"), ("average", "score"), ("min", "name"), ("max", "due"), ("distinct", "tags")],
        [("sum", "score"), ("average", "rank"), ("min", "score"), ("max", "weight"), ("distinct", "score")],
        [("sum", "size"), ("average", "weight"), ("min", "tags"), ("max", "tags"), ("distinct", "group")],
    ]

    @Test(arguments: [UInt64(21), 22])
    func aggregatesAndGroupsAreTheReferences(seed: UInt64) throws {
        let store = TemporaryStore()
        let items = ItemData.random(count: 140, seed: seed)
        try ItemData.write(items, at: store.path)
        var random = SplitMix64(seed: seed)
        for round in 0..<30 {
            let requests = Self.requestSets[round % Self.requestSets.count]
            let condition = Bool.random(using: &random) ? WhereReferenceTests.randomCondition(using: &random) : nil
            let groupBy = random.pick([nil, "group", "tags", "score", "isOpen", "due"])
            let matching = items.filter { condition?.matches($0) ?? true }
            var arguments = ["count", store.path, "Item", "--json"]
            arguments += condition.map { ["--where", $0.description] } ?? []
            arguments += requests.flatMap { ["--\($0.function)", $0.field] }
            arguments += groupBy.map { ["--group-by", $0] } ?? []
            let result = kvtool(arguments: arguments)
            let label = arguments.dropFirst(2).joined(separator: " ")
            try #require(result.status == 0, "\(label): \(result.errors)")
            let output = try parseJSON(result.output)
            #expect(output[member: "count"] == .number(String(matching.count)), "\(label)")
            func expectResults(_ json: JSONValue, of group: [Item]) {
                #expect(json[member: "count"] == .number(String(group.count)), "\(label)")
                for (function, field) in requests {
                    let expected = Self.json(Self.aggregate(function, field, of: group))
                    #expect(json[member: function]?[member: field] == expected, "\(label): \(function)(\(field))")
                }
            }
            guard let groupBy else {
                expectResults(output, of: matching)
                continue
            }
            // Each record in the group of each of its values (null when it has none), the first value seen shown.
            var groups: [String: (value: RecordValue, items: [Item])] = [:]
            for item in matching {
                let values = Self.recordValues(item, groupBy)
                var seen = Set<String>()
                for value in values.isEmpty ? [RecordValue.null] : values {
                    let identity = value == .null ? "null" : Self.identity(value)
                    guard seen.insert(identity).inserted else { continue }
                    groups[identity, default: (value, [])].items.append(item)
                }
            }
            guard case .array(let printed)? = output[member: "groups"] else {
                Issue.record("\(label): no groups in \(result.output)")
                continue
            }
            #expect(printed.count == groups.count, "\(label)")
            var previous: RecordValue?
            for json in printed {
                let match = groups.values.first { Self.json($0.value) == json[member: "value"] }
                guard let match else {
                    Issue.record("\(label): unexpected group \(json)")
                    continue
                }
                expectResults(json, of: match.items)
                // Groups come in the index order of their values, null first.
                if let previous, previous != .null {
                    #expect(match.value != .null && Self.order(previous, match.value) < 0, "\(label): group order")
                }
                previous = match.value
            }
        }
    }

    @Test func minimumsAndMaximumsFromOneIndexEntryAgreeWithAScan() throws {
        let store = TemporaryStore()
        let items = ItemData.random(count: 120, seed: 31)
        try ItemData.write(items, at: store.path)
        for field in ["rank", "score", "due", "name"] {
            let indexed = kvtool("count", store.path, "Item", "--json", "--min", field, "--max", field)
            // A condition every item meets makes the same aggregates a scan.
            let scanned = kvtool(
                "count", store.path, "Item", "--json", "--min", field, "--max", field, "--where", "size>=0")
            let (fromIndex, fromScan) = (try parseJSON(indexed.output), try parseJSON(scanned.output))
            for function in ["min", "max"] {
                let expected = Self.json(Self.aggregate(function, field, of: items))
                #expect(fromIndex[member: function]?[member: field] == expected, "\(function)(\(field))")
                #expect(fromScan[member: function]?[member: field] == expected, "\(function)(\(field)) by a scan")
            }
            #expect(fromScan[member: "plan"] == .string("scan"))
            let plan = "all records; min(\(field)), max(\(field)) from one entry of index \(field)"
            #expect(fromIndex[member: "plan"] == .string(plan), "\(field)")
        }
    }

    @Test func anExtremeWhoseKeyIsCutIsReadFromTheRecords() throws {
        let store = TemporaryStore()
        // The two long names share their cut key's prefix; their order is the hash's, not the names'.
        let names = ["a", String(repeating: "x", count: 600) + "2", String(repeating: "x", count: 600) + "1", "b"]
        let items = names.enumerated().map { number, name in
            Item(
                id: ItemData.id(number), name: name, rank: 0, score: nil, size: 0, weight: 0, group: "g", level: 0,
                tags: [], isOpen: false, due: nil, note: nil)
        }
        try ItemData.write(items, at: store.path)
        let output = try parseJSON(
            kvtool("count", store.path, "Item", "--json", "--min", "name", "--max", "name").output)
        #expect(output[member: "min"]?[member: "name"] == .string("a"))
        #expect(output[member: "max"]?[member: "name"] == .string(names[1]))
        #expect(output[member: "plan"] == .string("all records"))
    }

    @Test func emptyResultsHaveZeroSumsAndNullExtremes() throws {
        let store = TemporaryStore()
        try ItemData.write(ItemData.random(count: 10, seed: 3), at: store.path)
        let aggregates = ["--sum", "rank", "--average", "rank", "--min", "rank", "--max", "rank", "--distinct", "rank"]
        #expect(
            kvtool(arguments: ["count", store.path, "Item", "--json", "--where", "rank>100"] + aggregates).output
                == #"{"entity":"Item","count":0,"sum":{"rank":0},"average":{"rank":null},"min":{"rank":null},"#
                + #""max":{"rank":null},"distinct":{"rank":0},"plan":"index rank: range (018000000000000064, +inf) "#
                + #"(exact)"}"# + "\n")
        #expect(
            kvtool(arguments: ["count", store.path, "Item", "--where", "rank>100", "--group-by", "group"] + aggregates)
                == RunResult(
                    status: 0,
                    output: """
                        group  count  sum(rank)  average(rank)  min(rank)  max(rank)  distinct(rank)
                        -----  -----  ---------  -------------  ---------  ---------  --------------
                        (0 groups, 0 records)

                        """, errors: ""))
    }

    @Test func textOutputAlignsNamesOrGroups() throws {
        let store = TemporaryStore()
        let items = (0..<4).map { number in
            Item(
                id: ItemData.id(number), name: "n\(number)", rank: number * 10, score: number == 0 ? nil : 0.5,
                size: 1, weight: 1, group: number < 3 ? "g1" : "g2", level: 0,
                tags: number == 1 ? ["red", "blue"] : [],
                isOpen: false, due: nil, note: nil)
        }
        try ItemData.write(items, at: store.path)
        #expect(
            kvtool("count", store.path, "Item", "--sum", "rank", "--average", "score", "--max", "name")
                == RunResult(
                    status: 0,
                    output: "count           4\nsum(rank)       60\naverage(score)  0.5\nmax(name)       n3\n",
                    errors: ""))
        #expect(
            kvtool("count", store.path, "Item", "--sum", "rank", "--group-by", "tags")
                == RunResult(
                    status: 0,
                    output: """
                        tags  count  sum(rank)
                        ----  -----  ---------
                        null      3         50
                        blue      1         10
                        red       1         10
                        (3 groups, 4 records)

                        """, errors: ""))
    }

    @Test func integerSumsThatDoNotFitIn64BitsAreErrors() throws {
        let store = TemporaryStore()
        let items = [Int.max, Int.max, Int.min].enumerated().map { number, rank in
            Item(
                id: ItemData.id(number), name: "n", rank: rank, score: nil, size: UInt64.max - UInt64(number),
                weight: 0, group: number == 2 ? "g2" : "g1", level: 0, tags: [], isOpen: false, due: nil, note: nil)
        }
        try ItemData.write(items, at: store.path)
        #expect(
            kvtool("count", store.path, "Item", "--sum", "rank", "--where", "rank>0")
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: The sum of rank is 18446744073709551614, which does not fit in a 64-bit integer "
                        + "(Int64); use --average, or narrow the --where conditions\n"))
        #expect(
            kvtool("count", store.path, "Item", "--sum", "size")
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: The sum of size is 55340232221128654842, which does not fit in a 64-bit integer "
                        + "(UInt64); use --average, or narrow the --where conditions\n"))
        #expect(
            kvtool("count", store.path, "Item", "--sum", "rank", "--group-by", "group").errors
                == "Error: The sum of rank in the group group=\"g1\" is 18446744073709551614, which does not fit in a "
                + "64-bit integer (Int64); use --average, or narrow the --where conditions\n")
        // Exact all the way: the sum of all three is Int64.max - 1, though the first two overflow Int64.
        #expect(
            kvtool("count", store.path, "Item", "--sum", "rank", "--json").output.contains(
                #""sum":{"rank":9223372036854775806}"#))
        #expect(
            kvtool("count", store.path, "Item", "--average", "rank", "--where", "rank>0", "--json").output
                .contains(#""average":{"rank":9.223372036854776e+18}"#))
    }
}
