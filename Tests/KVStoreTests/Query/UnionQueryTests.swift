import Foundation
import Testing

@testable import KVStore

/// `||` across indexes reads each side's plan and finds what evaluating the predicate on every model finds, each
/// model once, sorted and paged like any fetch.
@Suite struct UnionQueryTests {
    @Test func disjunctionsAcrossIndexesReadEachSide() throws {
        try withContainer(CountedItem.self) { container throws in
            let context = ModelContext(container)
            let models = ExactIndexReadTests.models()
            try context.insert(contentsOf: models)
            let owner = ExactIndexReadTests.owners[0]
            let cases: [(String, Predicate<CountedItem>, (CountedItem) -> Bool)] = [
                (
                    "two equalities", #Predicate { $0.group == 1 || $0.label == "a" },
                    { $0.group == 1 || $0.label == "a" }
                ),
                (
                    "equality and contains", #Predicate { $0.group == 1 || $0.tags.contains("t3") },
                    { $0.group == 1 || $0.tags.contains("t3") }
                ),
                (
                    "two ranges", #Predicate { $0.group < 2 || $0.score > 1.0 },
                    { $0.group < 2 || $0.score > 1.0 }
                ),
                (
                    "three sides", #Predicate { $0.group == 1 || $0.label == "a" || $0.ownerID == owner },
                    { $0.group == 1 || $0.label == "a" || $0.ownerID == owner }
                ),
                (
                    "inside a conjunction", #Predicate { ($0.group == 1 || $0.label == "a") && $0.isOpen },
                    { ($0.group == 1 || $0.label == "a") && $0.isOpen }
                ),
            ]
            for (label, predicate, matches) in cases {
                let descriptor = FetchDescriptor(predicate: predicate)
                let plan = try context.explain(descriptor)
                #expect(plan.hasPrefix("union of (") || label == "inside a conjunction", "\(label): \(plan)")
                let expected = models.filter(matches)
                #expect(!expected.isEmpty, "\(label) has matches")
                let found = try context.fetch(descriptor).map(\.id)
                #expect(found.count == Set(found).count, "\(label) gives each model once")
                #expect(Set(found) == Set(expected.map(\.id)), "\(label)")
                #expect(try context.fetchCount(descriptor) == expected.count, "\(label)")
                var sorted = FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.code)])
                sorted.fetchOffset = 2
                sorted.fetchLimit = 5
                let page = expected.sorted { $0.code < $1.code }.dropFirst(2).prefix(5)
                #expect(try context.fetch(sorted).map(\.id) == page.map(\.id), "\(label)")
            }
        }
    }

    /// A union's description names each part, with unique indexes as such.
    @Test func aUnionDescribesEachPart() throws {
        try withContainer(CountedItem.self) { container throws in
            let context = ModelContext(container)
            let plan = try context.explain(
                FetchDescriptor<CountedItem>(predicate: #Predicate { $0.code == "c1" || $0.group == 2 }))
            #expect(plan.hasPrefix("union of (unique index code: 1 key), (index group: 1 key)"), "\(plan)")
        }
    }
}
