import Foundation
import LMDB
import Testing

@testable import KVStore

/// The plans a conjunction of equalities and comparisons gets from its shape's template are the planner's own,
/// whatever the constants.
@Suite struct ComparisonPlansTests {
    /// Plans `predicates` in order through one ``ComparisonPlans``, twice, and expects each plan to be the full
    /// planner's.
    func expectPlannerPlans(
        _ predicates: [Predicate<PlannerItem>], sortBy: [SortDescriptor<PlannerItem>] = [], limit: Int? = nil,
        indexes: [PlannerIndex] = PlannerFixture.indexes, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let plans = ComparisonPlans<PlannerItem>()
        for round in 0..<2 {
            for (position, predicate) in predicates.enumerated() {
                let templated = plans.plan(
                    predicate: predicate, sortBy: sortBy, fetchLimit: limit, fetchOffset: 0, indexes: indexes)
                let full = PlannerFixture.plan(predicate, sortBy: sortBy, limit: limit, indexes: indexes)
                #expect(templated == full, "predicate \(position), round \(round)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func rangesOnOneAttribute() {
        let bounds = [(1, 5), (-3, 3), (Int.min, Int.max), (7, 2)]
        expectPlannerPlans(bounds.map { low, high in #Predicate { $0.count > low && $0.count <= high } })
        expectPlannerPlans(bounds.map { low, high in #Predicate { low < $0.count && high >= $0.count } })
        expectPlannerPlans(bounds.map { low, _ in #Predicate { $0.count >= low } })
        expectPlannerPlans(bounds.map { _, high in #Predicate { $0.count < high } })
    }

    @Test func conjunctionsThatChooseAnIndex() {
        let values = [(1, 2), (5, 5), (-1, 9)]
        expectPlannerPlans(values.map { a, b in #Predicate { $0.count == a && $0.priority == b } })
        expectPlannerPlans(values.map { a, b in #Predicate { $0.count > a && $0.priority == b } })
        expectPlannerPlans(values.map { a, b in #Predicate { $0.count == a && $0.count == b } })
        expectPlannerPlans(values.map { a, b in #Predicate { $0.count == a && $0.count > b && $0.count < 10 } })
        expectPlannerPlans(values.map { a, b in #Predicate { $0.note == "x" && $0.count > a && $0.priority < b } })
    }

    @Test func compoundIndexPrefixesAndRanges() {
        let names = [("Smith", "A"), ("", ""), ("Ölz", "zz"), ("Smith", "\u{0}")]
        expectPlannerPlans(names.map { last, first in #Predicate { $0.lastName == last && $0.firstName == first } })
        expectPlannerPlans(names.map { last, first in #Predicate { $0.lastName == last && $0.firstName > first } })
        expectPlannerPlans(names.map { last, first in #Predicate { $0.firstName >= first && $0.lastName == last } })
        expectPlannerPlans(names.map { last, _ in #Predicate { $0.lastName > last } })
    }

    @Test func optionalsUniqueKeysAndTheRecordKey() {
        let ids: [UUID?] = [UUID(), nil, UUID()]
        expectPlannerPlans(ids.map { id in #Predicate { $0.projectID == id && $0.count > 3 } })
        expectPlannerPlans(ids.map { id in #Predicate { $0.count > 3 && id == $0.projectID } })
        let emails = ["a@x", "b@x"]
        expectPlannerPlans(emails.map { email in #Predicate { $0.email == email && $0.count < 4 } })
        expectPlannerPlans(emails.map { email in #Predicate { $0.address.city == email && $0.count < 4 } })
    }

    @Test func sortsAndLimitsAreCheckedForEachPlan() {
        let bounds = [(1, 5), (2, 8)]
        for sortBy in [[], [SortDescriptor(\PlannerItem.count)], [SortDescriptor(\.count, order: .reverse)]] {
            for limit in [nil, 3] {
                expectPlannerPlans(
                    bounds.map { low, high in #Predicate { $0.count > low && $0.count < high } }, sortBy: sortBy,
                    limit: limit)
                expectPlannerPlans(
                    bounds.map { low, _ in #Predicate { $0.note == "n" && $0.note > "\(low)" } }, sortBy: sortBy,
                    limit: limit)
            }
        }
    }

    /// Comparisons that bound no read for some constants (strings that are not plain ASCII) change the terms, and
    /// with them the shape, between constants of one predicate.
    @Test func constantsThatGiveNoTerm() {
        let titles = ["a", "é", "b", "\u{0}", "c"]
        expectPlannerPlans(titles.map { title in #Predicate { $0.title > title && $0.count == 1 } })
        expectPlannerPlans(titles.map { title in #Predicate { $0.title < title } })
    }

    /// Other shapes are planned in full, mixed in with those templated.
    @Test func otherShapesBetweenTemplatedOnes() {
        expectPlannerPlans([
            #Predicate { $0.count > 1 && $0.count < 5 },
            #Predicate { $0.count == $0.priority && $0.count > 1 },
            #Predicate { $0.count > 1 && $0.isDone },
            #Predicate { $0.count > 1 || $0.priority > 1 },
            #Predicate { $0.tags.contains("x") && $0.count > 1 },
            #Predicate { !($0.count > 1) && $0.count < 9 },
            #Predicate { $0.count > 2 && $0.count < 6 },
        ])
    }
}
