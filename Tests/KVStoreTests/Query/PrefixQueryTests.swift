import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A model with an indexed string, and one without an index.
struct PrefixItem: Model, Equatable {
    var id = UUID()
    var name: String
    var note: String

    static let entity = Entity<PrefixItem>(indexes: [.index(\.name)])
}

/// A model that finds its names without regard to case: an index on a computed property that folds them.
struct FoldedItem: Model, Equatable {
    var id = UUID()
    var name: String
    /// The name in lower case (Unicode's default case mapping, the same in every locale), not stored.
    var nameFolded: String { name.lowercased() }

    static let entity = Entity<FoldedItem>(indexes: [.index(\.nameFolded, name: "nameFolded")])
}

/// ``FoldedItem`` with its index on the computed property left unnamed.
struct UnnamedFoldedItem: Model, Equatable {
    var id = UUID()
    var name: String
    var nameFolded: String { name.lowercased() }

    static let entity = Entity<UnnamedFoldedItem>(indexes: [.index(\.nameFolded)])
}

/// `starts(with:)` on an indexed string reads a range of the index and finds exactly what Foundation's
/// `starts(with:)` finds, over names with non-ASCII characters, canonically equivalent pairs, a NUL and keys long
/// enough to be cut.
@Suite struct PrefixQueryTests {
    /// Pieces of names: canonically equivalent pairs (precomposed and decomposed), a combining mark that composes
    /// with nothing, case, a NUL, an emoji, the last ASCII character.
    static let pieces = [
        "a", "A", "b", "é", "e", "e\u{301}", "\u{20DD}", "ä", "a\u{308}", "ß", "😀", "\u{0}", "z", "\u{7F}", "ab",
    ]

    /// A string of 600 bytes, longer than an index key keeps.
    static let long = String(repeating: "x", count: 600)

    /// Random names; every tenth starts with ``long``.
    static func models(seed: UInt64) -> [PrefixItem] {
        var random = SplitMix64(seed: seed)
        return (0..<300).map { index in
            var name = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            .joined()
            if index % 10 == 0 { name = long + name }
            return PrefixItem(name: name, note: name)
        }
    }

    /// The prefixes tried: each piece, pairs of pieces, the empty prefix, and long ones (cut like long keys).
    static var prefixes: [String] {
        var prefixes = pieces + [""]
        for first in ["a", "e", "\u{0}", "é"] {
            for second in pieces { prefixes.append(first + second) }
        }
        prefixes += [long, long + "a", String(repeating: "x", count: 470), long + long]
        return prefixes
    }

    @Test(arguments: [1, 2] as [UInt64])
    func aPrefixOnAnIndexedStringReadsARangeAndFindsWhatStartsWithDoes(seed: UInt64) throws {
        try withContainer(PrefixItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models(seed: seed)
            try context.insert(contentsOf: models)
            // The data has matches for short and long prefixes alike.
            #expect(models.count { $0.name.starts(with: "a") } > 10)
            #expect(models.count { $0.name.starts(with: Self.long) } > 20)
            for prefix in Self.prefixes {
                let descriptor = FetchDescriptor<PrefixItem>(predicate: #Predicate { $0.name.starts(with: prefix) })
                #expect(try context.explain(descriptor).hasPrefix("index name: range ["))
                let expected = Set(models.filter { $0.name.starts(with: prefix) }.map(\.id))
                #expect(Set(try context.fetch(descriptor).map(\.id)) == expected, "prefix \(prefix.debugDescription)")
                #expect(try context.fetchCount(descriptor) == expected.count)
            }
        }
    }

    /// A prefix and a comparison on the same string merge into one range, the tighter bound on each side winning.
    @Test func aPrefixAndAComparisonMergeIntoOneRange() throws {
        try withContainer(PrefixItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models(seed: 3)
            try context.insert(contentsOf: models)
            let descriptors: [(FetchDescriptor<PrefixItem>, (PrefixItem) -> Bool)] = [
                (
                    FetchDescriptor(predicate: #Predicate { $0.name.starts(with: "a") && $0.name < "aa" }),
                    { $0.name.starts(with: "a") && $0.name < "aa" }
                ),
                (
                    FetchDescriptor(predicate: #Predicate { $0.name >= "ab" && $0.name.starts(with: "a") }),
                    { $0.name >= "ab" && $0.name.starts(with: "a") }
                ),
            ]
            for (descriptor, matches) in descriptors {
                #expect(try context.explain(descriptor).hasPrefix("index name: range ["))
                let expected = Set(models.filter(matches).map(\.id))
                #expect(Set(try context.fetch(descriptor).map(\.id)) == expected)
            }
        }
    }

    /// The range of a prefix: from its key without the terminator to the next key of that length; a long prefix cut
    /// to what a cut key keeps.
    @Test func thePrefixRangeIsTheKeysThatBeginWithThePrefix() {
        let index = PlannerIndex(
            name: "name", keyPaths: [\PrefixItem.name], isUnique: false, isMultiEntry: false,
            encodeComponent: { value in
                guard let string = value as? String else { return nil }
                var bytes: [UInt8] = []
                IndexKey.appendString(string, to: &bytes)
                return bytes
            })
        let ab = QueryPlanner.prefixBounds("ab", on: index)
        #expect(ab?.lower == QueryPlan.Bound(key: [1, 0x61, 0x62], isInclusive: true))
        #expect(ab?.upper == QueryPlan.Bound(key: [1, 0x61, 0x63], isInclusive: false))
        // An escaped NUL ends in 0xFF, which is dropped before the increment.
        let nul = QueryPlanner.prefixBounds("a\u{0}", on: index)
        #expect(nul?.lower == QueryPlan.Bound(key: [1, 0x61, 0, 0xFF], isInclusive: true))
        #expect(nul?.upper == QueryPlan.Bound(key: [1, 0x61, 1], isInclusive: false))
        let empty = QueryPlanner.prefixBounds("", on: index)
        #expect(empty?.lower == QueryPlan.Bound(key: [1], isInclusive: true))
        #expect(empty?.upper == QueryPlan.Bound(key: [2], isInclusive: false))
        let long = QueryPlanner.prefixBounds(Self.long, on: index)
        #expect(long?.lower.key.count == IndexKey.keptPrefix)
        // An index whose keys are not the standard string encoding gets no range.
        let plain = PlannerIndex(
            name: "name", keyPaths: [\PrefixItem.name], isUnique: false, isMultiEntry: false,
            encodeComponent: { ($0 as? String).map { Array($0.utf8) } })
        #expect(QueryPlanner.prefixBounds("ab", on: plain) == nil)
    }

    /// Case-insensitive equality and prefix, which `#Predicate` cannot say on Linux, through an index on a computed
    /// property that folds case: both read the index, and find what a comparison of folded strings finds.
    @Test func anIndexOnAFoldedComputedPropertyAnswersCaseInsensitiveQueries() throws {
        try withContainer(FoldedItem.self) { container throws in
            let context = ModelContext(container)
            let names = ["Ada", "ADA", "ada", "Adam", "ÄDA", "äda", "Straße", "STRASSE", "İstanbul", "istanbul", "Bob"]
            try context.insert(contentsOf: names.map { FoldedItem(name: $0) })
            for query in ["ada", "ADA", "äda", "straße", "İstanbul", "bob", "nobody"] {
                let folded = query.lowercased()
                let equal = FetchDescriptor<FoldedItem>(predicate: #Predicate { $0.nameFolded == folded })
                let plan = try context.explain(equal)
                #expect(plan == "index nameFolded: 1 key", "\(plan)")
                let expected = names.filter { $0.lowercased() == folded }.sorted()
                #expect(try context.fetch(equal).map(\.name).sorted() == expected, "query \(query)")
                let prefix = FetchDescriptor<FoldedItem>(predicate: #Predicate { $0.nameFolded.starts(with: folded) })
                #expect(try context.explain(prefix).hasPrefix("index nameFolded: range ["))
                let expectedPrefix = names.filter { $0.lowercased().starts(with: folded) }.sorted()
                #expect(try context.fetch(prefix).map(\.name).sorted() == expectedPrefix, "query \(query)")
            }
        }
    }

    /// An index on a computed property must be named (the runtime's name for the property holds an address that
    /// changes between builds), and its keys are not derivable from records: a program that does not declare it
    /// cannot maintain it.
    @Test func anIndexOnAComputedPropertyNeedsANameAndIsNotDerivable() throws {
        #expect(FoldedItem.entity.indexes[0].name == "nameFolded")
        #expect(!FoldedItem.entity.indexes[0].isDerivable)
        #expect(PrefixItem.entity.indexes[0].isDerivable)
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: UnnamedFoldedItem.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        }
        #expect(error == .invalidModel)
        #expect(error.message.contains("index on a computed property without a name"))
    }

    /// `starts(with:)` on a string without an index, through optional chaining, or with a prefix that reads the
    /// model scans, and still filters.
    @Test func otherPrefixConditionsScan() throws {
        try withContainer(PrefixItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models(seed: 4)
            try context.insert(contentsOf: models)
            let unindexed = FetchDescriptor<PrefixItem>(predicate: #Predicate { $0.note.starts(with: "a") })
            #expect(try context.explain(unindexed) == "scan")
            #expect(try context.fetchCount(unindexed) == models.count { $0.note.starts(with: "a") })
            let selfReferring = FetchDescriptor<PrefixItem>(predicate: #Predicate { $0.name.starts(with: $0.note) })
            #expect(try context.explain(selfReferring) == "scan")
            #expect(try context.fetchCount(selfReferring) == models.count)
        }
    }
}
