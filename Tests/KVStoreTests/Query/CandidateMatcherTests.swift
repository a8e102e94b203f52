import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A model whose indexes answer predicates only in part: a `Double` (NaN, and -0 equal to 0), a compound index on an
/// optional owner and a `Date`, and an integer; its other fields are left for the candidates' test.
struct RangedItem: Model {
    var id = UUID.timeOrdered()
    var ownerID: UUID?
    var day: Date
    var score: Double
    var title: String
    var count: Int

    static let entity = Entity<RangedItem>(
        indexes: [.index(\.score), .index(\.ownerID, \.day), .index(\.count), .index(\.title)])
}

/// ``SwappedItem`` with an index on `rank`, so that its fetches read candidates from the index and test them.
struct SwappedRankedItem: Model {
    var id = UUID.timeOrdered()
    var rank: Double
    var first: String
    var second: String

    static let entity = Entity<SwappedRankedItem>(indexes: [.index(\.rank)])

    private enum CodingKeys: String, CodingKey {
        case id, rank
        case first = "second"
        case second = "first"
    }
}

/// The candidates of an index read that does not answer its predicate exactly are tested on their records' fields
/// (``CandidateMatcher``): fetches and counts find what the predicate evaluated on every model finds.
@Suite struct CandidateMatcherTests {
    static let owners: [UUID?] = [nil] + (0..<3).map { _ in UUID() }
    static let days =
        (0..<5).map { Date(timeIntervalSinceReferenceDate: 800_000_000 + Double($0) * 86_400) }
        + [Date(timeIntervalSinceReferenceDate: .nan)]
    static let scores = [-0.0, 0.0, 1.5, -1, .infinity, .nan, 2.25]
    static let titles = ["", "a", "b", "é", "e\u{301}", "\u{E4}A", "a\u{308}", "f"]

    static func randomItem(_ random: inout SplitMix64) -> RangedItem {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        return RangedItem(
            ownerID: pick(owners), day: pick(days), score: pick(scores), title: pick(titles),
            count: Int.random(in: -2...3, using: &random))
    }

    /// A predicate that an index reads in part, with constants drawn.
    static func randomPredicate(_ random: inout SplitMix64) -> (label: String, predicate: Predicate<RangedItem>) {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        let owner = pick(owners)
        let (start, end) = (pick(days), pick(days))
        let score = pick(scores)
        let title = pick(titles)
        let count = Int.random(in: -2...3, using: &random)
        let other = pick(titles)
        switch Int.random(in: 0..<13, using: &random) {
        case 10: return ("title range", #Predicate { $0.title >= title && $0.title < other })
        case 11: return ("title prefix && score", #Predicate { $0.title.starts(with: title) && $0.score > score })
        case 12: return ("title <= || score >", #Predicate { $0.title <= title || $0.score > score })
        case 0:
            return ("compound range", #Predicate { $0.ownerID == owner && $0.day >= start && $0.day < end })
        case 7:
            return ("compound range <=", #Predicate { $0.ownerID == owner && $0.day >= start && $0.day <= end })
        case 8: return ("day <= && count", #Predicate { $0.day <= end && $0.count >= count })
        case 9: return ("constant >= day, flipped", #Predicate { $0.ownerID == owner && end >= $0.day })
        case 1: return ("score range && title", #Predicate { $0.score >= score && $0.title == title })
        case 2: return ("score || count", #Predicate { $0.score < score || $0.count == count })
        case 3: return ("count && score", #Predicate { $0.count > count && $0.score <= score })
        case 4: return ("owner && title !=", #Predicate { $0.ownerID == owner && $0.title != title })
        case 5: return ("score && !(title ==)", #Predicate { $0.score > score && !($0.title == title) })
        default: return ("score ==", #Predicate { $0.score == score })
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomIndexReadsAgreeWithThePredicateEvaluated(seed: UInt64) throws {
        try withContainer(RangedItem.self) { container throws in
            var random = SplitMix64(seed: seed)
            let context = ModelContext(container)
            let items = (0..<400).map { _ in Self.randomItem(&random) }
            for item in items { context.insert(item) }
            try context.save()
            for _ in 0..<150 {
                let (label, predicate) = Self.randomPredicate(&random)
                let expected = Set(try items.filter { try predicate.evaluate($0) }.map(\.id))
                let descriptor = FetchDescriptor(predicate: predicate)
                #expect(Set(try context.fetch(descriptor).map(\.id)) == expected, "\(label)")
                #expect(try context.fetchCount(descriptor) == expected.count, "\(label)")
                // Sorted on an indexed number and limited: the first matches in the sort's order.
                var sorted = FetchDescriptor(
                    predicate: predicate, sortBy: [SortDescriptor(\.count), SortDescriptor(\.id)])
                sorted.fetchLimit = 3
                let first = try items.filter { try predicate.evaluate($0) }.sorted {
                    ($0.count, $0.id.uuidString) < ($1.count, $1.id.uuidString)
                }.prefix(3)
                #expect(try context.fetch(sorted).map(\.id) == first.map(\.id), "\(label), sorted")
            }
        }
    }

    /// Counts of integer ranges, which the index answers exactly and counts key by key (a key past the first read
    /// only when there is an upper bound to compare it with), at every bound around the stored values.
    @Test func exactRangeCountsAgreeWithTheEvaluation() throws {
        try withContainer(RangedItem.self) { container throws in
            var random = SplitMix64(seed: 7)
            let context = ModelContext(container)
            let items = (0..<200).map { _ in Self.randomItem(&random) }
            for item in items { context.insert(item) }
            try context.save()
            for low in -3...4 {
                for high in -3...4 {
                    let predicates: [Predicate<RangedItem>] = [
                        #Predicate { $0.count > low }, #Predicate { $0.count >= low },
                        #Predicate { $0.count < high }, #Predicate { $0.count <= high },
                        #Predicate { $0.count > low && $0.count <= high },
                        #Predicate { $0.count >= low && $0.count < high },
                    ]
                    for predicate in predicates {
                        let descriptor = FetchDescriptor(predicate: predicate)
                        #expect(try context.explain(descriptor).hasPrefix("index count: range"))
                        let expected = try items.filter { try predicate.evaluate($0) }.count
                        #expect(try context.fetchCount(descriptor) == expected, "\(low) \(high)")
                    }
                }
            }
        }
    }

    /// `Date`'s `<=` and `>=` are `Comparable`'s, `!(b < a)` and `!(a < b)`: a NaN date matches both, and every
    /// date matches both against a NaN constant. The plans leave such bounds to the evaluation (the key of a NaN date
    /// sorts after every other), and find every match.
    @Test func nanDatesMatchInclusiveComparisons() throws {
        try withContainer(RangedItem.self) { container throws in
            let context = ModelContext(container)
            let nan = Date(timeIntervalSinceReferenceDate: .nan)
            let day = Date(timeIntervalSinceReferenceDate: 800_000_000)
            let items = [nan, day, day.addingTimeInterval(86_400)].map { date in
                RangedItem(ownerID: nil, day: date, score: 0, title: "", count: 0)
            }
            for item in items { context.insert(item) }
            try context.save()
            let owner: UUID? = nil
            func ids(_ predicate: Predicate<RangedItem>) throws -> Set<UUID> {
                Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id))
            }
            func expected(_ predicate: Predicate<RangedItem>) throws -> Set<UUID> {
                Set(try items.filter { try predicate.evaluate($0) }.map(\.id))
            }
            let predicates: [Predicate<RangedItem>] = [
                #Predicate { $0.ownerID == owner && $0.day <= day },
                #Predicate { $0.ownerID == owner && $0.day >= day && $0.day <= day },
                #Predicate { $0.ownerID == owner && $0.day >= nan },
                #Predicate { $0.ownerID == owner && $0.day < nan },
                #Predicate { $0.ownerID == owner && day >= $0.day },
            ]
            // The NaN date is among the matches of the first two, every model matches the third, none the fourth.
            #expect(try expected(predicates[0]) == [items[0].id, items[1].id])
            #expect(try expected(predicates[2]).count == 3)
            for predicate in predicates {
                #expect(try ids(predicate) == expected(predicate))
                #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == expected(predicate).count)
            }
        }
    }

    /// This platform's `String` comparison disagrees with the keys' NFC byte order for some strings: comparisons with
    /// a constant that is not plain ASCII bound no index read, and find what the evaluation finds; ASCII constants
    /// still read a range.
    @Test func stringComparisonsFindWhatTheEvaluationFinds() throws {
        try withContainer(RangedItem.self) { container throws in
            let context = ModelContext(container)
            let titles = ["a\u{308}", "\u{E4}A", "\u{1100}\u{1161}", "\u{AC00}\u{0}", "b", "a"]
            let items = titles.map { RangedItem(ownerID: nil, day: .distantPast, score: 0, title: $0, count: 0) }
            for item in items { context.insert(item) }
            try context.save()
            let (umlautA, hangulNul) = ("\u{E4}A", "\u{AC00}\u{0}")
            let predicates: [Predicate<RangedItem>] = [
                #Predicate { $0.title >= umlautA },
                #Predicate { $0.title <= umlautA },
                #Predicate { $0.title > hangulNul },
                #Predicate { $0.title < "b" },
            ]
            for predicate in predicates {
                let expected = Set(try items.filter { try predicate.evaluate($0) }.map(\.id))
                let descriptor = FetchDescriptor(predicate: predicate)
                #expect(Set(try context.fetch(descriptor).map(\.id)) == expected)
                #expect(try context.fetchCount(descriptor) == expected.count)
            }
            // The decomposed umlaut matches `>= "\u{E4}A"` here, though its key sorts below the constant's.
            #expect(try predicates[0].evaluate(items[0]))
            #expect(try context.explain(FetchDescriptor(predicate: predicates[0])) == "scan")
            #expect(try context.explain(FetchDescriptor(predicate: predicates[3])).hasPrefix("index title: range"))
        }
    }

    /// Fields stored under another property's name: a candidate whose fields disagree with its model turns the test
    /// off, and the candidates are evaluated, whether the first ones agreed or not.
    @Test(arguments: [false, true])
    func fieldsUnderAnotherNameAreEvaluated(agreeingFirst: Bool) throws {
        try withContainer(SwappedRankedItem.self) { container throws in
            let context = ModelContext(container)
            // Candidates come in `rank` order: those of rank 0 first.
            if agreeingFirst {
                for _ in 0..<10 { context.insert(SwappedRankedItem(rank: 0, first: "same", second: "same")) }
            }
            let wanted = (0..<5).map { _ in SwappedRankedItem(rank: 1, first: "x", second: "y") }
            for item in wanted { context.insert(item) }
            // The test reads `second` under `first`'s name, and would match this record for `first == "x"`.
            context.insert(SwappedRankedItem(rank: 2, first: "z", second: "x"))
            try context.save()
            let descriptor = FetchDescriptor<SwappedRankedItem>(
                predicate: #Predicate { $0.rank >= 0 && $0.first == "x" })
            #expect(try context.explain(descriptor).hasPrefix("index rank: range"))
            #expect(Set(try context.fetch(descriptor).map(\.id)) == Set(wanted.map(\.id)))
            #expect(try context.fetchCount(descriptor) == 5)
        }
    }

    /// A model whose decoding normalizes what it reads: the first candidate's fields disagree with its model, and
    /// the candidates are evaluated on the models.
    @Test func aNormalizingModelIsEvaluated() throws {
        try withContainer(RankedSubscriber.self) { container throws in
            let context = ModelContext(container)
            context.insert(RankedSubscriber(rank: 1, email: "Ann@Example.org"))
            context.insert(RankedSubscriber(rank: 2, email: "bob@example.org"))
            try context.save()
            let ann = FetchDescriptor<RankedSubscriber>(
                predicate: #Predicate { $0.rank > 0 && $0.email == "ann@example.org" })
            #expect(try context.fetch(ann).map(\.email) == ["ann@example.org"])
            #expect(try context.fetchCount(ann) == 1)
        }
    }
}

/// A subscriber whose decoding lowercases the stored email, with an index on a `Double` rank.
struct RankedSubscriber: Model {
    var id = UUID.timeOrdered()
    var rank: Double
    var email: String

    static let entity = Entity<RankedSubscriber>(indexes: [.index(\.rank)])

    init(rank: Double, email: String) {
        self.rank = rank
        self.email = email
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        rank = try container.decode(Double.self, forKey: .rank)
        email = try container.decode(String.self, forKey: .email).lowercased()
    }
}
