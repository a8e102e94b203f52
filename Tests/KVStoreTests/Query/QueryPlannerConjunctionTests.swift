import Foundation
import Testing

@testable import KVStore

/// Combined predicates: conjunctions, disjunctions, `contains`, compound indexes and what is not plannable.
@Suite struct QueryPlannerConjunctionTests {
    /// The `count` index's keys for some integers.
    static func counts(_ values: Int...) -> QueryPlan { .keys(index: "count", keys: values.map(PlannerKey.int)) }

    /// A conjunction picks its most selective part: unique equality, then keys, then a two-sided range.
    @Test(arguments: [
        PlannerCase(
            "$0.title == \"a\" && $0.email == \"a@b\"",
            #Predicate { $0.title == "a" && $0.email == "a@b" },
            .keys(index: "email", keys: [PlannerKey.string("a@b")])
        ),
        PlannerCase(
            "$0.count > 3 && $0.title == \"a\"",
            #Predicate { $0.count > 3 && $0.title == "a" },
            .keys(index: "title", keys: [PlannerKey.string("a")])
        ),
        PlannerCase(
            "$0.count > 3 && $0.priority > 1 && $0.priority < 5",
            #Predicate { $0.count > 3 && $0.priority > 1 && $0.priority < 5 },
            .range(
                index: "priority",
                lower: QueryPlannerTests.beyond(1),
                upper: QueryPlannerTests.beyond(5)
            )
        ),
        PlannerCase(
            "[1, 2].contains($0.count) && $0.priority == 4",
            #Predicate { [1, 2].contains($0.count) && $0.priority == 4 },
            .keys(index: "priority", keys: [PlannerKey.int(4)])
        ),
    ])
    func conjunctionChoosesMostSelectivePart(_ testCase: PlannerCase) {
        #expect(PlannerFixture.plan(testCase.predicate).plan == testCase.expected)
    }

    /// A disjunction whose sides both read keys of one index reads the union of the keys, sorted and deduplicated.
    @Test(arguments: [
        PlannerCase("$0.count == 3 || $0.count == 1", #Predicate { $0.count == 3 || $0.count == 1 }, counts(1, 3)),
        PlannerCase(
            "$0.count == 3 || $0.count == 1 || $0.count == 3",
            #Predicate { $0.count == 3 || $0.count == 1 || $0.count == 3 },
            counts(1, 3)
        ),
        PlannerCase(
            "[2, 1].contains($0.count) || $0.count == 7",
            #Predicate { [2, 1].contains($0.count) || $0.count == 7 },
            counts(1, 2, 7)
        ),
        PlannerCase(
            "($0.count == 1 || $0.count == 2) && $0.count < 5",
            #Predicate { ($0.count == 1 || $0.count == 2) && $0.count < 5 },
            counts(1, 2)
        ),
    ])
    func disjunctionOnOneIndexReadsUnion(_ testCase: PlannerCase) {
        #expect(PlannerFixture.plan(testCase.predicate).plan == testCase.expected)
    }

    /// A disjunction over different indexes, or over keys and a range, reads each part; one over something
    /// unplannable scans; beside an equality as selective, the one read wins over the union of two.
    @Test(arguments: [
        PlannerCase(
            "$0.count == 1 || $0.title == \"a\"", #Predicate { $0.count == 1 || $0.title == "a" },
            .union([.keys(index: "count", keys: [PlannerKey.int(1)]), .keys(index: "title", keys: [[0x61]])])),
        PlannerCase(
            "$0.count == 1 || $0.count > 5", #Predicate { $0.count == 1 || $0.count > 5 },
            .union([
                .keys(index: "count", keys: [PlannerKey.int(1)]),
                .range(index: "count", lower: QueryPlannerTests.beyond(5), upper: nil),
            ])),
        PlannerCase(
            "$0.count == 1 || $0.title == \"a\" || $0.isDone",
            #Predicate { $0.count == 1 || $0.title == "a" || $0.isDone },
            .union([
                .keys(index: "count", keys: [PlannerKey.int(1)]), .keys(index: "title", keys: [[0x61]]),
                .keys(index: "isDone", keys: [[1]]),
            ])),
        PlannerCase("$0.count == 1 || $0.note == \"x\"", #Predicate { $0.count == 1 || $0.note == "x" }, .scan),
        PlannerCase(
            "($0.count == 1 || $0.title == \"a\") && $0.priority == 2",
            #Predicate { ($0.count == 1 || $0.title == "a") && $0.priority == 2 },
            .keys(index: "priority", keys: [PlannerKey.int(2)])
        ),
    ])
    func disjunctionAcrossIndexesReadsEachPart(_ testCase: PlannerCase) {
        #expect(PlannerFixture.plan(testCase.predicate).plan == testCase.expected)
    }

    /// `constant.contains($0.field)` reads every encoded constant, sorted and deduplicated, captured or literal.
    @Test func constantContainsReadsEveryKey() {
        let wanted = [9, 3, 9, -1]
        let none: [Int] = []
        #expect(PlannerFixture.plan(#Predicate { [3, 1, 3, 2].contains($0.count) }).plan == Self.counts(1, 2, 3))
        #expect(PlannerFixture.plan(#Predicate { wanted.contains($0.count) }).plan == Self.counts(-1, 3, 9))
        #expect(PlannerFixture.plan(#Predicate { none.contains($0.count) }).plan == Self.counts())
    }

    /// `$0.tags.contains(value)` reads one key of the multi-entry index; the multi-entry index serves nothing else.
    @Test func arrayContainsUsesMultiEntryIndex() {
        let tag = "swift"
        let expected = QueryPlan.keys(index: "tags", keys: [PlannerKey.string("swift")])
        #expect(PlannerFixture.plan(#Predicate { $0.tags.contains("swift") }).plan == expected)
        #expect(PlannerFixture.plan(#Predicate { $0.tags.contains(tag) }).plan == expected)
        #expect(PlannerFixture.plan(#Predicate { $0.tags == ["swift"] }).plan == .scan)
    }

    /// Equalities on every attribute of a compound index read one key, the components in the index's order; on its
    /// first attribute, the range of the keys that begin with it, narrowed by a comparison on the next; on its second
    /// attribute alone, nothing.
    @Test func compoundIndexServesEqualitiesOnAPrefixOfItsAttributes() {
        let expected = QueryPlan.keys(
            index: "lastName+firstName",
            keys: [PlannerKey.string("Doe") + PlannerKey.string("Jane")]
        )
        #expect(PlannerFixture.plan(#Predicate { $0.lastName == "Doe" && $0.firstName == "Jane" }).plan == expected)
        #expect(PlannerFixture.plan(#Predicate { "Jane" == $0.firstName && $0.lastName == "Doe" }).plan == expected)
        // The fixture's strings have no terminator: "Doe"'s keys are those from "Doe" to "Dof".
        let doe = QueryPlan.Bound(key: PlannerKey.string("Doe"), isInclusive: true)
        let afterDoe = QueryPlan.Bound(key: PlannerKey.string("Dof"), isInclusive: false)
        #expect(
            PlannerFixture.plan(#Predicate { $0.lastName == "Doe" }).plan
                == .range(index: "lastName+firstName", lower: doe, upper: afterDoe))
        #expect(
            PlannerFixture.plan(#Predicate { $0.lastName == "Doe" && $0.firstName > "J" }).plan
                == .range(
                    index: "lastName+firstName",
                    lower: QueryPlan.Bound(key: PlannerKey.string("DoeK"), isInclusive: true),
                    upper: afterDoe))
        #expect(PlannerFixture.plan(#Predicate { $0.firstName == "Jane" }).plan == .scan)
    }

    /// An equality on the first attribute of a compound index declared first, and on a single-attribute index: the
    /// keys of the single index, which fix as much, win over the compound index's range.
    @Test func keysWinOverACompoundRangeThatFixesAsMuch() {
        let indexes = [
            PlannerIndex(
                name: "lastName+firstName", keyPaths: [\PlannerItem.lastName, \PlannerItem.firstName], isUnique: false,
                isMultiEntry: false, encodeComponent: PlannerKey.encodeString),
            PlannerFixture.index("lastName", \.lastName, encode: PlannerKey.encodeString),
        ]
        let planned = PlannerFixture.plan(#Predicate { $0.lastName == "Doe" }, indexes: indexes)
        #expect(planned.plan == .keys(index: "lastName", keys: [PlannerKey.string("Doe")]))
        let both = PlannerFixture.plan(#Predicate { $0.lastName == "Doe" && $0.firstName > "J" }, indexes: indexes)
        #expect(both.plan != .keys(index: "lastName", keys: [PlannerKey.string("Doe")]))
    }

    /// Nodes the planner does not understand scan on their own, and never crash.
    @Test(arguments: [
        PlannerCase("$0.title.starts(with: \"a\")", #Predicate { $0.title.starts(with: "a") }, .scan),
        PlannerCase("$0.count != 3", #Predicate { $0.count != 3 }, .scan),
        PlannerCase("!($0.count == 3)", #Predicate { !($0.count == 3) }, .scan),
        PlannerCase("$0.note == \"x\"", #Predicate { $0.note == "x" }, .scan),
        PlannerCase("$0.note > \"x\"", #Predicate { $0.note > "x" }, .scan),
        PlannerCase("$0.count == $0.priority", #Predicate { $0.count == $0.priority }, .scan),
        PlannerCase("$0.nickname?.count == 2", #Predicate { $0.nickname?.count == 2 }, .scan),
        PlannerCase("($0.nickname ?? \"\") == \"a\"", #Predicate { ($0.nickname ?? "") == "a" }, .scan),
        PlannerCase("$0.tags.contains { $0 == \"a\" }", #Predicate { $0.tags.contains { $0 == "a" } }, .scan),
        PlannerCase("_ in true", #Predicate { _ in true }, .scan),
    ])
    func unplannableNodeScans(_ testCase: PlannerCase) {
        #expect(PlannerFixture.plan(testCase.predicate).plan == testCase.expected)
    }

    /// Beside an unplannable node, the conjunction's other part is still used.
    @Test(arguments: [
        PlannerCase(
            "$0.title.starts(with: \"a\") && $0.count == 5",
            #Predicate { $0.title.starts(with: "a") && $0.count == 5 },
            counts(5)
        ),
        PlannerCase("$0.count != 3 && $0.count == 5", #Predicate { $0.count != 3 && $0.count == 5 }, counts(5)),
        PlannerCase(
            "!($0.title == \"a\") && $0.count == 5", #Predicate { !($0.title == "a") && $0.count == 5 }, counts(5)),
        PlannerCase("$0.note == \"x\" && $0.count == 5", #Predicate { $0.note == "x" && $0.count == 5 }, counts(5)),
        PlannerCase("$0.count == 5 && $0.note > \"x\"", #Predicate { $0.count == 5 && $0.note > "x" }, counts(5)),
    ])
    func unplannableConjunctLeavesOtherPart(_ testCase: PlannerCase) {
        #expect(PlannerFixture.plan(testCase.predicate).plan == testCase.expected)
    }
}
