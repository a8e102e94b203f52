import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A model with compound indexes of three attributes.
struct ClubMember: Model, Equatable {
    var id = UUID()
    var lastName: String
    var firstName: String
    var age: Int
    var group: Int
    var rank: Int

    static let entity = Entity<ClubMember>(indexes: [
        .index(\.lastName, \.age, \.firstName),
        .index(\.group, \.age, \.rank),
        .unique(\.lastName, \.firstName, \.group),
        .index(\.rank),
    ])
}

/// Compound indexes of any arity: equalities on a prefix of their attributes with a range or prefix on the next one
/// read a range of the index, sorts on the remaining attributes come from the index, and a unique constraint holds
/// over all of them; every query finds what evaluating its predicate on every model finds.
@Suite struct CompoundIndexTests {
    static let lastNames = ["Doe", "Do", "Doe\u{0}", "Döe", "Roe", "Smith", String(repeating: "L", count: 500)]
    static let firstNames = ["Ann", "Bob", "Cy", "A", ""]

    /// Models over every combination of a few names, with ages, groups and ranks that tie often.
    static func models(seed: UInt64) -> [ClubMember] {
        var random = SplitMix64(seed: seed)
        var members: [ClubMember] = []
        for last in lastNames {
            for (position, first) in firstNames.enumerated() {
                for group in 0..<3 where Bool.random(using: &random) || position == 0 {
                    members.append(
                        ClubMember(
                            lastName: last, firstName: first, age: Int.random(in: 18...22, using: &random),
                            group: group, rank: Int.random(in: 0...2, using: &random)))
                }
            }
        }
        // One that the query fixing every attribute finds.
        members.append(ClubMember(lastName: "Doe", firstName: "A", age: 20, group: 9, rank: 0))
        return members
    }

    /// A predicate, what the planner should read, and the reference filter.
    struct Query {
        let label: String
        let predicate: Predicate<ClubMember>
        let plan: String
        let matches: (ClubMember) -> Bool
    }

    static var queries: [Query] {
        let last = "Doe"
        let long = String(repeating: "L", count: 500)
        return [
            Query(label: "first attribute", predicate: #Predicate { $0.lastName == last }, plan: "range") {
                $0.lastName == last
            },
            Query(label: "long first attribute", predicate: #Predicate { $0.lastName == long }, plan: "range") {
                $0.lastName == long
            },
            Query(label: ">=", predicate: #Predicate { $0.lastName == last && $0.age >= 20 }, plan: "range") {
                $0.lastName == last && $0.age >= 20
            },
            Query(label: ">", predicate: #Predicate { $0.lastName == last && $0.age > 20 }, plan: "range") {
                $0.lastName == last && $0.age > 20
            },
            Query(label: "<", predicate: #Predicate { $0.lastName == last && $0.age < 20 }, plan: "range") {
                $0.lastName == last && $0.age < 20
            },
            Query(label: "<=", predicate: #Predicate { $0.lastName == last && $0.age <= 20 }, plan: "range") {
                $0.lastName == last && $0.age <= 20
            },
            Query(
                label: "two-sided", predicate: #Predicate { $0.lastName == last && $0.age > 18 && $0.age <= 21 },
                plan: "range"
            ) { $0.lastName == last && $0.age > 18 && $0.age <= 21 },
            Query(
                label: "two fixed", predicate: #Predicate { $0.lastName == last && $0.age == 20 }, plan: "range"
            ) { $0.lastName == last && $0.age == 20 },
            Query(
                label: "two fixed and a prefix",
                predicate: #Predicate { $0.lastName == last && $0.age == 20 && $0.firstName.starts(with: "A") },
                plan: "range"
            ) { $0.lastName == last && $0.age == 20 && $0.firstName.starts(with: "A") },
            Query(
                label: "all fixed",
                predicate: #Predicate { $0.lastName == last && $0.age == 20 && $0.firstName == "A" },
                plan: "index lastName+age+firstName: 1 key"
            ) { $0.lastName == last && $0.age == 20 && $0.firstName == "A" },
            Query(label: "prefix on the first", predicate: #Predicate { $0.lastName.starts(with: "Do") }, plan: "range")
            {
                $0.lastName.starts(with: "Do")
            },
            Query(label: "range on the first", predicate: #Predicate { $0.group >= 1 }, plan: "range") {
                $0.group >= 1
            },
            Query(label: "second alone", predicate: #Predicate { $0.age == 20 }, plan: "scan") { $0.age == 20 },
        ]
    }

    @Test(arguments: [1, 2] as [UInt64])
    func equalitiesOnAPrefixAndARangeOnTheNextReadARange(seed: UInt64) throws {
        try withContainer(ClubMember.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models(seed: seed)
            try context.insert(contentsOf: models)
            for query in Self.queries {
                let descriptor = FetchDescriptor(predicate: query.predicate)
                let plan = try context.explain(descriptor)
                #expect(
                    query.plan == "range" ? plan.contains(": range ") : plan == query.plan, "\(query.label): \(plan)")
                let expected = Set(models.filter(query.matches).map(\.id))
                #expect(!expected.isEmpty, "\(query.label) has matches")
                #expect(Set(try context.fetch(descriptor).map(\.id)) == expected, "\(query.label)")
                #expect(try context.fetchCount(descriptor) == expected.count, "\(query.label)")
            }
        }
    }

    /// A sort on the attributes after the equalities, in key order, comes from the index and stops at the limit;
    /// it gives exactly Foundation's order, ties in ID order. Other sorts are sorted after the read.
    @Test(arguments: [3, 4] as [UInt64])
    func sortsOnTheRemainingAttributesComeFromTheIndex(seed: UInt64) throws {
        try withContainer(ClubMember.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models(seed: seed)
            try context.insert(contentsOf: models)
            let store = try container.store(for: ClubMember.self)
            let inKeyOrder = models.sorted { $0.id.isOrdered(before: $1.id) }
            let cases: [(Predicate<ClubMember>, [SortDescriptor<ClubMember>], Bool)] = [
                (#Predicate { $0.group == 1 }, [SortDescriptor(\.age), SortDescriptor(\.rank)], true),
                (#Predicate { $0.group == 1 && $0.age >= 20 }, [SortDescriptor(\.age), SortDescriptor(\.rank)], true),
                (#Predicate { $0.group == 1 && $0.age == 20 }, [SortDescriptor(\.rank)], true),
                (
                    #Predicate { $0.group >= 1 },
                    [SortDescriptor(\.group), SortDescriptor(\.age), SortDescriptor(\.rank)], true
                ),
                (
                    #Predicate { $0.group == 1 },
                    [SortDescriptor(\.age, order: .reverse), SortDescriptor(\.rank, order: .reverse)], true
                ),
                (
                    #Predicate { $0.group >= 1 && $0.group < 3 },
                    [
                        SortDescriptor(\.group, order: .reverse), SortDescriptor(\.age, order: .reverse),
                        SortDescriptor(\.rank, order: .reverse),
                    ],
                    true
                ),
                (#Predicate { $0.rank >= 1 }, [SortDescriptor(\.rank, order: .reverse)], true),
                (
                    #Predicate { $0.firstName != "" },
                    [SortDescriptor(\.group), SortDescriptor(\.age), SortDescriptor(\.rank)], true
                ),
                (
                    #Predicate { $0.firstName != "" },
                    [
                        SortDescriptor(\.group, order: .reverse), SortDescriptor(\.age, order: .reverse),
                        SortDescriptor(\.rank, order: .reverse),
                    ],
                    true
                ),
                (#Predicate { $0.rank < 2 }, [SortDescriptor(\.rank)], true),
                (#Predicate { $0.group == 1 }, [SortDescriptor(\.age)], false),
                (
                    #Predicate { $0.group == 1 }, [SortDescriptor(\.age, order: .reverse), SortDescriptor(\.rank)],
                    false
                ),
                (#Predicate { $0.group == 1 }, [SortDescriptor(\.rank), SortDescriptor(\.age)], false),
            ]
            for (predicate, sortBy, fromTheIndex) in cases {
                for limit in [nil, 3] as [Int?] {
                    var descriptor = FetchDescriptor(predicate: predicate, sortBy: sortBy)
                    descriptor.fetchLimit = limit
                    descriptor.fetchOffset = limit == nil ? 0 : 2
                    let planned = store.plan(descriptor)
                    // A predicate the planner cannot use (`!=`) leaves an ordered read of the index, which pays only
                    // with a limit; without one the fetch scans and sorts.
                    let needsLimit = sortBy.count == 3 && !planned.description.contains("range")
                    #expect(
                        planned.isSorted == (fromTheIndex && (limit != nil || !needsLimit)), "\(planned.description)")
                    if needsLimit, limit != nil { #expect(planned.description.contains("ordered")) }
                    let isReverse = sortBy.first?.order == .reverse
                    #expect(planned.description.hasSuffix(" reverse") == (planned.isSorted && isReverse))
                    let all = try inKeyOrder.filter { try predicate.evaluate($0) }.sorted(using: sortBy)
                    let expected = limit.map { Array(all.dropFirst(2).prefix($0)) } ?? all
                    #expect(try context.fetch(descriptor).map(\.id) == expected.map(\.id))
                }
            }
        }
    }

    /// A unique constraint over three attributes refuses a model that repeats all three, and accepts one that
    /// differs in any of them.
    @Test func aUniqueConstraintOverThreeAttributesHoldsOverAllOfThem() throws {
        try withContainer(ClubMember.self) { container throws in
            let context = ModelContext(container)
            context.insert(ClubMember(lastName: "Doe", firstName: "Ann", age: 30, group: 1, rank: 0))
            try context.save()
            for other in [
                ClubMember(lastName: "Doe", firstName: "Ann", age: 31, group: 2, rank: 0),
                ClubMember(lastName: "Doe", firstName: "Bob", age: 31, group: 1, rank: 0),
                ClubMember(lastName: "Roe", firstName: "Ann", age: 31, group: 1, rank: 0),
            ] {
                context.insert(other)
                try context.save()
            }
            context.insert(ClubMember(lastName: "Doe", firstName: "Ann", age: 40, group: 1, rank: 5))
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .uniqueViolation)
            context.rollback()
            #expect(try context.fetchCount(FetchDescriptor<ClubMember>()) == 4)
        }
    }
}
