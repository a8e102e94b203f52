import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A model whose indexed fields sort with ties, non-ASCII and long strings, and `nil`.
struct SortedItem: Model, Equatable {
    var id = UUID()
    var name: String
    var score: Double?
    var rank: Int

    static let entity = Entity<SortedItem>(indexes: [.index(\.name), .index(\.score), .index(\.rank)])
}

/// The index-order fast path of sorted fetches gives exactly the order Foundation's `SortDescriptor` gives, ties
/// included, over random strings with non-ASCII characters, NFC/NFD pairs, keys long enough to be cut, and `nil`.
@Suite struct SortOrderFidelityTests {
    /// Pieces of names: canonically equivalent pairs (precomposed and decomposed), case, ligatures, a NUL, an emoji.
    static let pieces = [
        "a", "A", "b", "é", "e\u{301}", "ä", "a\u{308}", "ß", "ss", "\u{FB01}", "fi", "İ", "i", "😀", "\u{0}", "z", "",
    ]

    /// Random models; a few names share a 600-byte prefix, longer than an index key keeps.
    static func models(seed: UInt64) -> [SortedItem] {
        var random = SplitMix64(seed: seed)
        let long = String(repeating: "x", count: 600)
        return (0..<300).map { index in
            var name = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            .joined()
            if index % 10 == 0 { name = long + name }
            let score: Double? = Bool.random(using: &random) ? nil : Double(Int.random(in: -3...3, using: &random)) / 2
            return SortedItem(name: name, score: score, rank: Int.random(in: 0..<5, using: &random))
        }
    }

    static let sorts: [(String, SortDescriptor<SortedItem>)] = [
        ("name", SortDescriptor(\.name)),
        ("name reverse", SortDescriptor(\.name, order: .reverse)),
        ("name lexical", SortDescriptor(\.name, comparator: .lexical)),
        ("name lexical reverse", SortDescriptor(\.name, comparator: .lexical, order: .reverse)),
        ("score", SortDescriptor(\.score)),
        ("score reverse", SortDescriptor(\.score, order: .reverse)),
        ("rank", SortDescriptor(\.rank)),
        ("rank reverse", SortDescriptor(\.rank, order: .reverse)),
    ]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func orderedIndexReadsGiveFoundationsOrder(seed: UInt64) throws {
        try withContainer(SortedItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models(seed: seed)
            try context.insert(contentsOf: models)
            // What a scan holds, in its own order (record keys), which Foundation's stable sort keeps for ties.
            let scanned = try context.fetch(FetchDescriptor<SortedItem>())
            #expect(scanned.count == models.count)
            for (label, sort) in Self.sorts {
                let expected = scanned.sorted(using: sort)
                for limit in [1, 7, 40, 300] {
                    var descriptor = FetchDescriptor<SortedItem>(sortBy: [sort])
                    descriptor.fetchLimit = limit
                    // Numbers read the index in order; strings read every model and sort them.
                    let plan = label.hasPrefix("name") ? "scan" : "index \(label.prefix { $0 != " " }): ordered"
                    #expect(try context.explain(descriptor).hasPrefix(plan), "\(label)")
                    let fetched = try context.fetch(descriptor)
                    #expect(fetched == Array(expected.prefix(limit)), "\(label), limit \(limit), seed \(seed)")
                }
            }
        }
    }

    /// Whatever index a sorted fetch reads, its order is Foundation's sort of what a scan reads: ties (and strings
    /// that this platform's `<` cannot order) come as a scan gives them, in ID order.
    @Test(arguments: [1, 2, 3, 7] as [UInt64])
    func sortedFetchesThroughAnIndexGiveTheScansOrder(seed: UInt64) throws {
        try withContainer(SortedItem.self) { container throws in
            let context = ModelContext(container)
            try context.insert(contentsOf: Self.models(seed: seed))
            let scanned = try context.fetch(FetchDescriptor<SortedItem>())
            let cases: [(String, Predicate<SortedItem>, SortDescriptor<SortedItem>)] = [
                ("index name: range", #Predicate { $0.name >= "a" }, SortDescriptor(\.name)),
                ("index name: range", #Predicate { $0.name >= "a" }, SortDescriptor(\.name, order: .reverse)),
                ("index rank: 1 key", #Predicate { $0.rank == 2 }, SortDescriptor(\.name)),
                ("index rank: 2 keys", #Predicate { [1, 3].contains($0.rank) }, SortDescriptor(\.score)),
                ("index score: range", #Predicate { $0.score != nil }, SortDescriptor(\.rank, order: .reverse)),
            ]
            for (plan, predicate, sort) in cases {
                let descriptor = FetchDescriptor<SortedItem>(predicate: predicate, sortBy: [sort])
                #expect(try context.explain(descriptor).hasPrefix(plan))
                let expected = try scanned.filter { try predicate.evaluate($0) }.sorted(using: sort)
                #expect(try context.fetch(descriptor) == expected, "\(plan), seed \(seed)")
            }
        }
    }
}
