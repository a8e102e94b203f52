import Foundation
import Testing

@testable import KVStore

/// Sort descriptors: ordered index reads, `isSorted`, and the description strings.
@Suite struct QueryPlannerSortTests {
    /// A sort on an indexed attribute with a limit reads the index in order, reversed for a reverse sort.
    @Test(arguments: [(SortOrder.forward, false), (SortOrder.reverse, true)])
    func sortWithLimitReadsIndexInOrder(order: SortOrder, reverse: Bool) {
        let planned = PlannerFixture.plan(nil, sortBy: [SortDescriptor(\.count, order: order)], limit: 10)
        #expect(planned.plan == .ordered(index: "count", reverse: reverse))
        #expect(planned.isSorted)
    }

    /// More sort descriptors on the same attribute, or an unplannable predicate, still allow the ordered read.
    @Test func orderedReadAllowsSameAttributeAndUnplannablePredicate() {
        let twice = [SortDescriptor(\PlannerItem.count), SortDescriptor(\PlannerItem.count, order: .forward)]
        let planned = PlannerFixture.plan(#Predicate { $0.note == "x" }, sortBy: twice, limit: 1)
        #expect(planned.plan == .ordered(index: "count", reverse: false))
        #expect(planned.isSorted)
    }

    /// A string sort never takes the index's order for its own, with any comparator: this platform's `String` order
    /// is not the keys' for strings with decomposed characters (SortOrderFidelityTests shows it on a store).
    @Test func stringSortsReadEveryMatchAndSort() {
        let sorts = [
            SortDescriptor(\PlannerItem.title),
            SortDescriptor(\PlannerItem.title, comparator: .lexical),
            SortDescriptor(\PlannerItem.title, comparator: String.StandardComparator(.lexical, order: .reverse)),
        ]
        for sort in sorts {
            let planned = PlannerFixture.plan(nil, sortBy: [sort], limit: 2)
            #expect(planned.plan == .scan)
            #expect(!planned.isSorted)
            let ranged = PlannerFixture.plan(#Predicate { $0.title > "a" }, sortBy: [sort], limit: 2)
            #expect(
                ranged.plan
                    == .range(index: "title", lower: .init(key: PlannerKey.string("a"), isInclusive: false), upper: nil)
            )
            #expect(!ranged.isSorted)
        }
    }

    /// Without a limit, or with a sort the index cannot give whole, the fetch scans and sorts.
    @Test(
        arguments: [
            ([SortDescriptor(\PlannerItem.count)], nil),
            ([SortDescriptor(\PlannerItem.note)], 10),
            ([SortDescriptor(\PlannerItem.count), SortDescriptor(\PlannerItem.priority)], 10),
            ([SortDescriptor(\PlannerItem.lastName)], 10),
        ] as [([SortDescriptor<PlannerItem>], Int?)])
    func sortWithoutLimitOrIndexScans(sortBy: [SortDescriptor<PlannerItem>], limit: Int?) {
        let planned = PlannerFixture.plan(nil, sortBy: sortBy, limit: limit)
        #expect(planned.plan == .scan)
        #expect(!planned.isSorted)
    }

    /// A usable predicate plan wins over an ordered read of another index, and is not sorted by it.
    @Test func predicatePlanWinsOverOrderedRead() {
        let planned = PlannerFixture.plan(#Predicate { $0.title == "a" }, sortBy: [SortDescriptor(\.count)], limit: 5)
        #expect(planned.plan == .keys(index: "title", keys: [PlannerKey.string("a")]))
        #expect(!planned.isSorted)
    }

    /// A range reads in ascending key order for a forward sort on its attribute, and from its upper end for a reverse
    /// one: sorted either way.
    @Test(arguments: [SortOrder.forward, .reverse])
    func rangeIsSortedInEitherDirection(order: SortOrder) {
        let sortBy = [SortDescriptor(\PlannerItem.count, order: order)]
        let planned = PlannerFixture.plan(#Predicate { $0.count > 2 }, sortBy: sortBy, limit: 3)
        #expect(
            planned.plan
                == .range(
                    index: "count", lower: QueryPlannerTests.beyond(2), upper: nil, reverse: order == .reverse))
        #expect(planned.isSorted)
    }

    /// Keys are sorted when they hold at most one record, when they share the sort attribute's one value, or
    /// when several keys of the sort attribute's index are read for a forward sort.
    @Test func keysAreSortedWhenTheyCannotBeOutOfOrder() {
        let byTitle = [SortDescriptor(\PlannerItem.title)]
        let byCount = [SortDescriptor(\PlannerItem.count)]
        let byCountReversed = [SortDescriptor(\PlannerItem.count, order: .reverse)]
        #expect(PlannerFixture.plan(#Predicate { $0.email == "a@b" }, sortBy: byTitle).isSorted)
        #expect(PlannerFixture.plan(#Predicate { $0.count == 2 }, sortBy: byCountReversed).isSorted)
        #expect(PlannerFixture.plan(#Predicate { [3, 1].contains($0.count) }, sortBy: byCount).isSorted)
        #expect(!PlannerFixture.plan(#Predicate { [3, 1].contains($0.count) }, sortBy: byCountReversed).isSorted)
        #expect(!PlannerFixture.plan(#Predicate { $0.count == 2 }, sortBy: byTitle).isSorted)
        #expect(!PlannerFixture.plan(#Predicate { $0.tags.contains("a") }, sortBy: byTitle).isSorted)
        let byName = [SortDescriptor(\PlannerItem.firstName), SortDescriptor(\PlannerItem.lastName)]
        #expect(PlannerFixture.plan(#Predicate { $0.lastName == "D" && $0.firstName == "J" }, sortBy: byName).isSorted)
    }

    /// With no sort descriptor any order is the fetch's order, so the fetch may stop early.
    @Test func noSortDescriptorIsSorted() {
        #expect(PlannerFixture.plan(nil, limit: 3).isSorted)
        #expect(PlannerFixture.plan(#Predicate { $0.count > 1 }).isSorted)
    }

    /// Every plan has a stable one-line description; keys print as lowercase hexadecimal.
    @Test(arguments: [
        (QueryPlan.scan, "scan"),
        (.keys(index: "projectID", keys: [[0]]), "index projectID: 1 key"),
        (.keys(index: "count", keys: [[1], [2], [3]]), "index count: 3 keys"),
        (.keys(index: "count", keys: []), "index count: 0 keys"),
        (.keys(index: "email", keys: [[0x61]]), "unique index email: 1 key"),
        (
            .range(
                index: "count", lower: .init(key: [0x0a, 0xff], isInclusive: true),
                upper: .init(key: [0x0b], isInclusive: false)),
            "index count: range [0aff, 0b)"
        ),
        (
            .range(index: "count", lower: .init(key: [0x80], isInclusive: false), upper: nil),
            "index count: range (80, +inf)"
        ),
        (
            .range(index: "count", lower: nil, upper: .init(key: [0xab], isInclusive: true)),
            "index count: range (-inf, ab]"
        ),
        (.ordered(index: "count", reverse: false), "index count: ordered"),
        (.ordered(index: "count", reverse: true), "index count: ordered reverse"),
        (.ordered(index: "email", reverse: true), "unique index email: ordered reverse"),
        (
            .range(index: "count", lower: nil, upper: .init(key: [0xab], isInclusive: true), reverse: true),
            "index count: range (-inf, ab] reverse"
        ),
        (
            .union([.keys(index: "email", keys: [[0x61]]), .keys(index: "count", keys: [[1], [2]])]),
            "union of (unique index email: 1 key), (index count: 2 keys)"
        ),
    ])
    func descriptionNamesIndexAndKeys(plan: QueryPlan, expected: String) {
        let uniqueIndexes = QueryPlanner.uniqueIndexes(of: plan, in: PlannerFixture.indexes)
        #expect(QueryPlanner.describe(plan, uniqueIndexes: uniqueIndexes) == expected)
    }

    /// `plan` fills in the description of the plan it chose.
    @Test func plannedQueryCarriesDescription() {
        #expect(PlannerFixture.plan(nil).description == "scan")
        #expect(PlannerFixture.plan(#Predicate { $0.email == "a" }).description == "unique index email: 1 key")
        let range = PlannerFixture.plan(#Predicate { $0.count >= 2 && $0.count < 9 })
        #expect(range.description == "index count: range [8000000000000002, 8000000000000009)")
        let ordered = PlannerFixture.plan(nil, sortBy: [SortDescriptor(\.count, order: .reverse)], limit: 1)
        #expect(ordered.description == "index count: ordered reverse")
    }
}
