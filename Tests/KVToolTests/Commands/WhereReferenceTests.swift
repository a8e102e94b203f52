import Foundation
import KVStore
import KVStoreInspection
import TestSupport
import Testing

@testable import KVToolCore

/// `--where` with every operator, on random items, against a reference that holds every item in memory and filters
/// them: `list` must print exactly the reference's items, each once, and `count` its count, whatever the plan
/// (keys, single-field and compound ranges, prefixes, scans), exact or not.
@Suite struct WhereReferenceTests {
    /// The operators and values a random condition draws from, per field.
    static func randomCondition(using random: inout SplitMix64) -> ReferenceCondition {
        let field = random.pick([
            "name", "rank", "score", "size", "weight", "group", "level", "tags", "isOpen", "due", "note",
        ])
        let orderOperators = ["=", "!=", "<", "<=", ">", ">="]
        switch field {
        case "name", "group", "tags", "note":
            let pool =
                switch field {
                case "name": ItemData.names + ["al", "x", "\u{E9}", "a"]
                case "group": ["g1", "g2", "g3", "g", "g0"]
                case "tags": ItemData.tags + ["r", "e", "zz"]
                default: ["n1", "n2", "n"]
                }
            let op = random.pick((orderOperators + ["^="]))
            let text = random.pick(pool)
            // The reference knows no null here: a value that reads as `null` is not drawn.
            return ReferenceCondition(field: field, op: op, value: .string(text), text: text)
        case "rank", "size", "level":
            let range = field == "rank" ? -60...60 : field == "size" ? 0...11 : -1...4
            let number = Int.random(in: range, using: &random)
            return ReferenceCondition(
                field: field, op: random.pick(orderOperators), value: .integer(Int128(number)),
                text: String(number))
        case "score", "weight":
            let op = random.pick(orderOperators)
            if field == "score", op == "=" || op == "!=", Bool.random(using: &random) {
                return ReferenceCondition(field: field, op: op, value: nil, text: "null")
            }
            let numbers: [(text: String, value: Double)] = [
                ("-3", -3), ("-2.5", -2.5), ("-1", -1), ("-0.0", -0.0), ("0", 0), ("0.25", 0.25), ("0.5", 0.5),
                ("1.5", 1.5), ("2", 2), ("nan", .nan), ("inf", .infinity), ("-inf", -.infinity),
            ]
            let (text, value) = random.pick(numbers)
            return ReferenceCondition(field: field, op: op, value: .double(value), text: text)
        case "isOpen":
            let flag = Bool.random(using: &random)
            return ReferenceCondition(
                field: field, op: Bool.random(using: &random) ? "=" : "!=", value: .bool(flag), text: String(flag))
        default:
            let op = random.pick(orderOperators)
            if op == "=" || op == "!=", Int.random(in: 0...3, using: &random) == 0 {
                return ReferenceCondition(field: field, op: op, value: nil, text: "null")
            }
            let hours = Int.random(in: -1...11, using: &random)
            return ReferenceCondition(
                field: field, op: op, value: .double(ItemData.date(hours).timeIntervalSinceReferenceDate),
                text: ItemData.dateText(hours))
        }
    }

    /// What the plans of the random queries were, to show that every kind of plan was exercised.
    struct PlanTally {
        var exactRanges = 0
        var checkedRanges = 0
        var compoundRanges = 0
        var keys = 0
        var scans = 0
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func listAndCountFindWhatTheReferenceFinds(seed: UInt64) throws {
        let store = TemporaryStore()
        let items = ItemData.random(count: 160, seed: seed)
        try ItemData.write(items, at: store.path)
        var random = SplitMix64(seed: seed &* 7919)
        var tally = PlanTally()
        for _ in 0..<120 {
            // Mostly conditions on one field, so that indexes answer them alone, and some pairs on the compound index.
            var conditions = [Self.randomCondition(using: &random)]
            switch Int.random(in: 0...5, using: &random) {
            case 0: conditions.append(Self.randomCondition(using: &random))
            case 1:
                let group = random.pick(["g1", "g2", "g3"])
                conditions = [ReferenceCondition(field: "group", op: "=", value: .string(group), text: group)]
                let level = Int.random(in: 0...3, using: &random)
                let op = random.pick(["=", "<", "<=", ">", ">="])
                conditions.append(
                    ReferenceCondition(field: "level", op: op, value: .integer(Int128(level)), text: String(level)))
                if op == "=", Bool.random(using: &random) {
                    let prefix = random.pick(["a", "al", "x", "e", "\u{E9}"])
                    conditions.append(
                        ReferenceCondition(field: "name", op: "^=", value: .string(prefix), text: prefix))
                }
            default: break
            }
            let expected = items.filter { item in conditions.allSatisfy { $0.matches(item) } }.map(\.id)
            let wheres = conditions.flatMap { ["--where", $0.description] }
            let listed = kvtool(arguments: ["list", store.path, "Item", "--json", "--fields", "id"] + wheres)
            #expect(listed.status == 0, "\(conditions): \(listed.errors)")
            let ids = try listedIDs(listed.output)
            #expect(Set(ids) == Set(expected), "\(conditions)")
            #expect(ids.count == Set(ids).count, "\(conditions): a record listed twice")
            let counted = kvtool(arguments: ["count", store.path, "Item", "--json"] + wheres)
            let json = try parseJSON(counted.output)
            #expect(json[member: "count"] == .number(String(expected.count)), "\(conditions)")
            guard case .string(let plan)? = json[member: "plan"] else {
                Issue.record("no plan in \(counted.output)")
                continue
            }
            if plan.contains(": range ") {
                if plan.hasSuffix("(exact)") { tally.exactRanges += 1 } else { tally.checkedRanges += 1 }
                if plan.hasPrefix("index group+level+name") { tally.compoundRanges += 1 }
                // A range lists in the index's order, which for one field is the field's order.
                if conditions.count == 1, conditions[0].field != "name" {
                    let byID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
                    let values = ids.compactMap { byID[$0]?.referenceValues(conditions[0].field).first }
                    let isSorted = zip(values, values.dropFirst()).allSatisfy {
                        (ReferenceValue.order($0, $1) ?? 1) <= 0
                    }
                    #expect(isSorted, "\(conditions): not in the index's order")
                }
            } else if plan.contains(" key") {
                tally.keys += 1
            } else {
                tally.scans += 1
                #expect(ids == expected, "\(conditions): a scan lists in ID order")
            }
            let explained = kvtool(arguments: ["count", store.path, "Item", "--explain"] + wheres)
            #expect(explained.output.hasPrefix("plan:   \(plan)\n"), "\(conditions)")
            #expect(explained.output.contains("exact:  yes") == plan.hasSuffix("(exact)"), "\(explained.output)")
        }
        #expect(tally.exactRanges > 5 && tally.checkedRanges > 0 && tally.compoundRanges > 5, "\(tally)")
        #expect(tally.keys > 2 && tally.scans > 5, "\(tally)")
    }

    @Test func chunkedRangeReadsResumeAfterTheLastKeyAndID() throws {
        let store = TemporaryStore()
        // Many items share each rank, so that chunks end inside the duplicates of one key.
        let items = ItemData.random(count: 90, seed: 11).enumerated().map { number, item in
            var item = item
            item.rank = number % 4
            return item
        }
        try ItemData.write(items, at: store.path)
        let inspected = try InspectedStore.open(store.path)
        defer { inspected.close() }
        let entity = try inspected.entity(named: "Item")
        let condition = try Condition(parsing: "rank>=1", entity: entity)
        var found: [[UUID]] = []
        for chunkSize in [1, 2, 7, 1000] {
            let query = try RecordQuery(store: inspected, entity: entity, conditions: [condition], chunkSize: chunkSize)
            var ids: [UUID] = []
            #expect(
                try query.forEach { id, _ in
                    ids.append(id)
                    return true
                }.isEmpty)
            #expect(try query.count().count == ids.count)
            found.append(ids)
        }
        let expected = items.filter { $0.rank >= 1 }.sorted {
            ($0.rank, $0.id.uuidString) < ($1.rank, $1.id.uuidString)
        }
        #expect(found.allSatisfy { $0 == expected.map(\.id) })
    }

    @Test func rangePlansNameTheirBoundsAndExactness() throws {
        let store = TemporaryStore()
        try ItemData.write(ItemData.random(count: 20, seed: 5), at: store.path)
        func plan(_ conditions: String...) throws -> String {
            let output = kvtool(
                arguments: ["count", store.path, "Item", "--json"] + conditions.flatMap { ["--where", $0] })
            guard case .string(let plan)? = try parseJSON(output.output)[member: "plan"] else { return output.errors }
            return plan
        }
        // Null's key, 00, is the lower bound: null meets no order condition.
        #expect(try plan("rank<3") == "index rank: range (00, 018000000000000003) (exact)")
        #expect(try plan("rank>3") == "index rank: range (018000000000000003, +inf) (exact)")
        #expect(try plan("rank>=-1", "rank<=2") == "index rank: range [017fffffffffffffff, 018000000000000002] (exact)")
        #expect(try plan("name^=al") == "index name: range [01616c, 01616d) (exact)")
        // A cut key's entries are checked on their records, but the range itself is exact.
        #expect(try plan("name>=x") == "index name: range [01780001, +inf) (exact)")
        #expect(
            try plan("group=g2", "level>=2")
                == "index group+level+name: range [0167320001018000000000000002, 0167320002) (exact)")
        #expect(
            try plan("group=g2", "level=1", "name^=al")
                == "index group+level+name: range [016732000101800000000000000101616c, "
                + "016732000101800000000000000101616d) (exact)")
        // A condition the range does not cover, or one whose kind was guessed, is checked on each record.
        #expect(try plan("rank<3", "isOpen=true") == "index rank: range (00, 018000000000000003)")
        #expect(try plan("tags^=r") == "scan")
        #expect(try plan("rank!=3") == "scan")
        #expect(try plan("weight>0") == "scan")
    }
}
