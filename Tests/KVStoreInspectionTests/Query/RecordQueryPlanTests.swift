import Foundation
import KVStore
import KVStoreInspection
import LMDB
import Testing

/// `RecordQuery` over the library's catalog planner: it reads through an index when one serves the conditions, and
/// finds exactly the records a scan of the whole table finds.
@Suite struct RecordQueryPlanTests {
    /// What a query found, in the order it found it.
    private struct Found: Equatable {
        var ids: [UUID] = []
        var records: [RecordValue] = []
    }

    /// Runs `conditions` as a query on the store at `path`, and, for comparison, a walk of every record kept by the
    /// same conditions.
    private static func run(
        _ conditions: [RecordCondition], entity name: String, at path: String
    ) throws -> (plan: RecordQuery.Plan, description: String, found: Found, scanned: Found, count: Int) {
        let store = try InspectedStore.open(path)
        defer { store.close() }
        let entity = try store.entity(named: name)
        let query = try RecordQuery(store: store, entity: entity, conditions: conditions)
        var found = Found()
        let damage = try query.forEach { id, record in
            found.ids.append(id)
            found.records.append(record)
            return true
        }
        let everything = try RecordQuery(store: store, entity: entity, conditions: [])
        #expect(everything.plan == .all)
        var scanned = Found()
        let scanDamage = try everything.forEach { id, record in
            if conditions.allSatisfy({ $0.matches(record) }) {
                scanned.ids.append(id)
                scanned.records.append(record)
            }
            return true
        }
        let counted = try query.count()
        #expect(damage.isEmpty && scanDamage.isEmpty && counted.damage.isEmpty)
        return (query.plan, query.planDescription, found, scanned, counted.count)
    }

    private static func long(_ suffix: String) -> String {
        String(repeating: "/a/long/shared/prefix", count: 40) + suffix
    }

    @Test func anIndexedEqualityIsReadThroughItsIndexAndFindsWhatAScanFinds() throws {
        let store = TemporaryStore()
        try store.write()
        let condition = RecordCondition(field: "shelf", value: .string("novels"), isGuessed: false)
        let result = try Self.run([condition], entity: "Book", at: store.path)
        guard case .index(let lookup, let isExact) = result.plan else {
            Issue.record("the plan is \(result.plan), not the index")
            return
        }
        #expect(lookup.index.name == "shelf")
        #expect(lookup.keys.count == 1)
        #expect(isExact)
        #expect(result.description == "index shelf: 1 key (exact)")
        // One key of a non-unique index holds its owners in ID order, as the record table does.
        #expect(result.found.ids == sampleBooks.filter { $0.shelf == "novels" }.map(\.id))
        #expect(result.found == result.scanned)
        #expect(result.count == 2)
    }

    @Test func aConditionNoIndexServesIsAScanThatKeepsOnlyMatches() throws {
        let store = TemporaryStore()
        try store.write()
        let condition = RecordCondition(field: "pages", value: .int(249), isGuessed: false)
        let result = try Self.run([condition], entity: "Book", at: store.path)
        #expect(result.plan == .scan)
        #expect(result.found.ids == [sampleBooks[1].id])
        #expect(result.found == result.scanned)
        #expect(result.count == 1)
    }

    @Test func anIndexedConditionWithAnotherIsReadThroughTheIndexAndCheckedOnEachRecord() throws {
        let store = TemporaryStore()
        try store.write()
        let conditions = [
            RecordCondition(field: "shelf", value: .string("novels"), isGuessed: false),
            RecordCondition(field: "title", value: .string("Persuasion"), isGuessed: false),
        ]
        let result = try Self.run(conditions, entity: "Book", at: store.path)
        #expect(result.description == "index shelf: 1 key")
        #expect(result.found.ids == [sampleBooks[1].id])
        #expect(result.found == result.scanned)
        #expect(result.count == 1)
    }

    @Test func aUniqueValueWhoseCutKeyOthersShareFindsOnlyItsOwnRecord() throws {
        let store = TemporaryStore()
        let handles = (0..<6).map { Handle(path: Self.long("/\($0)")) }
        try store.write(books: [], handles: handles, collidingLongKeys: true)
        for (number, handle) in handles.enumerated() {
            let condition = RecordCondition(field: "path", value: .string(Self.long("/\(number)")), isGuessed: false)
            let result = try Self.run([condition], entity: "Handle", at: store.path)
            guard case .index(let lookup, let isExact) = result.plan else {
                Issue.record("the plan is \(result.plan), not the index")
                return
            }
            #expect(lookup.index.name == "path")
            // The value's key is longer than LMDB's limit: the index holds every owner of the cut, to be confirmed.
            #expect(!isExact)
            #expect(result.found.ids == [handle.id])
            #expect(result.found == result.scanned)
            #expect(result.count == 1)
        }
        // A value that shares the cut but no record holds finds nothing.
        let absent = RecordCondition(field: "path", value: .string(Self.long("/absent")), isGuessed: false)
        let result = try Self.run([absent], entity: "Handle", at: store.path)
        #expect(result.found == Found())
        #expect(result.scanned == Found())
        #expect(result.count == 0)
    }

    @Test func orderConditionsReadARangeOfTheIndexInItsOrder() throws {
        let store = TemporaryStore()
        try store.write()
        let condition = RecordCondition(field: "shelf", operator: .lessThan, value: .string("p"), isGuessed: false)
        let result = try Self.run([condition], entity: "Book", at: store.path)
        guard case .index(let lookup, let isExact) = result.plan else {
            Issue.record("the plan is \(result.plan), not the index")
            return
        }
        #expect(lookup.index.name == "shelf")
        #expect(isExact)
        // The range begins after the null key and ends before "p"'s.
        #expect(result.description == "index shelf: range (00, 01700001) (exact)")
        // By shelf, then ID: mathematics before novels, though the scan finds the novels first.
        #expect(result.found.ids == [sampleBooks[2].id, sampleBooks[0].id, sampleBooks[1].id])
        #expect(Set(result.found.ids) == Set(result.scanned.ids))
        #expect(result.count == 3)
    }

    @Test func rangesOverCutKeysFindWhatAScanFinds() throws {
        let store = TemporaryStore()
        let handles = (0..<8).map { Handle(path: $0 < 4 ? Self.long("/\($0)") : "/short/\($0)") }
        try store.write(books: [], handles: handles, collidingLongKeys: true)
        func path(_ op: RecordCondition.Operator, _ value: String) -> RecordCondition {
            RecordCondition(field: "path", operator: op, value: .string(value), isGuessed: false)
        }
        let conditions: [(RecordCondition, exact: Bool, matches: Int)] = [
            // A short prefix or bound: whole, it decides the cut keys too.
            (path(.prefix, "/a/long"), true, 4),
            (path(.greaterThanOrEqual, "/b"), true, 4),
            // A long prefix, and bounds whose keys are cut: the range is widened, and its records checked.
            (path(.prefix, Self.long("/1")), false, 1),
            (path(.lessThan, Self.long("/2")), false, 2),
            (path(.greaterThan, Self.long("/2")), false, 5),
        ]
        // Each result is compared with a scan that keeps the records every condition matches.
        for (condition, exact, matches) in conditions {
            let result = try Self.run([condition], entity: "Handle", at: store.path)
            guard case .index(let lookup, let isExact) = result.plan else {
                Issue.record("the plan is \(result.plan), not the index")
                continue
            }
            #expect(lookup.index.name == "path")
            #expect(isExact == exact, "\(condition.description)")
            #expect(Set(result.found.ids) == Set(result.scanned.ids), "\(condition.description)")
            #expect(result.found.ids.count == result.scanned.ids.count, "\(condition.description)")
            #expect(result.count == result.scanned.ids.count, "\(condition.description)")
            #expect(result.count == matches, "\(condition.description)")
        }
    }
}
