import Foundation
import TestSupport
import Testing

@testable import KVStore

/// Random queries of every plan the planner makes (keys, exact and inexact ranges, prefixes, unions, compound
/// prefixes, complements of `!=`, plans chosen by the store's counts, sorted and paged), through a context with random
/// unsaved changes, against the same predicates evaluated on the models kept in memory: fetches, counts, IDs,
/// aggregates and paged listings must agree on every one.
@Suite struct QueryModelBasedTests {
    /// One family of predicates, with its random constants drawn: the predicate and the reference filter.
    typealias Query = (label: String, predicate: Predicate<CountedItem>, matches: (CountedItem) -> Bool)

    static let labels = ["a", "b", "é", "e\u{301}", "\u{0}", "ab", "ba"]

    static func randomItem(_ random: inout SplitMix64, code: Int) -> CountedItem {
        let owners = ExactIndexReadTests.owners
        let ownerID: UUID? =
            Bool.random(using: &random) ? nil : owners[Int.random(in: 0..<owners.count, using: &random)]
        let tags = (0..<Int.random(in: 0...2, using: &random)).map { _ in "t\(Int.random(in: 0..<4, using: &random))" }
        return CountedItem(
            group: Int.random(in: 0..<8, using: &random),
            label: labels[Int.random(in: 0..<labels.count, using: &random)],
            isOpen: Bool.random(using: &random), ownerID: ownerID, tags: tags,
            score: Double(Int.random(in: 0..<5, using: &random)) / 2, code: "c\(code)")
    }

    static func randomQuery(_ random: inout SplitMix64) -> Query {
        let a = Int.random(in: -1...8, using: &random)
        let b = Int.random(in: -1...8, using: &random)
        let label = labels[Int.random(in: 0..<labels.count, using: &random)]
        let prefix = String(label.prefix(Int.random(in: 0...2, using: &random)))
        let tag = "t\(Int.random(in: 0..<4, using: &random))"
        let owner: UUID? = Bool.random(using: &random) ? nil : ExactIndexReadTests.owners[0]
        let score = Double(Int.random(in: 0..<5, using: &random)) / 2
        switch Int.random(in: 0..<16, using: &random) {
        case 0: return ("==", #Predicate { $0.group == a }, { $0.group == a })
        case 1: return ("range", #Predicate { $0.group >= a && $0.group < b }, { $0.group >= a && $0.group < b })
        case 2: return ("> <=", #Predicate { $0.group > a && $0.group <= b }, { $0.group > a && $0.group <= b })
        case 3: return ("prefix", #Predicate { $0.label.starts(with: prefix) }, { $0.label.starts(with: prefix) })
        case 4: return ("||", #Predicate { $0.group == a || $0.label == label }, { $0.group == a || $0.label == label })
        case 5:
            return (
                "|| range", #Predicate { $0.tags.contains(tag) || $0.group > a },
                { $0.tags.contains(tag) || $0.group > a }
            )
        case 6:
            return (
                "|| &&", #Predicate { ($0.group == a || $0.isOpen) && $0.ownerID == owner },
                { ($0.group == a || $0.isOpen) && $0.ownerID == owner }
            )
        case 7: return ("in", #Predicate { [a, b].contains($0.group) }, { [a, b].contains($0.group) })
        case 8: return ("double", #Predicate { $0.score >= score }, { $0.score >= score })
        case 9: return ("nil", #Predicate { $0.ownerID == owner }, { $0.ownerID == owner })
        case 10: return ("string range", #Predicate { $0.label < label }, { $0.label < label })
        case 11: return ("!=", #Predicate { $0.group != a }, { $0.group != a })
        case 12: return ("!(==)", #Predicate { !($0.label == label) }, { $0.label != label })
        case 13: return ("!flag", #Predicate { !$0.isOpen && $0.group <= b }, { !$0.isOpen && $0.group <= b })
        case 14:
            return (
                "two indexes", #Predicate { $0.isOpen && $0.score >= score && $0.group != a },
                { $0.isOpen && $0.score >= score && $0.group != a }
            )
        default: return ("&&", #Predicate { $0.group == a && $0.isOpen }, { $0.group == a && $0.isOpen })
        }
    }

    static let sorts: [[SortDescriptor<CountedItem>]] = [
        [], [SortDescriptor(\.group)], [SortDescriptor(\.group, order: .reverse)],
        [SortDescriptor(\.code)], [SortDescriptor(\.group), SortDescriptor(\.code, order: .reverse)],
    ]

    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomQueriesAgreeWithTheModelsInMemory(seed: UInt64) throws {
        try withContainer(CountedItem.self) { container throws in
            var random = SplitMix64(seed: seed)
            var models: [UUID: CountedItem] = [:]
            var code = 0
            let seeding = ModelContext(container)
            for _ in 0..<150 {
                let item = Self.randomItem(&random, code: code)
                code += 1
                models[item.id] = item
                seeding.insert(item)
            }
            try seeding.save()
            for round in 0..<40 {
                // A context with unsaved changes: inserts, changes and deletes of stored models.
                let context = ModelContext(container)
                var state = models
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0:
                        let item = Self.randomItem(&random, code: code)
                        code += 1
                        state[item.id] = item
                        context.insert(item)
                    case 1:
                        guard let id = state.keys.sorted(by: { $0.isOrdered(before: $1) }).randomElement(using: &random)
                        else { continue }
                        var changed = Self.randomItem(&random, code: code)
                        code += 1
                        changed.id = id
                        state[id] = changed
                        context.insert(changed)
                    default:
                        guard
                            let id = state.keys.sorted(by: { $0.isOrdered(before: $1) }).randomElement(using: &random),
                            let item = state[id]
                        else { continue }
                        state[id] = nil
                        context.delete(item)
                    }
                }
                for _ in 0..<8 {
                    let query = Self.randomQuery(&random)
                    let sortBy = Self.sorts[Int.random(in: 0..<Self.sorts.count, using: &random)]
                    var descriptor = FetchDescriptor(predicate: query.predicate, sortBy: sortBy)
                    let offset = Bool.random(using: &random) ? Int.random(in: 0...3, using: &random) : 0
                    let limit: Int? = Bool.random(using: &random) ? Int.random(in: 1...10, using: &random) : nil
                    descriptor.fetchOffset = offset
                    descriptor.fetchLimit = limit
                    let plan = try context.explain(descriptor)
                    let matching = state.values.filter(query.matches)
                    let label = "round \(round), \(query.label), sort \(sortBy.count), plan \(plan)"
                    #expect(try context.fetchCount(descriptor) == matching.count, "\(label)")
                    #expect(
                        Set(try context.fetchIdentifiers(FetchDescriptor(predicate: query.predicate)))
                            == Set(matching.map(\.id)), "\(label)")
                    let fetched = try context.fetch(descriptor)
                    if sortBy.isEmpty {
                        #expect(Set(fetched.map(\.id)).isSubset(of: Set(matching.map(\.id))), "\(label)")
                        #expect(fetched.count == min(limit ?? .max, max(matching.count - offset, 0)), "\(label)")
                    } else {
                        // Ties broken by code (unique), so the reference order is one.
                        let expected = matching.sorted(using: sortBy + [SortDescriptor(\.code)])
                        let page = expected.dropFirst(offset).prefix(limit ?? .max)
                        if sortBy.contains(where: { $0.keyPath == \CountedItem.code }) {
                            #expect(fetched.map(\.id) == page.map(\.id), "\(label)")
                        } else {
                            // Only the sort keys are determined among ties.
                            #expect(fetched.map(\.group) == page.map(\.group), "\(label)")
                        }
                    }
                }
                // An aggregate and a paged listing of one more query, through the same context.
                let query = Self.randomQuery(&random)
                let matching = state.values.filter(query.matches)
                #expect(
                    try context.aggregate(.sum(\CountedItem.group), matching: query.predicate)
                        == matching.map(\.group).reduce(0, +), "round \(round), sum, \(query.label)")
                #expect(
                    try context.aggregate(.count, matching: query.predicate, groupedBy: \CountedItem.isOpen)
                        == Dictionary(grouping: matching, by: \.isOpen).mapValues(\.count),
                    "round \(round), count by isOpen, \(query.label)")
                let listing = FetchDescriptor(predicate: query.predicate, sortBy: [SortDescriptor(\.code)])
                var cursor = context.fetchCursor(listing, batchSize: Int.random(in: 1...9, using: &random))
                var listed: [UUID] = []
                while let item = try cursor.next() { listed.append(item.id) }
                #expect(
                    listed == matching.sorted(using: [SortDescriptor(\.code)]).map(\.id),
                    "round \(round), listing, \(query.label)")
                if Bool.random(using: &random) {
                    try context.save()
                    models = state
                }
            }
        }
    }
}
