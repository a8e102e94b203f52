import Foundation
import Testing

@testable import KVStore

/// Single comparisons: equality, optional equality, ordering operators and merged ranges.
@Suite struct QueryPlannerTests {
    /// A fixed reference, captured by predicates.
    static let projectID = UUID()

    /// An inclusive bound on an integer index.
    static func atLeast(_ value: Int) -> QueryPlan.Bound {
        QueryPlan.Bound(key: PlannerKey.int(value), isInclusive: true)
    }

    /// An exclusive bound on an integer index.
    static func beyond(_ value: Int) -> QueryPlan.Bound {
        QueryPlan.Bound(key: PlannerKey.int(value), isInclusive: false)
    }

    /// An equality reads one key, whichever side the attribute is on.
    @Test(arguments: [
        PlannerCase("$0.count == 5", #Predicate { $0.count == 5 }, .keys(index: "count", keys: [PlannerKey.int(5)])),
        PlannerCase("5 == $0.count", #Predicate { 5 == $0.count }, .keys(index: "count", keys: [PlannerKey.int(5)])),
        PlannerCase(
            "$0.title == \"a\"",
            #Predicate { $0.title == "a" },
            .keys(index: "title", keys: [PlannerKey.string("a")])
        ),
        PlannerCase("$0.isDone", #Predicate { $0.isDone }, .keys(index: "isDone", keys: [[1]])),
        PlannerCase("$0.isDone == false", #Predicate { $0.isDone == false }, .keys(index: "isDone", keys: [[0]])),
        PlannerCase(
            "$0.address.city == \"Oslo\"",
            #Predicate { $0.address.city == "Oslo" },
            .keys(index: "city", keys: [PlannerKey.string("Oslo")])
        ),
    ])
    func equalityReadsOneKey(_ testCase: PlannerCase) {
        let planned = PlannerFixture.plan(testCase.predicate)
        #expect(planned.plan == testCase.expected)
    }

    /// An optional attribute compared with a non-optional value, an optional value or `nil` reads one key.
    @Test func optionalAttributeEqualityReadsOneKey() {
        let id = Self.projectID
        let optionalID: UUID? = id
        let withValue = [
            #Predicate<PlannerItem> { $0.projectID == id },
            #Predicate<PlannerItem> { id == $0.projectID },
            #Predicate<PlannerItem> { $0.projectID == optionalID },
        ]
        for predicate in withValue {
            #expect(PlannerFixture.plan(predicate).plan == .keys(index: "projectID", keys: [PlannerKey.uuid(id)]))
        }
        let noID: UUID? = nil
        let withNil = [
            #Predicate<PlannerItem> { $0.projectID == nil },
            #Predicate<PlannerItem> { nil == $0.projectID },
            #Predicate<PlannerItem> { $0.projectID == noID },
        ]
        for predicate in withNil {
            #expect(PlannerFixture.plan(predicate).plan == .keys(index: "projectID", keys: [[0]]))
        }
    }

    /// Each ordering operator gives a one-sided range, and a constant on the left flips the operator.
    @Test(arguments: [
        PlannerCase("$0.count < 5", #Predicate { $0.count < 5 }, .range(index: "count", lower: nil, upper: beyond(5))),
        PlannerCase(
            "$0.count <= 5", #Predicate { $0.count <= 5 }, .range(index: "count", lower: nil, upper: atLeast(5))),
        PlannerCase("$0.count > 5", #Predicate { $0.count > 5 }, .range(index: "count", lower: beyond(5), upper: nil)),
        PlannerCase(
            "$0.count >= 5", #Predicate { $0.count >= 5 }, .range(index: "count", lower: atLeast(5), upper: nil)),
        PlannerCase("5 > $0.count", #Predicate { 5 > $0.count }, .range(index: "count", lower: nil, upper: beyond(5))),
        PlannerCase(
            "5 >= $0.count", #Predicate { 5 >= $0.count }, .range(index: "count", lower: nil, upper: atLeast(5))),
        PlannerCase("5 < $0.count", #Predicate { 5 < $0.count }, .range(index: "count", lower: beyond(5), upper: nil)),
        PlannerCase(
            "5 <= $0.count", #Predicate { 5 <= $0.count }, .range(index: "count", lower: atLeast(5), upper: nil)),
        PlannerCase(
            "-3 < $0.count", #Predicate { -3 < $0.count }, .range(index: "count", lower: beyond(-3), upper: nil)),
    ])
    func comparisonReadsRange(_ testCase: PlannerCase) {
        #expect(PlannerFixture.plan(testCase.predicate).plan == testCase.expected)
    }

    /// Bounds on one attribute merge into one range, keeping the tightest bound on each side.
    @Test(arguments: [
        PlannerCase(
            "$0.count >= 2 && $0.count < 9",
            #Predicate { $0.count >= 2 && $0.count < 9 },
            .range(index: "count", lower: atLeast(2), upper: beyond(9))
        ),
        PlannerCase(
            "9 > $0.count && 2 <= $0.count",
            #Predicate { 9 > $0.count && 2 <= $0.count },
            .range(index: "count", lower: atLeast(2), upper: beyond(9))
        ),
        PlannerCase(
            "$0.count > 2 && $0.count >= 4 && $0.count <= 9 && $0.count < 7",
            #Predicate { $0.count > 2 && $0.count >= 4 && $0.count <= 9 && $0.count < 7 },
            .range(index: "count", lower: atLeast(4), upper: beyond(7))
        ),
        PlannerCase(
            "$0.count >= 3 && $0.count > 3 && $0.count <= 8",
            #Predicate { $0.count >= 3 && $0.count > 3 && $0.count <= 8 },
            .range(index: "count", lower: beyond(3), upper: atLeast(8))
        ),
        PlannerCase(
            "$0.count > -4 && $0.title.starts(with: \"a\")",
            #Predicate { $0.count > -4 && $0.title.starts(with: "a") },
            .range(index: "count", lower: beyond(-4), upper: nil)
        ),
    ])
    func boundsMergeIntoOneRange(_ testCase: PlannerCase) {
        #expect(PlannerFixture.plan(testCase.predicate).plan == testCase.expected)
    }

    /// A value the index cannot encode makes that comparison unusable.
    @Test func unencodableValueIsNotPlannable() {
        let indexes = [
            PlannerFixture.index("count", \.count) { _ in nil },
            PlannerFixture.index("priority", \.priority, encode: PlannerKey.encodeInt),
        ]
        #expect(PlannerFixture.plan(#Predicate { $0.count == 5 }, indexes: indexes).plan == .scan)
        #expect(PlannerFixture.plan(#Predicate { $0.count > 5 }, indexes: indexes).plan == .scan)
        let both = PlannerFixture.plan(#Predicate { $0.count == 5 && $0.priority > 1 }, indexes: indexes)
        #expect(both.plan == .range(index: "priority", lower: Self.beyond(1), upper: nil))
        #expect(PlannerFixture.plan(#Predicate { [1, 2].contains($0.count) }, indexes: indexes).plan == .scan)
    }

    /// No predicate, or no index at all, scans.
    @Test func missingPredicateOrIndexesScan() {
        #expect(PlannerFixture.plan(nil).plan == .scan)
        #expect(PlannerFixture.plan(#Predicate { $0.count == 5 }, indexes: []).plan == .scan)
    }
}
