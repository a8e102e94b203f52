import Foundation
import LMDB
import Testing

@testable import KVStore

/// The plans an equality gets from its attribute's template are the planner's own, whatever the constant.
@Suite struct EqualityPlansTests {
    /// Plans `predicates` in order through one ``EqualityPlans``, and expects each plan to be the full planner's.
    func expectPlannerPlans(
        _ predicates: [Predicate<PlannerItem>], sortBy: [SortDescriptor<PlannerItem>] = [],
        indexes: [PlannerIndex] = PlannerFixture.indexes,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let plans = EqualityPlans<PlannerItem>()
        for (position, predicate) in predicates.enumerated() {
            let templated = plans.plan(
                predicate: predicate, sortBy: sortBy, fetchLimit: nil, fetchOffset: 0, indexes: indexes)
            let full = PlannerFixture.plan(predicate, sortBy: sortBy, indexes: indexes)
            #expect(templated == full, "predicate \(position)", sourceLocation: sourceLocation)
        }
    }

    /// The record key encodes a `UUID` as its 16 bytes, one in an optional too, and nothing else.
    @Test func theRecordKeyEncodesIDsAndNothingElse() {
        let encode = PlannerIndex.recordKey(of: PlannerItem.self).encodeComponent
        let id = UUID()
        let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
        #expect(encode(id) == bytes)
        #expect(encode(UUID?.some(id) as Any) == bytes)
        #expect(encode(UUID?.none as Any) == nil)
        #expect(encode(id.uuidString) == nil)
        #expect(encode(bytes) == nil)
    }

    @Test func integerEqualityEitherWayRound() {
        let values = [5, -3, Int.max, 0]
        expectPlannerPlans(values.map { value in #Predicate { $0.count == value } })
        expectPlannerPlans(values.map { value in #Predicate { value == $0.count } })
    }

    @Test func uniqueIndexKeepsItsName() {
        let plans = EqualityPlans<PlannerItem>()
        for email in ["a@example.com", "b@example.com"] {
            let planned = plans.plan(
                predicate: #Predicate { $0.email == email }, sortBy: [], fetchLimit: nil, fetchOffset: 0,
                indexes: PlannerFixture.indexes)
            #expect(planned.uniqueIndexes == ["email"])
            #expect(planned.plan == .keys(index: "email", keys: [PlannerKey.string(email)]))
        }
    }

    @Test func optionalAttributeWithValuesAndNil() {
        let ids: [UUID?] = [UUID(), nil, UUID(), nil]
        expectPlannerPlans(ids.map { id in #Predicate { $0.projectID == id } })
        expectPlannerPlans(ids.map { id in #Predicate { id == $0.projectID } })
    }

    /// A constant too long for LMDB's keys is planned in full (its key would be cut, so the plan is not exact), and
    /// the next short one is templated again.
    @Test func longKeyIsPlannedInFull() {
        let indexes = PlannerFixture.indexes.map { index in
            var exact = index
            exact.hasExactEquality = true
            return exact
        }
        let long = String(repeating: "x", count: IndexKey.maximumLength + 10)
        expectPlannerPlans(
            ["short", long, "other", long].map { title in #Predicate { $0.title == title } }, indexes: indexes)
        let plans = EqualityPlans<PlannerItem>()
        for title in ["a", long, "b"] {
            let planned = plans.plan(
                predicate: #Predicate { $0.title == title }, sortBy: [], fetchLimit: nil, fetchOffset: 0,
                indexes: indexes)
            #expect(planned.isExact == (title != long))
        }
    }

    @Test func attributesWithoutASingleKeyPlanAreAlwaysPlannedInFull() {
        // No index: a scan. The first attribute of a compound index: a range. A nested attribute: one key.
        expectPlannerPlans(["a", "b", "c"].map { note in #Predicate { $0.note == note } })
        expectPlannerPlans(["a", "b", "c"].map { name in #Predicate { $0.lastName == name } })
        expectPlannerPlans(["Oslo", "Rome", "Oslo"].map { city in #Predicate { $0.address.city == city } })
        expectPlannerPlans([true, false, true].map { done in #Predicate { $0.isDone == done } })
    }

    @Test func sortDescriptorsAreCheckedForEachPlan() {
        expectPlannerPlans([1, 2].map { value in #Predicate { $0.count == value } }, sortBy: [SortDescriptor(\.count)])
        expectPlannerPlans(
            [1, 2].map { value in #Predicate { $0.count == value } }, sortBy: [SortDescriptor(\.priority)])
        expectPlannerPlans(
            ["a@x", "b@x"].map { email in #Predicate { $0.email == email } }, sortBy: [SortDescriptor(\.title)])
    }

    /// Other shapes, mixed in with equalities on the same attribute, are planned in full and leave the equalities'
    /// template alone.
    @Test func otherShapesBetweenEqualities() {
        expectPlannerPlans([
            #Predicate { $0.count == 1 },
            #Predicate { $0.count > 1 },
            #Predicate { $0.count == 2 && $0.priority == 3 },
            #Predicate { $0.count == $0.priority },
            #Predicate { $0.count == 3 },
            #Predicate { [1, 2].contains($0.count) },
            #Predicate { $0.count == 4 || $0.count == 5 },
            #Predicate { !($0.count == 6) },
            #Predicate { $0.count == 7 },
        ])
    }

    /// A constant worked out from an expression over captured values is read like a captured one.
    @Test func computedConstants() {
        let base = 3
        let values = [4, 9]
        expectPlannerPlans([
            #Predicate { $0.count == 1 }, #Predicate { $0.count == base + 1 }, #Predicate { $0.count == values.count },
        ])
    }

    /// The record key and a non-unique index, through a store's fetches and counts: each returns what the store
    /// holds, constant after constant.
    @Test func equalitiesThroughAStore() throws {
        try withContainer(Task.self) { container in
            let context = ModelContext(container)
            let projects = [UUID(), UUID()]
            let tasks = (0..<20).map { Task(title: "task \($0)", projectID: $0 % 3 == 2 ? nil : projects[$0 % 3]) }
            for task in tasks { context.insert(task) }
            try context.save()
            for task in tasks {
                let id = task.id
                let byID = FetchDescriptor<Task>(predicate: #Predicate { $0.id == id })
                #expect(try context.fetch(byID).map(\.id) == [id])
                #expect(try context.fetchCount(byID) == 1)
            }
            for project in projects + [nil, UUID()] {
                let byProject = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == project })
                let expected = Set(tasks.filter { $0.projectID == project }.map(\.id))
                #expect(Set(try context.fetch(byProject).map(\.id)) == expected)
                #expect(try context.fetchCount(byProject) == expected.count)
            }
            let missing = UUID()
            let byMissing = FetchDescriptor<Task>(predicate: #Predicate { $0.id == missing })
            #expect(try context.fetch(byMissing).isEmpty)
            #expect(try context.explain(byMissing).hasPrefix("key id: 1 key"))
        }
    }
}
