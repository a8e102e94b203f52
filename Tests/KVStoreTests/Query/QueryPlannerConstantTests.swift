import Foundation
import Testing

@testable import KVStore

/// Parts of a predicate that do not depend on the model are worked out once before planning, so they use indexes as
/// a plain captured value does.
@Suite struct QueryPlannerConstantTests {
    /// A captured value with properties and methods the predicates reach.
    struct Filter: Codable, Sendable {
        var count: Int
        var title: String
        var projectID: UUID?
        var counts: [Int]
        var parent: Parent?
    }

    struct Parent: Codable, Sendable {
        var id: UUID
    }

    static let projectID = UUID()
    static let filter = Filter(
        count: 5, title: "Draft", projectID: projectID, counts: [3, 1, 3], parent: Parent(id: projectID))

    @Test func propertyOfACapturedValueReadsOneKey() {
        let filter = Self.filter
        #expect(
            PlannerFixture.plan(#Predicate { $0.count == filter.count }).plan
                == .keys(index: "count", keys: [PlannerKey.int(5)]))
        #expect(
            PlannerFixture.plan(#Predicate { filter.count == $0.count }).plan
                == .keys(index: "count", keys: [PlannerKey.int(5)]))
        #expect(
            PlannerFixture.plan(#Predicate { $0.projectID == filter.projectID }).plan
                == .keys(index: "projectID", keys: [PlannerKey.uuid(Self.projectID)]))
    }

    @Test func methodCallsArithmeticAndOptionalChainingAreConstants() {
        let filter = Self.filter
        let missing: Filter? = nil
        #expect(
            PlannerFixture.plan(#Predicate { $0.count == (filter.counts.max() ?? 0) }).plan
                == .keys(index: "count", keys: [PlannerKey.int(3)]))
        #expect(
            PlannerFixture.plan(#Predicate { $0.count > filter.count + 1 }).plan
                == .range(index: "count", lower: QueryPlannerTests.beyond(6), upper: nil))
        #expect(
            PlannerFixture.plan(#Predicate { $0.projectID == filter.parent?.id }).plan
                == .keys(index: "projectID", keys: [PlannerKey.uuid(Self.projectID)]))
        #expect(
            PlannerFixture.plan(#Predicate { $0.projectID == missing?.parent?.id }).plan
                == .keys(index: "projectID", keys: [PlannerKey.uuid(nil)]))
    }

    @Test func containsOnACapturedPropertyReadsItsKeys() {
        let filter = Self.filter
        #expect(
            PlannerFixture.plan(#Predicate { filter.counts.contains($0.count) }).plan
                == .keys(index: "count", keys: [PlannerKey.int(1), PlannerKey.int(3)]))
        #expect(
            PlannerFixture.plan(#Predicate { $0.tags.contains(filter.title) }).plan
                == .keys(index: "tags", keys: [PlannerKey.string("Draft")]))
    }

    @Test func notNilReadsEveryValueKey() {
        let expected = QueryPlan.range(
            index: "projectID", lower: QueryPlan.Bound(key: PlannerKey.uuid(nil), isInclusive: false), upper: nil)
        #expect(PlannerFixture.plan(#Predicate { $0.projectID != nil }).plan == expected)
        #expect(PlannerFixture.plan(#Predicate { nil != $0.projectID }).plan == expected)
        let none: UUID? = nil
        #expect(PlannerFixture.plan(#Predicate { $0.projectID != none }).plan == expected)
    }

    @Test func whatReadsTheInputOrFailsIsNoConstant() {
        // `!=` of a value excludes one key from the middle: not planned.
        #expect(PlannerFixture.plan(#Predicate { $0.count != 5 }).plan == .scan)
        let projectID: UUID? = Self.projectID
        #expect(PlannerFixture.plan(#Predicate { $0.projectID != projectID }).plan == .scan)
        // Both sides read the model.
        #expect(PlannerFixture.plan(#Predicate { $0.count == $0.priority }).plan == .scan)
        #expect(PlannerFixture.plan(#Predicate { $0.count == $0.priority + 1 }).plan == .scan)
        // A constant that fails to evaluate plans nothing; the fetch reports the failure.
        let missing: Int? = nil
        #expect(PlannerFixture.plan(#Predicate { $0.count == missing! }).plan == .scan)
    }
}

/// The same predicates on a real store: the plan reads the index, and the results are those of a scan.
@Suite struct CapturedConstantFetchTests {
    @Test func capturedPropertiesUseTheIndexAndGiveTheScansResults() throws {
        try withContainer(Project.self, Task.self) { container throws in
            let context = ModelContext(container)
            let projects = [Project(name: "A"), Project(name: "B")]
            for project in projects { context.insert(project) }
            for index in 0..<20 {
                context.insert(Task(title: "t\(index)", projectID: projects[index % 2].id, priority: index % 4))
            }
            context.insert(Task(title: "loose", priority: 9))
            try context.save()

            struct Holder: Codable, Sendable { var project: Project? }
            let holder = Holder(project: projects[1])
            let byProject = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == holder.project?.id })
            #expect(try context.explain(byProject) == "index projectID: 1 key")
            #expect(try context.fetch(byProject).map(\.title) == (0..<20).filter { $0 % 2 == 1 }.map { "t\($0)" })

            let assigned = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID != nil })
            #expect(try context.explain(assigned).hasPrefix("index projectID: range (00, +inf)"))
            #expect(try context.fetchCount(assigned) == 20)
            let unassigned = FetchDescriptor<Task>(predicate: #Predicate { $0.projectID == nil })
            #expect(try context.fetch(unassigned).map(\.title) == ["loose"])

            let missing: Int? = nil
            let failing = FetchDescriptor<Task>(predicate: #Predicate { $0.priority == missing! })
            #expect(try context.explain(failing) == "scan")
            #expect(throws: (any Error).self) { try context.fetch(failing) }
        }
    }
}
