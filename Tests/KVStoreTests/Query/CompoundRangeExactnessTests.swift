import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A model with compound indexes of bounded attributes (an optional ID and a date, an integer and a Boolean) and one
/// with a string, which counts its decodes (through ``DecodeCounter``).
struct ScheduledItem: Model, Equatable {
    var id = UUID()
    var ownerID: UUID?
    var at: Date
    var rank: Int
    var isOpen: Bool
    var name: String

    static let entity = Entity<ScheduledItem>(indexes: [
        .index(\.ownerID, \.at), .index(\.rank, \.isOpen), .index(\.rank, \.name), .index(\.at),
    ])

    init(ownerID: UUID?, at: Date, rank: Int, isOpen: Bool, name: String) {
        (self.ownerID, self.at, self.rank, self.isOpen, self.name) = (ownerID, at, rank, isOpen, name)
    }

    enum CodingKeys: String, CodingKey { case id, ownerID, at, rank, isOpen, name }

    init(from decoder: any Decoder) throws {
        DecodeCounter.current?.count.add(1, ordering: .relaxed)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        ownerID = try container.decodeIfPresent(UUID.self, forKey: .ownerID)
        at = try container.decode(Date.self, forKey: .at)
        rank = try container.decode(Int.self, forKey: .rank)
        isOpen = try container.decode(Bool.self, forKey: .isOpen)
        name = try container.decode(String.self, forKey: .name)
    }
}

/// A read of a compound index whose equalities fix its first attributes and whose comparisons bound the next one is
/// exact when every attribute's keys are bounded and answer `==` and `<` exactly: counts and IDs come from the index,
/// and a fetch evaluates nothing. Every other shape reads the models. Either way the answer is the evaluation's, for
/// each of several constants (the first plans the shape in full, the next ones reuse its template).
@Suite struct CompoundRangeExactnessTests {
    static let owners = (0..<3).map { _ in UUID() }
    static let dates = [
        Date(timeIntervalSinceReferenceDate: .nan), .distantPast, Date(timeIntervalSinceReferenceDate: -0.0),
        Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 500),
        Date(timeIntervalSinceReferenceDate: 1_000), .distantFuture, Date(timeIntervalSinceReferenceDate: .infinity),
    ]

    static func models() -> [ScheduledItem] {
        (0..<240).map { index in
            ScheduledItem(
                ownerID: index % 4 == 3 ? nil : owners[index % 3], at: dates[index % dates.count], rank: index % 5,
                isOpen: index % 2 == 0, name: ["a", "b", "é", "e\u{301}"][index % 4])
        }
    }

    typealias Case = AnswerCase<ScheduledItem>

    /// The exact shapes, for an owner (or `nil`) and a window.
    static func exactCases(owner: UUID?, start: Date, end: Date, rank: Int) -> [Case] {
        [
            (
                "owner in a window", #Predicate { $0.ownerID == owner && $0.at >= start && $0.at < end },
                { $0.ownerID == owner && $0.at >= start && $0.at < end }
            ),
            (
                "terms in another order", #Predicate { $0.at < end && $0.ownerID == owner && $0.at > start },
                { $0.at < end && $0.ownerID == owner && $0.at > start }
            ),
            ("flipped", #Predicate { end > $0.at && owner == $0.ownerID }, { end > $0.at && owner == $0.ownerID }),
            ("owner alone", #Predicate { $0.ownerID == owner }, { $0.ownerID == owner }),
            ("both attributes", #Predicate { $0.rank == rank && $0.isOpen == true }, { $0.rank == rank && $0.isOpen }),
            (
                "same owner twice", #Predicate { $0.ownerID == owner && $0.ownerID == owner && $0.at < end },
                { $0.ownerID == owner && $0.at < end }
            ),
            (
                "first attribute's range", #Predicate { $0.rank >= rank && $0.rank < 4 },
                { $0.rank >= rank && $0.rank < 4 }
            ),
            (
                "either of two prefixes", #Predicate { $0.rank == rank || $0.ownerID == owner },
                { $0.rank == rank || $0.ownerID == owner }
            ),
        ]
    }

    /// Shapes that read the models.
    static func evaluatedCases(owner: UUID?, other: UUID?, start: Date, end: Date, rank: Int) -> [Case] {
        let notANumber = Date(timeIntervalSinceReferenceDate: .nan)
        return [
            (
                "open above", #Predicate { $0.ownerID == owner && $0.at >= start },
                { $0.ownerID == owner && $0.at >= start }
            ),
            (
                "a date's <=", #Predicate { $0.ownerID == owner && $0.at <= end },
                { $0.ownerID == owner && $0.at <= end }
            ),
            (
                "below NaN", #Predicate { $0.ownerID == owner && $0.at < notANumber },
                { $0.ownerID == owner && $0.at < notANumber }
            ),
            (
                "another attribute", #Predicate { $0.ownerID == owner && $0.at < end && $0.rank == rank },
                { $0.ownerID == owner && $0.at < end && $0.rank == rank }
            ),
            (
                "two owners", #Predicate { $0.ownerID == owner && $0.ownerID == other && $0.at < end },
                { $0.ownerID == owner && $0.ownerID == other && $0.at < end }
            ),
            (
                "equal dates", #Predicate { $0.ownerID == owner && $0.at == end },
                { $0.ownerID == owner && $0.at == end }
            ),
            ("a string", #Predicate { $0.rank == rank && $0.name == "é" }, { $0.rank == rank && $0.name == "é" }),
            ("a Boolean alone", #Predicate { $0.rank == rank && $0.isOpen }, { $0.rank == rank && $0.isOpen }),
            (
                "either, one side a string", #Predicate { $0.ownerID == owner || ($0.rank == rank && $0.name == "a") },
                { $0.ownerID == owner || ($0.rank == rank && $0.name == "a") }
            ),
        ]
    }

    @Test func boundedCompoundReadsAreExactAndOthersEvaluated() throws {
        try withContainer(ScheduledItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models()
            try context.insert(contentsOf: models)
            let windows = [
                (Self.dates[2], Self.dates[5]), (Self.dates[1], Self.dates[7]), (Self.dates[4], Self.dates[4]),
            ]
            for (round, (start, end)) in windows.enumerated() {
                let owner: UUID? = round == 1 ? nil : Self.owners[round]
                let other: UUID? = Self.owners[(round + 1) % 3]
                let exact = Self.exactCases(owner: owner, start: start, end: end, rank: round + 1)
                let evaluated = Self.evaluatedCases(owner: owner, other: other, start: start, end: end, rank: round)
                // The labels name the round; the last round's window is empty.
                func named(_ cases: [Case]) -> [Case] { cases.map { ("\($0.label), round \(round)", $0.1, $0.2) } }
                func names(_ labels: [String]) -> Set<String> { Set(labels.map { "\($0), round \(round)" }) }
                try ExactIndexReadTests.expectAnswers(
                    named(exact), areExact: true, models: models, in: context,
                    mayFindNone: names(round == 2 ? ["owner in a window", "terms in another order"] : []))
                try ExactIndexReadTests.expectAnswers(
                    named(evaluated), areExact: false, models: models, in: context,
                    mayFindNone: names(["two owners", "below NaN"]))
            }
        }
    }

    /// A sorted page of an exact compound range comes in the order of the sort on its ranged attribute.
    @Test func aSortedPageOfAnExactCompoundRangeIsInTheSortsOrder() throws {
        try withContainer(ScheduledItem.self) { container throws in
            let context = ModelContext(container)
            let models = Self.models()
            try context.insert(contentsOf: models)
            let owner: UUID? = Self.owners[0]
            let (start, end) = (Date.distantPast, Date(timeIntervalSinceReferenceDate: 1_000))
            let matching = models.filter { $0.ownerID == owner && $0.at >= start && $0.at < end }
            for order in [SortOrder.forward, .reverse] {
                var descriptor = FetchDescriptor<ScheduledItem>(
                    predicate: #Predicate { $0.ownerID == owner && $0.at >= start && $0.at < end },
                    sortBy: [SortDescriptor(\.at, order: order)])
                descriptor.fetchOffset = 2
                descriptor.fetchLimit = 5
                // Models that tie come in ID order, as a stable sort of a scan leaves them.
                let sorted = matching.sorted { a, b in
                    a.at == b.at ? a.id.isOrdered(before: b.id) : (a.at < b.at) == (order == .forward)
                }
                let expected = Array(sorted.dropFirst(2).prefix(5)).map(\.id)
                #expect(try container.store(for: ScheduledItem.self).plan(descriptor).isExact)
                #expect(try context.fetchIdentifiers(descriptor) == expected, "\(order)")
                #expect(try context.fetch(descriptor).map(\.id) == expected, "\(order)")
            }
        }
    }
}

/// A model with a compound index of an integer and a `Double`, which counts its decodes.
struct ScoredItem: Model, Equatable {
    var id = UUID()
    var rank: Int
    var score: Double

    static let entity = Entity<ScoredItem>(indexes: [.index(\.rank, \.score)])

    init(rank: Int, score: Double) {
        (self.rank, self.score) = (rank, score)
    }

    enum CodingKeys: String, CodingKey { case id, rank, score }

    init(from decoder: any Decoder) throws {
        DecodeCounter.current?.count.add(1, ordering: .relaxed)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        rank = try container.decode(Int.self, forKey: .rank)
        score = try container.decode(Double.self, forKey: .score)
    }
}

/// The plan kept for a predicate's shape knows its exactness from the first constants; a NaN bound of a `Double`
/// (which a `Date` has not: its NaN bounds nothing) makes the same shape's read inexact, and a later number makes it
/// exact again. Each is the evaluation's answer.
@Suite struct CompoundTemplateExactnessTests {
    /// The bounds in order: a shape first planned with a number, then one first planned with NaN.
    @Test(arguments: [[1.0, .nan, 3.0, -.infinity, .nan, .infinity], [.nan, 2.0, .nan, 0.5]])
    func aNaNBoundOfAKeptShapeIsEvaluatedAndANumberAfterItIsExact(bounds: [Double]) throws {
        try withContainer(ScoredItem.self) { container throws in
            let context = ModelContext(container)
            let scores: [Double] = [.nan, -.infinity, -1.5, -0.0, 0, 0.5, 2, 7.25, .infinity]
            let models = (0..<180).map { ScoredItem(rank: $0 % 4, score: scores[$0 % scores.count]) }
            try context.insert(contentsOf: models)
            // One predicate site for every bound, so that each plan after the first reuses the shape's.
            func below(_ bound: Double, rank: Int) -> AnswerCase<ScoredItem> {
                (
                    "rank \(rank), below \(bound)", #Predicate { $0.rank == rank && $0.score < bound },
                    { $0.rank == rank && $0.score < bound }
                )
            }
            for (round, bound) in bounds.enumerated() {
                let rank = round % 4
                try ExactIndexReadTests.expectAnswers(
                    [below(bound, rank: rank)], areExact: !bound.isNaN, models: models, in: context,
                    mayFindNone: bound.isNaN || bound == -.infinity ? ["rank \(rank), below \(bound)"] : [])
            }
        }
    }
}

/// `ScheduledItem`'s records as a script that declares none of its indexes writes them.
private struct PlainScheduledItem: Model, Equatable {
    var id = UUID()
    var ownerID: UUID?
    var at: Date
    var rank: Int
    var isOpen: Bool
    var name: String

    static let entity = Entity<PlainScheduledItem>(name: "ScheduledItem")

    init(_ item: ScheduledItem) {
        (id, ownerID, at, rank, isOpen, name) = (item.id, item.ownerID, item.at, item.rank, item.isOpen, item.name)
    }
}

/// Exact reads trust the indexes to hold what the records hold: a container that declares none of them, writing
/// beside one that reads exactly (two containers of one store at once, and a reopen), keeps the compound indexes in
/// step, so the exact counts, IDs and fetches stay the evaluation's.
@Suite struct CompoundIndexesWrittenByAnotherContainerTests {
    @Test func exactReadsSeeTheWritesOfAContainerThatDoesNotDeclareTheIndexes() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        var models = CompoundRangeExactnessTests.models()
        let owner: UUID? = CompoundRangeExactnessTests.owners[0]
        let end = Date(timeIntervalSinceReferenceDate: 1_000)
        let cases: [AnswerCase<ScheduledItem>] = [
            ("owner before", #Predicate { $0.ownerID == owner && $0.at < end }, { $0.ownerID == owner && $0.at < end }),
            ("rank and flag", #Predicate { $0.rank == 2 && $0.isOpen == false }, { $0.rank == 2 && !$0.isOpen }),
            ("either", #Predicate { $0.rank == 1 || $0.ownerID == owner }, { $0.rank == 1 || $0.ownerID == owner }),
        ]
        let program = try ModelContainer(for: ScheduledItem.self, configuration: configuration)
        defer { try? program.close() }
        try ModelContext(program).insert(contentsOf: Array(models.prefix(120)))
        do {
            let script = try ModelContainer(for: PlainScheduledItem.self, configuration: configuration)
            defer { try? script.close() }
            // The script inserts the rest, moves some of the program's items to other owners, ranks and dates, and
            // deletes others.
            try script.write { txn in
                for item in models.dropFirst(120) { try txn.insert(PlainScheduledItem(item)) }
                for position in stride(from: 0, to: 120, by: 7) {
                    models[position].ownerID = position % 2 == 0 ? owner : nil
                    models[position].rank = (models[position].rank + 1) % 5
                    models[position].at = end.addingTimeInterval(-Double(position))
                    try txn.insert(PlainScheduledItem(models[position]))
                }
                for position in stride(from: 3, to: 120, by: 11) {
                    try txn.delete(PlainScheduledItem.self, id: models[position].id)
                }
            }
            let deleted = Set(stride(from: 3, to: 120, by: 11).map { models[$0].id })
            models.removeAll { deleted.contains($0.id) }
            // Both containers open.
            try ExactIndexReadTests.expectAnswers(cases, areExact: true, models: models, in: ModelContext(program))
        }
        // And after the script's container closed, in a new container.
        let reopened = try ModelContainer(for: ScheduledItem.self, configuration: configuration)
        defer { try? reopened.close() }
        try ExactIndexReadTests.expectAnswers(cases, areExact: true, models: models, in: ModelContext(reopened))
        #expect(try integrityErrors(at: directory.path) == [])
    }
}
