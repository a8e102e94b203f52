import Foundation
import Synchronization
import TestSupport
import Testing

@testable import KVStore

/// A predicate to check, with its label and the evaluation it must agree with (``ExactIndexReadTests/expectAnswers(_:areExact:models:in:mayFindNone:sourceLocation:)``).
typealias AnswerCase<M> = (label: String, predicate: Predicate<M>, matches: (M) -> Bool)

/// Counts the `CountedItem` models decoded by the task that set it as ``current``: tests that run at the same time
/// count their own decodes only.
final class DecodeCounter: Sendable {
    let count = Atomic<Int>(0)

    @TaskLocal static var current: DecodeCounter?
}

/// A model that counts its decodes, with an attribute of each kind the exactness rule tells apart.
struct CountedItem: Model, Equatable {
    var id = UUID()
    var group: Int
    var label: String
    var isOpen: Bool
    var ownerID: UUID?
    var tags: [String]
    var score: Double
    var code: String

    static let entity = Entity<CountedItem>(indexes: [
        .index(\.group), .index(\.label), .index(\.isOpen), .index(\.ownerID), .index(\.tags), .index(\.score),
        .unique(\.code),
    ])

    init(
        group: Int, label: String, isOpen: Bool, ownerID: UUID?, tags: [String], score: Double, code: String
    ) {
        (self.group, self.label, self.isOpen, self.ownerID, self.tags, self.score, self.code) =
            (group, label, isOpen, ownerID, tags, score, code)
    }

    enum CodingKeys: String, CodingKey { case id, group, label, isOpen, ownerID, tags, score, code }

    init(from decoder: any Decoder) throws {
        DecodeCounter.current?.count.add(1, ordering: .relaxed)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        group = try container.decode(Int.self, forKey: .group)
        label = try container.decode(String.self, forKey: .label)
        isOpen = try container.decode(Bool.self, forKey: .isOpen)
        ownerID = try container.decodeIfPresent(UUID.self, forKey: .ownerID)
        tags = try container.decode([String].self, forKey: .tags)
        score = try container.decode(Double.self, forKey: .score)
        code = try container.decode(String.self, forKey: .code)
    }
}

/// Counts and IDs of equalities that an index answers exactly come from the index without reading a model, and
/// agree with what evaluating the predicate on every model gives; other predicates read the models, as before.
@Suite struct ExactIndexReadTests {
    static let owners = (0..<3).map { _ in UUID() }

    /// 200 models over a few groups, labels (canonically equivalent spellings among them), owners and tags.
    static func models() -> [CountedItem] {
        let labels = ["a", "b", "é", "e\u{301}", "\u{0}", String(repeating: "x", count: 600)]
        return (0..<200).map { (index: Int) -> CountedItem in
            let ownerID: UUID? = index % 4 == 0 ? nil : owners[index % owners.count]
            let tags: [String] = index % 5 == 0 ? [] : ["t\(index % 5)", "t\(index % 2)"]
            let score = Double(index % 4) / 2
            return CountedItem(
                group: index % 7, label: labels[index % labels.count], isOpen: index % 3 == 0, ownerID: ownerID,
                tags: tags, score: score, code: "c\(index)")
        }
    }

    /// Runs `body` and returns how many models it decoded.
    static func decodes(_ body: () throws -> Void) rethrows -> Int {
        let counter = DecodeCounter()
        try DecodeCounter.$current.withValue(counter) { try body() }
        return counter.count.load(ordering: .relaxed)
    }

    /// Expects each of `cases` to be planned exactly or not as `isExact` says, to decode no model for its count and
    /// IDs exactly when it is exact (a model that counts its decodes through ``DecodeCounter``), and its count, IDs
    /// (in the order of the fetch's models, and a page of them) and fetch to be those of evaluating it on `models`,
    /// which every case finds some of but those named in `mayFindNone`.
    static func expectAnswers<M: Model>(
        _ cases: [AnswerCase<M>], areExact isExact: Bool, models: [M], in context: ModelContext,
        mayFindNone: Set<String> = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let store = try context.container.store(for: M.self)
        for (label, predicate, matches) in cases {
            let descriptor = FetchDescriptor(predicate: predicate)
            let planned = store.plan(descriptor)
            #expect(planned.isExact == isExact, "\(label): \(planned.description)", sourceLocation: sourceLocation)
            let expected = models.filter(matches).map(\.id)
            #expect(!expected.isEmpty || mayFindNone.contains(label), "\(label) finds", sourceLocation: sourceLocation)
            var (count, ids) = (0, [UUID]())
            let decoded = try decodes {
                count = try context.fetchCount(descriptor)
                ids = try context.fetchIdentifiers(descriptor)
            }
            #expect((decoded == 0) == isExact, "\(label) decodes only when evaluated", sourceLocation: sourceLocation)
            #expect(count == expected.count, "\(label)", sourceLocation: sourceLocation)
            #expect(
                Set(ids) == Set(expected) && ids.count == expected.count, "\(label)", sourceLocation: sourceLocation)
            #expect(ids == (try context.fetch(descriptor)).map(\.id), "\(label)", sourceLocation: sourceLocation)
            var paged = descriptor
            paged.fetchOffset = 2
            paged.fetchLimit = 3
            #expect(
                try context.fetchIdentifiers(paged) == Array(ids.dropFirst(2).prefix(3)), "\(label)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func exactEqualitiesAreCountedAndListedFromTheIndex() throws {
        try withContainer(CountedItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models()
            try context.insert(contentsOf: models)
            let owner = Self.owners[1]
            let noOwner: UUID? = nil
            let someID = models[17].id
            let codes = ["c3", "c150", "missing"]
            let cases: [(String, Predicate<CountedItem>, (CountedItem) -> Bool)] = [
                ("int", #Predicate { $0.group == 3 }, { $0.group == 3 }),
                ("string", #Predicate { $0.label == "é" }, { $0.label == "é" }),
                ("decomposed string", #Predicate { $0.label == "e\u{301}" }, { $0.label == "e\u{301}" }),
                ("NUL", #Predicate { $0.label == "\u{0}" }, { $0.label == "\u{0}" }),
                ("bool", #Predicate { $0.isOpen == true }, { $0.isOpen }),
                ("optional UUID", #Predicate { $0.ownerID == owner }, { $0.ownerID == owner }),
                ("nil", #Predicate { $0.ownerID == noOwner }, { $0.ownerID == nil }),
                ("contains", #Predicate { $0.tags.contains("t1") }, { $0.tags.contains("t1") }),
                ("one of", #Predicate { [2, 5].contains($0.group) }, { [2, 5].contains($0.group) }),
                ("unique", #Predicate { codes.contains($0.code) }, { codes.contains($0.code) }),
                ("id", #Predicate { $0.id == someID }, { $0.id == someID }),
                ("range", #Predicate { $0.group > 4 }, { $0.group > 4 }),
                ("flipped range", #Predicate { 2 >= $0.group }, { 2 >= $0.group }),
                ("two-sided range", #Predicate { $0.group >= 2 && $0.group < 5 }, { $0.group >= 2 && $0.group < 5 }),
                ("empty range", #Predicate { $0.group > 4 && $0.group < 3 }, { $0.group > 4 && $0.group < 3 }),
            ]
            for (label, predicate, matches) in cases {
                let descriptor = FetchDescriptor(predicate: predicate)
                let expected = models.filter(matches).map(\.id)
                #expect(!expected.isEmpty || label == "empty range", "\(label) has matches")
                var count = 0
                var ids: [UUID] = []
                let decoded = try Self.decodes {
                    count = try context.fetchCount(descriptor)
                    ids = try context.fetchIdentifiers(descriptor)
                }
                #expect(decoded == 0, "\(label) read no model")
                #expect(count == expected.count, "\(label)")
                #expect(Set(ids) == Set(expected) && ids.count == expected.count, "\(label)")
                // The same IDs, in the same order, as the models a fetch returns.
                #expect(ids == (try context.fetch(descriptor)).map(\.id), "\(label)")
                var paged = descriptor
                paged.fetchOffset = 1
                paged.fetchLimit = 2
                #expect(try context.fetchIdentifiers(paged) == Array(ids.dropFirst(1).prefix(2)), "\(label)")
            }
        }
    }

    /// Keys an index cannot answer exactly (a cut long string, a double, where NaN has one key `==` never matches)
    /// and predicates of more than one comparison read the models, and still count right.
    @Test func otherPredicatesReadTheModels() throws {
        try withContainer(CountedItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models()
            try context.insert(contentsOf: models)
            let long = String(repeating: "x", count: 600)
            let cases: [(String, Predicate<CountedItem>, (CountedItem) -> Bool)] = [
                ("cut key", #Predicate { $0.label == long }, { $0.label == long }),
                ("double", #Predicate { $0.score == 0.5 }, { $0.score == 0.5 }),
                ("conjunction", #Predicate { $0.group == 3 && $0.isOpen }, { $0.group == 3 && $0.isOpen }),
                ("range and more", #Predicate { $0.group > 4 && $0.isOpen }, { $0.group > 4 && $0.isOpen }),
                ("range of a double", #Predicate { $0.score > 0.5 }, { $0.score > 0.5 }),
                ("range of a string", #Predicate { $0.label > "a" }, { $0.label > "a" }),
            ]
            for (label, predicate, matches) in cases {
                let descriptor = FetchDescriptor(predicate: predicate)
                let expected = models.filter(matches)
                #expect(!expected.isEmpty, "\(label) has matches")
                var count = 0
                let decoded = try Self.decodes { count = try context.fetchCount(descriptor) }
                #expect(decoded > 0, "\(label) reads models")
                #expect(count == expected.count, "\(label)")
                #expect(Set(try context.fetchIdentifiers(descriptor)) == Set(expected.map(\.id)), "\(label)")
            }
        }
    }

    /// An `||` whose sides the indexes answer exactly is answered exactly: a count reads the parts' IDs, each model
    /// once however many parts reach it, and a fetch evaluates nothing. A side that is not answered exactly, or a
    /// condition beside the `||`, makes the union evaluated.
    @Test func disjunctionsOfExactSides() throws {
        try withContainer(CountedItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models()
            try context.insert(contentsOf: models)
            let owner = Self.owners[2]
            let long = String(repeating: "x", count: 600)
            let exact: [AnswerCase<CountedItem>] = [
                (
                    "keys of one index", #Predicate { $0.group == 3 || $0.group == 5 },
                    { $0.group == 3 || $0.group == 5 }
                ),
                ("two indexes", #Predicate { $0.group == 1 || $0.label == "a" }, { $0.group == 1 || $0.label == "a" }),
                (
                    "a range and keys", #Predicate { $0.group > 4 || $0.ownerID == owner },
                    { $0.group > 4 || $0.ownerID == owner }
                ),
                ("overlapping ranges", #Predicate { $0.group < 3 || $0.group < 5 }, { $0.group < 3 || $0.group < 5 }),
                (
                    "elements of one array", #Predicate { $0.tags.contains("t1") || $0.tags.contains("t3") },
                    { $0.tags.contains("t1") || $0.tags.contains("t3") }
                ),
                (
                    "nested", #Predicate { ($0.group == 1 || $0.isOpen == true) || $0.tags.contains("t3") },
                    { ($0.group == 1 || $0.isOpen) || $0.tags.contains("t3") }
                ),
            ]
            let evaluated: [AnswerCase<CountedItem>] = [
                ("a double", #Predicate { $0.group == 3 || $0.score == 0.5 }, { $0.group == 3 || $0.score == 0.5 }),
                ("a cut key", #Predicate { $0.group == 3 || $0.label == long }, { $0.group == 3 || $0.label == long }),
                (
                    "a condition beside", #Predicate { ($0.group == 1 || $0.group == 2) && $0.isOpen },
                    { ($0.group == 1 || $0.group == 2) && $0.isOpen }
                ),
                (
                    "a conjunction in a side", #Predicate { ($0.group == 1 && $0.isOpen) || $0.group == 2 },
                    { ($0.group == 1 && $0.isOpen) || $0.group == 2 }
                ),
            ]
            try Self.expectAnswers(exact, areExact: true, models: models, in: context)
            try Self.expectAnswers(evaluated, areExact: false, models: models, in: context)
        }
    }

    /// A context's pending changes count: inserts that match add, deletes and changes away from the value subtract,
    /// and the IDs follow.
    @Test func pendingChangesAreCountedToo() throws {
        try withContainer(CountedItem.self) { container throws in
            let context = ModelContext(container)
            var models = Self.models()
            try context.insert(contentsOf: models)
            let descriptor = FetchDescriptor<CountedItem>(predicate: #Predicate { $0.group == 3 })
            let before = models.filter { $0.group == 3 }
            var moved = before[0]
            moved.group = 4
            context.insert(moved)
            context.delete(before[1])
            let added = CountedItem(
                group: 3, label: "new", isOpen: false, ownerID: nil, tags: [], score: 0, code: "new")
            context.insert(added)
            models.append(added)
            let expected = Set(before.dropFirst(2).map(\.id) + [added.id])
            #expect(try context.fetchCount(descriptor) == expected.count)
            #expect(Set(try context.fetchIdentifiers(descriptor)) == expected)
            try context.save()
            #expect(try context.fetchCount(descriptor) == expected.count)
            #expect(Set(try context.fetchIdentifiers(descriptor)) == expected)
        }
    }
}

/// A model with indexed floating-point numbers and a date, whose values include NaN, both zeros and the infinities,
/// and which counts its decodes (through ``DecodeCounter``).
struct MeasuredItem: Model, Equatable {
    var id = UUID()
    var score: Double
    var weight: Float
    var at: Date

    static let entity = Entity<MeasuredItem>(indexes: [.index(\.score), .index(\.weight), .index(\.at)])

    init(score: Double, weight: Float, at: Date) {
        (self.score, self.weight, self.at) = (score, weight, at)
    }

    enum CodingKeys: String, CodingKey { case id, score, weight, at }

    init(from decoder: any Decoder) throws {
        DecodeCounter.current?.count.add(1, ordering: .relaxed)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        score = try container.decode(Double.self, forKey: .score)
        weight = try container.decode(Float.self, forKey: .weight)
        at = try container.decode(Date.self, forKey: .at)
    }
}

/// Ranges of floating-point numbers and dates with an upper bound are read exactly from their indexes, NaN, the two
/// zeros and the infinities stored; other ranges of them read the models. Either way the answer is the evaluation's.
@Suite struct FloatingPointRangeTests {
    static func models() -> [MeasuredItem] {
        let scores: [Double] = [.nan, -.infinity, -2.5, -0.0, 0.0, 0.5, 1, 2.5, .infinity, -.nan]
        let weights: [Float] = [.nan, -.infinity, -1, -0.0, 0, 0.25, 1, .infinity]
        let dates = [
            Date(timeIntervalSinceReferenceDate: .nan), .distantPast, Date(timeIntervalSinceReferenceDate: -0.0),
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1_000), .distantFuture,
            Date(timeIntervalSinceReferenceDate: .infinity),
        ]
        return (0..<140).map { index in
            MeasuredItem(
                score: scores[index % scores.count], weight: weights[index % weights.count],
                at: dates[index % dates.count])
        }
    }

    @Test func rangesWithAnUpperBoundAreReadExactly() throws {
        try withContainer(MeasuredItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models()
            try context.insert(contentsOf: models)
            let (zero, minusZero, inf, notANumber) = (0.0, -0.0, Double.infinity, Double.nan)
            let (start, end) = (Date(timeIntervalSinceReferenceDate: -0.0), Date(timeIntervalSinceReferenceDate: 1_000))
            let exact: [AnswerCase<MeasuredItem>] = [
                ("below", #Predicate { $0.score < 1 }, { $0.score < 1 }),
                ("at most zero", #Predicate { $0.score <= zero }, { $0.score <= zero }),
                ("below minus zero", #Predicate { $0.score < minusZero }, { $0.score < minusZero }),
                (
                    "zeros", #Predicate { $0.score >= minusZero && $0.score <= zero },
                    { $0.score >= -0.0 && $0.score <= 0 }
                ),
                ("two-sided", #Predicate { $0.score > -2.5 && $0.score < 2.5 }, { $0.score > -2.5 && $0.score < 2.5 }),
                ("up to infinity", #Predicate { $0.score <= inf }, { $0.score <= inf }),
                ("finite", #Predicate { $0.score > -inf && $0.score < inf }, { $0.score > -inf && $0.score < inf }),
                ("flipped", #Predicate { 0.5 > $0.score }, { 0.5 > $0.score }),
                ("float", #Predicate { $0.weight >= 0 && $0.weight < 1 }, { $0.weight >= 0 && $0.weight < 1 }),
                ("dates", #Predicate { $0.at >= start && $0.at < end }, { $0.at >= start && $0.at < end }),
                ("dates before", #Predicate { $0.at < end }, { $0.at < end }),
            ]
            let evaluated: [AnswerCase<MeasuredItem>] = [
                ("above", #Predicate { $0.score > 0.5 }, { $0.score > 0.5 }),
                ("at least minus zero", #Predicate { $0.score >= minusZero }, { $0.score >= minusZero }),
                ("below NaN", #Predicate { $0.score < notANumber }, { $0.score < notANumber }),
                ("dates after", #Predicate { $0.at > start }, { $0.at > start }),
                ("dates up to", #Predicate { $0.at <= end }, { $0.at <= end }),
                ("range and more", #Predicate { $0.score < 1 && $0.weight > 0 }, { $0.score < 1 && $0.weight > 0 }),
            ]
            try ExactIndexReadTests.expectAnswers(exact, areExact: true, models: models, in: context)
            try ExactIndexReadTests.expectAnswers(
                evaluated, areExact: false, models: models, in: context, mayFindNone: ["below NaN"])
        }
    }

    /// A sorted, paged fetch of an exact date range reads the page's IDs from the index in its order (ties in ID
    /// order, `-0.0` and `0.0` tied), as sorting the matching models would give them.
    @Test func aSortedPageOfAnExactDateRangeIsInTheSortsOrder() throws {
        try withContainer(MeasuredItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models()
            try context.insert(contentsOf: models)
            let (start, end) = (Date.distantPast, Date(timeIntervalSinceReferenceDate: 1_000))
            let matching = models.filter { $0.at >= start && $0.at < end }
            let sorted = matching.sorted { $0.at < $1.at || ($0.at == $1.at && $0.id.isOrdered(before: $1.id)) }
            var descriptor = FetchDescriptor<MeasuredItem>(
                predicate: #Predicate { $0.at >= start && $0.at < end }, sortBy: [SortDescriptor(\.at)])
            descriptor.fetchOffset = 5
            descriptor.fetchLimit = 30
            let store = try container.store(for: MeasuredItem.self)
            #expect(store.plan(descriptor).isExact)
            let expected = Array(sorted.dropFirst(5).prefix(30)).map(\.id)
            #expect(try context.fetchIdentifiers(descriptor) == expected)
            #expect(try context.fetch(descriptor).map(\.id) == expected)
        }
    }
}
