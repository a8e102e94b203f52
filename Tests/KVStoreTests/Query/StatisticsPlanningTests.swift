import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A model whose indexes hold values of very different frequencies, for plans chosen by the store's counts.
struct Shipment: Model, Equatable {
    var id = UUID()
    var status: Int
    var region: Int
    var weight: Int
    var isOpen: Bool

    static let entity = Entity<Shipment>(indexes: [
        .index(\.status), .index(\.region), .index(\.weight), .index(\.isOpen),
    ])
}

/// The store counts what each usable plan would read and picks the cheapest: another index than the planner's first
/// choice, an intersection of two ID lists, or the complement of a `!=` whose value holds most of the index; every
/// plan finds what evaluating the predicate on every model finds.
@Suite struct StatisticsPlanningTests {
    /// 2,000 shipments: status 0 for 90% of them, regions 0..<4, weights 0..<1000, open one in three.
    static func shipments() -> [Shipment] {
        var random = SplitMix64(seed: 77)
        return (0..<2_000).map { number in
            Shipment(
                status: number % 10 == 0 ? Int.random(in: 1..<4, using: &random) : 0,
                region: Int.random(in: 0..<4, using: &random), weight: Int.random(in: 0..<1_000, using: &random),
                isOpen: number % 3 == 0)
        }
    }

    static func expectSame(
        _ descriptor: FetchDescriptor<Shipment>, _ matches: (Shipment) -> Bool, in context: ModelContext,
        models: [Shipment], _ comment: Comment
    ) throws {
        let expected = models.filter(matches).map(\.id).sorted { $0.isOrdered(before: $1) }
        let fetched = try context.fetch(descriptor).map(\.id).sorted { $0.isOrdered(before: $1) }
        #expect(fetched == expected, comment)
        #expect(try context.fetchCount(descriptor) == expected.count, comment)
    }

    @Test func theCountsChooseTheCheaperIndexAndIntersections() throws {
        try withContainer(Shipment.self) { container throws in
            let context = ModelContext(container)
            let models = Self.shipments()
            try context.insert(contentsOf: models)
            try context.save()
            // status == 0 holds about 1,800 entries; weight < 20 about 40: the range is read, not the key.
            let light = FetchDescriptor<Shipment>(predicate: #Predicate { $0.status == 0 && $0.weight < 20 })
            #expect(try context.explain(light).hasPrefix("index weight: range"))
            try Self.expectSame(light, { $0.status == 0 && $0.weight < 20 }, in: context, models: models, "light")
            // The range the counts chose, read from its upper end for a descending sort on its attribute.
            var heaviestFirst = light
            heaviestFirst.sortBy = [SortDescriptor(\.weight, order: .reverse)]
            heaviestFirst.fetchLimit = 5
            let reversed = try context.explain(heaviestFirst)
            #expect(reversed.hasPrefix("index weight: range") && reversed.hasSuffix(" reverse"), "\(reversed)")
            #expect(
                try context.fetch(heaviestFirst).map(\.weight)
                    == Array(
                        models.filter { $0.status == 0 && $0.weight < 20 }.map(\.weight).sorted().reversed().prefix(5)))
            // region == 1 (about 500) and weight < 200 (about 400): two ID lists cost less than 400 records.
            let both = FetchDescriptor<Shipment>(predicate: #Predicate { $0.region == 1 && $0.weight < 200 })
            let plan = try context.explain(both)
            #expect(plan.hasPrefix("intersection of (index weight: range"), "\(plan)")
            #expect(plan.contains("(index region: 1 key)"), "\(plan)")
            try Self.expectSame(both, { $0.region == 1 && $0.weight < 200 }, in: context, models: models, "both")
            // The tree FetchingAndThePlanner.md shows.
            let treeText = try context.explainTree(both)
            #expect(
                treeText == """
                    intersection: ~391 rows
                      index weight: range (-inf, 0180000000000000c8): 391 rows
                      index region: 1 key: 508 rows
                    """)
            let tree = treeText.split(separator: "\n")
            #expect(tree.count == 3)
            #expect(tree.first?.hasPrefix("intersection: ~") == true)
            #expect(tree.dropFirst().allSatisfy { $0.hasPrefix("  index ") && $0.hasSuffix(" rows") })
            // Two keys: the one with fewer entries, whatever the declaration order.
            let heavy = FetchDescriptor<Shipment>(predicate: #Predicate { $0.region == 1 && $0.weight == 7 })
            #expect(try context.explain(heavy) == "index weight: 1 key")
            try Self.expectSame(heavy, { $0.region == 1 && $0.weight == 7 }, in: context, models: models, "heavy")
            // Few entries in the planner's choice: it stands, and nothing else is counted.
            let few = FetchDescriptor<Shipment>(predicate: #Predicate { $0.weight == 7 && $0.isOpen })
            #expect(try context.explain(few) == "index weight: 1 key")
            try Self.expectSame(few, { $0.weight == 7 && $0.isOpen }, in: context, models: models, "few")
        }
    }

    @Test func aNotEqualReadsTheOtherKeysWhenItsValueHoldsMostOfTheIndex() throws {
        try withContainer(Shipment.self) { container throws in
            let context = ModelContext(container)
            let models = Self.shipments()
            try context.insert(contentsOf: models)
            try context.save()
            let notZero = FetchDescriptor<Shipment>(predicate: #Predicate { $0.status != 0 })
            #expect(try context.explain(notZero).hasPrefix("union of (index status: range (-inf, "))
            try Self.expectSame(notZero, { $0.status != 0 }, in: context, models: models, "status != 0")
            let negated = FetchDescriptor<Shipment>(predicate: #Predicate { !($0.status == 0) })
            #expect(try context.explain(negated) == (try context.explain(notZero)))
            try Self.expectSame(negated, { $0.status != 0 }, in: context, models: models, "!(status == 0)")
            // A value that holds few entries: reading all the others would cost more than the scan.
            let notTwo = FetchDescriptor<Shipment>(predicate: #Predicate { $0.status != 2 })
            #expect(try context.explain(notTwo) == "scan")
            try Self.expectSame(notTwo, { $0.status != 2 }, in: context, models: models, "status != 2")
            // A Boolean attribute negated is an equality with false.
            let closed = FetchDescriptor<Shipment>(predicate: #Predicate { !$0.isOpen })
            #expect(try context.explain(closed) == "index isOpen: 1 key")
            try Self.expectSame(closed, { !$0.isOpen }, in: context, models: models, "!isOpen")
            // Sorted: the complement's union is sorted after reading.
            var sorted = notZero
            sorted.sortBy = [SortDescriptor(\.weight)]
            #expect(try context.fetch(sorted).map(\.weight) == models.filter { $0.status != 0 }.map(\.weight).sorted())
        }
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func randomConjunctionsFindWhatTheModelsInMemoryFind(seed: UInt64) throws {
        try withContainer(Shipment.self) { container throws in
            let context = ModelContext(container)
            let models = Self.shipments()
            try context.insert(contentsOf: models)
            try context.save()
            var random = SplitMix64(seed: seed)
            for _ in 0..<15 {
                let status = Int.random(in: 0..<4, using: &random)
                let region = Int.random(in: 0..<4, using: &random)
                let low = Int.random(in: 0..<1_000, using: &random)
                let high = low + Int.random(in: 0..<600, using: &random)
                let cases: [(FetchDescriptor<Shipment>, (Shipment) -> Bool)] = [
                    (
                        FetchDescriptor(predicate: #Predicate { $0.status == status && $0.region == region }),
                        { $0.status == status && $0.region == region }
                    ),
                    (
                        FetchDescriptor(
                            predicate: #Predicate { $0.region == region && $0.weight >= low && $0.weight < high }),
                        { $0.region == region && $0.weight >= low && $0.weight < high }
                    ),
                    (
                        FetchDescriptor(predicate: #Predicate { $0.status != status && $0.isOpen }),
                        { $0.status != status && $0.isOpen }
                    ),
                    (
                        FetchDescriptor(predicate: #Predicate { !($0.region == region) && $0.weight < high }),
                        { $0.region != region && $0.weight < high }
                    ),
                ]
                for (number, (descriptor, matches)) in cases.enumerated() {
                    try Self.expectSame(
                        descriptor, matches, in: context, models: models,
                        "case \(number): \(try context.explain(descriptor))")
                }
            }
        }
    }
}
