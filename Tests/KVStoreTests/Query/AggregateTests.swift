import Foundation
import LMDB
import TestSupport
import Testing

@testable import KVStore

/// A model with an attribute of each kind aggregates treat apart: indexed or not, optional or not, integers of a
/// narrow type, floating-point numbers, dates, strings and arrays, and two properties whose coding keys are swapped.
struct LedgerEntry: Model, Equatable {
    var id = UUID()
    var account: Int
    var amount: Int
    var quantity: Int8?
    var weight: Double?
    var category: String?
    var labels: [String]
    var bookedAt: Date
    var left: Int
    var right: Int

    static let entity = Entity<LedgerEntry>(indexes: [
        .index(\.account), .index(\.quantity), .index(\.category), .index(\.labels), .index(\.bookedAt),
    ])

    /// `left` is stored under the name "right" and the other way round: an aggregate that read records by property
    /// name would add up the wrong one.
    enum CodingKeys: String, CodingKey {
        case id, account, amount, quantity, weight, category, labels, bookedAt
        case left = "right"
        case right = "left"
    }
}

/// A reference model to aggregate through a context that tracks its objects.
final class LedgerLine: PersistentModel {
    var id = UUID.timeOrdered()
    var account: Int
    var amount: Int

    init(account: Int, amount: Int) {
        self.account = account
        self.amount = amount
    }

    static let entity = Entity<LedgerLine>(name: "LedgerLine", indexes: [.index(\.account)])
}

/// Aggregates agree with computing the same over every model loaded and filtered in memory, for every predicate
/// shape and every way the store reads (index keys alone, records, models), alone and grouped, through a transaction
/// and through contexts with unsaved changes; sums that overflow throw.
@Suite struct AggregateTests {
    static let base = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func entries(count: Int, seed: UInt64) -> [LedgerEntry] {
        var random = SplitMix64(seed: seed)
        let categories: [String?] = [nil, "food", "rent", "travel", String(repeating: "long", count: 200)]
        let labels = ["a", "b", "c", "d"]
        return (0..<count).map { _ in
            let quantity: Int8? =
                Int.random(in: 0..<4, using: &random) == 0 ? nil : Int8(Int.random(in: 0..<200, using: &random) - 100)
            let weight: Double? =
                Int.random(in: 0..<3, using: &random) == 0 ? nil : Double(Int.random(in: 0..<1000, using: &random)) / 8
            return LedgerEntry(
                account: (Int.random(in: 0..<12, using: &random)) - 3,
                amount: (Int.random(in: 0..<10_000, using: &random)) - 2_000,
                quantity: quantity, weight: weight, category: categories[(Int.random(in: 0..<5, using: &random))],
                labels: labels.filter { _ in Int.random(in: 0..<2, using: &random) == 0 },
                bookedAt: base.addingTimeInterval(Double(Int.random(in: 0..<100_000, using: &random))),
                left: (Int.random(in: 0..<50, using: &random)), right: (Int.random(in: 0..<50, using: &random)) + 1_000)
        }
    }

    /// The predicates, with their in-memory equivalents: none, exact plans on the aggregated index and on others,
    /// plans that are not exact, and scans.
    static func predicates() -> [(String, Predicate<LedgerEntry>?, (LedgerEntry) -> Bool)] {
        let noCategory: String? = nil
        let start = base.addingTimeInterval(20_000)
        return [
            ("all", nil, { _ in true }),
            ("account equality", #Predicate { $0.account == 4 }, { $0.account == 4 }),
            ("account range", #Predicate { $0.account > 1 && $0.account <= 6 }, { $0.account > 1 && $0.account <= 6 }),
            ("accounts", #Predicate { [0, 2, 7].contains($0.account) }, { [0, 2, 7].contains($0.account) }),
            ("no category", #Predicate { $0.category == noCategory }, { $0.category == nil }),
            ("label", #Predicate { $0.labels.contains("b") }, { $0.labels.contains("b") }),
            ("date range", #Predicate { $0.bookedAt >= start }, { $0.bookedAt >= start }),
            ("amount (scan)", #Predicate { $0.amount > 3_000 }, { $0.amount > 3_000 }),
            (
                "mixed", #Predicate { $0.account == 2 && $0.amount < 5_000 },
                { $0.account == 2 && $0.amount < 5_000 }
            ),
            (
                "or", #Predicate { $0.account == 1 || $0.category == "rent" },
                { $0.account == 1 || $0.category == "rent" }
            ),
            ("empty", #Predicate { $0.account > 100 }, { $0.account > 100 }),
        ]
    }

    /// The functions under test, over one predicate.
    struct Computations {
        let count: () throws -> Int
        let sumAmount: () throws -> Int
        let sumLeft: () throws -> Int
        let sumQuantity: () throws -> Int8
        let sumWeight: () throws -> Double
        let minimumAccount: () throws -> Int?
        let maximumAccount: () throws -> Int?
        let minimumQuantity: () throws -> Int8?
        let maximumQuantity: () throws -> Int8?
        let maximumDate: () throws -> Date?
        let minimumCategory: () throws -> String?
        let averageAmount: () throws -> Double?
        let averageQuantity: () throws -> Double?
        let averageWeight: () throws -> Double?
        let distinctAccounts: () throws -> Set<Int>
        let distinctCategories: () throws -> Set<String?>
        let amountByAccount: () throws -> [Int: Int]
        let countByCategory: () throws -> [String?: Int]
        let countByLabel: () throws -> [String: Int]
        let maximumLeftByAccount: () throws -> [Int: Int?]
    }

    static func computations(_ runner: some Runner, predicate: Predicate<LedgerEntry>?) -> Computations {
        Computations(
            count: { try runner.ungrouped(.count, predicate) },
            sumAmount: { try runner.ungrouped(.sum(\.amount), predicate) },
            sumLeft: { try runner.ungrouped(.sum(\.left), predicate) },
            sumQuantity: { try runner.ungrouped(.sum(\.quantity), predicate) },
            sumWeight: { try runner.ungrouped(.sum(\.weight), predicate) },
            minimumAccount: { try runner.ungrouped(.minimum(\.account), predicate) },
            maximumAccount: { try runner.ungrouped(.maximum(\.account), predicate) },
            minimumQuantity: { try runner.ungrouped(.minimum(\.quantity), predicate) },
            maximumQuantity: { try runner.ungrouped(.maximum(\.quantity), predicate) },
            maximumDate: { try runner.ungrouped(.maximum(\.bookedAt), predicate) },
            minimumCategory: { try runner.ungrouped(.minimum(\.category), predicate) },
            averageAmount: { try runner.ungrouped(.average(\.amount), predicate) },
            averageQuantity: { try runner.ungrouped(.average(\.quantity), predicate) },
            averageWeight: { try runner.ungrouped(.average(\.weight), predicate) },
            distinctAccounts: { try runner.ungrouped(.distinct(\.account), predicate) },
            distinctCategories: { try runner.ungrouped(.distinct(\.category), predicate) },
            amountByAccount: { try runner.grouped(.sum(\.amount), predicate, \.account) },
            countByCategory: { try runner.grouped(.count, predicate, \.category) },
            countByLabel: { try runner.groupedByElements(.count, predicate, \.labels) },
            maximumLeftByAccount: { try runner.grouped(.maximum(\.left), predicate, \.account) })
    }

    /// Runs aggregates through one API.
    protocol Runner {
        func ungrouped<R>(_ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?) throws -> R
        func grouped<R, G: Hashable>(
            _ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?,
            _ keyPath: KeyPath<LedgerEntry, G> & Sendable
        ) throws -> [G: R]
        func groupedByElements<R, G: Hashable>(
            _ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?,
            _ keyPath: KeyPath<LedgerEntry, [G]> & Sendable
        ) throws -> [G: R]
    }

    struct ContextRunner: Runner {
        let context: ModelContext

        func ungrouped<R>(_ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?) throws -> R {
            try context.aggregate(aggregate, matching: predicate)
        }

        func grouped<R, G: Hashable>(
            _ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?,
            _ keyPath: KeyPath<LedgerEntry, G> & Sendable
        ) throws -> [G: R] {
            try context.aggregate(aggregate, matching: predicate, groupedBy: keyPath)
        }

        func groupedByElements<R, G: Hashable>(
            _ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?,
            _ keyPath: KeyPath<LedgerEntry, [G]> & Sendable
        ) throws -> [G: R] {
            try context.aggregate(aggregate, matching: predicate, groupedBy: keyPath)
        }
    }

    struct TransactionRunner: Runner {
        let container: ModelContainer

        func ungrouped<R>(_ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?) throws -> R {
            try container.read { txn in try txn.aggregate(aggregate, matching: predicate) }
        }

        func grouped<R, G: Hashable>(
            _ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?,
            _ keyPath: KeyPath<LedgerEntry, G> & Sendable
        ) throws -> [G: R] {
            try container.read { txn in try txn.aggregate(aggregate, matching: predicate, groupedBy: keyPath) }
        }

        func groupedByElements<R, G: Hashable>(
            _ aggregate: Aggregate<LedgerEntry, R>, _ predicate: Predicate<LedgerEntry>?,
            _ keyPath: KeyPath<LedgerEntry, [G]> & Sendable
        ) throws -> [G: R] {
            try container.read { txn in try txn.aggregate(aggregate, matching: predicate, groupedBy: keyPath) }
        }
    }

    /// Checks every computation against `models` filtered by `matches`.
    static func expectAgreement(
        _ computed: Computations, _ models: [LedgerEntry], matches: (LedgerEntry) -> Bool, label: String
    ) throws {
        let matching = models.filter(matches)
        let quantities = matching.compactMap(\.quantity)
        let weights = matching.compactMap(\.weight)
        func average(_ values: [Int]) -> Double? {
            values.isEmpty ? nil : Double(values.reduce(0, +)) / Double(values.count)
        }
        let comment = Comment(rawValue: label)
        #expect(try computed.count() == matching.count, comment)
        #expect(try computed.sumAmount() == matching.map(\.amount).reduce(0, +), comment)
        #expect(try computed.sumLeft() == matching.map(\.left).reduce(0, +), comment)
        let quantitySum = quantities.map(Int.init).reduce(0, +)
        if let narrow = Int8(exactly: quantitySum) {
            #expect(try computed.sumQuantity() == narrow, comment)
        } else {
            #expect(throws: KVStoreError.overflow, comment) { try computed.sumQuantity() }
        }
        #expect(abs(try computed.sumWeight() - weights.reduce(0, +)) < 1e-6, comment)
        #expect(try computed.minimumAccount() == matching.map(\.account).min(), comment)
        #expect(try computed.maximumAccount() == matching.map(\.account).max(), comment)
        #expect(try computed.minimumQuantity() == quantities.min(), comment)
        #expect(try computed.maximumQuantity() == quantities.max(), comment)
        #expect(try computed.maximumDate() == matching.map(\.bookedAt).max(), comment)
        #expect(try computed.minimumCategory() == matching.compactMap(\.category).min(), comment)
        #expect(try computed.averageAmount() == average(matching.map(\.amount)), comment)
        #expect(try computed.averageQuantity() == average(quantities.map(Int.init)), comment)
        let weightAverage = weights.isEmpty ? nil : weights.reduce(0, +) / Double(weights.count)
        let computedWeightAverage = try computed.averageWeight()
        #expect((computedWeightAverage == nil) == (weightAverage == nil), comment)
        if let computedWeightAverage, let weightAverage {
            #expect(abs(computedWeightAverage - weightAverage) < 1e-9, comment)
        }
        #expect(try computed.distinctAccounts() == Set(matching.map(\.account)), comment)
        #expect(try computed.distinctCategories() == Set(matching.map(\.category)), comment)
        #expect(
            try computed.amountByAccount()
                == Dictionary(grouping: matching, by: \.account).mapValues { $0.map(\.amount).reduce(0, +) }, comment)
        #expect(
            try computed.countByCategory() == Dictionary(grouping: matching, by: \.category).mapValues(\.count),
            comment)
        var byLabel: [String: Int] = [:]
        for model in matching {
            for label in Set(model.labels) { byLabel[label, default: 0] += 1 }
        }
        #expect(try computed.countByLabel() == byLabel, comment)
        #expect(
            try computed.maximumLeftByAccount()
                == Dictionary(grouping: matching, by: \.account).mapValues { $0.map(\.left).max() }, comment)
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func aggregatesAgreeWithTheModelsInMemory(seed: UInt64) throws {
        try withContainer(LedgerEntry.self) { container throws in
            let models = Self.entries(count: 300, seed: seed)
            let context = ModelContext(container)
            try context.insert(contentsOf: models)
            try context.save()
            for (label, predicate, matches) in Self.predicates() {
                let transaction = TransactionRunner(container: container)
                try Self.expectAgreement(
                    Self.computations(transaction, predicate: predicate), models, matches: matches,
                    label: "transaction, \(label)")
                let contextRunner = ContextRunner(context: ModelContext(container))
                try Self.expectAgreement(
                    Self.computations(contextRunner, predicate: predicate), models, matches: matches,
                    label: "context, \(label)")
            }
        }
    }

    @Test(arguments: [4 as UInt64, 5])
    func aContextsAggregatesSeeItsUnsavedChanges(seed: UInt64) throws {
        try withContainer(LedgerEntry.self) { container throws in
            var models = Self.entries(count: 200, seed: seed)
            let context = ModelContext(container)
            try context.insert(contentsOf: models)
            try context.save()
            // Unsaved: 20 inserted, 30 changed (accounts, amounts, quantities and categories moved), 25 deleted.
            let inserted = Self.entries(count: 20, seed: seed + 100)
            try context.insert(contentsOf: inserted)
            for position in 0..<30 {
                models[position].account = (models[position].account + 5) % 9
                models[position].amount += 7_000
                models[position].quantity = models[position].quantity.map { $0 / 2 }
                models[position].category = position % 2 == 0 ? nil : "rent"
                context.insert(models[position])
            }
            for model in models[30..<55] { context.delete(model) }
            let current = Array(models[0..<30]) + Array(models[55...]) + inserted
            #expect(try context.fetchCount(FetchDescriptor<LedgerEntry>()) == current.count)
            let runner = ContextRunner(context: context)
            for (label, predicate, matches) in Self.predicates() {
                try Self.expectAgreement(
                    Self.computations(runner, predicate: predicate), current, matches: matches,
                    label: "unsaved, \(label)")
            }
        }
    }

    @Test func anIndexedAttributeIsAggregatedFromItsKeysAlone() throws {
        try withContainer(CountedItem.self) { container throws in
            let context = ModelContext(container)
            let models = ExactIndexReadTests.models()
            try context.insert(contentsOf: models)
            try context.save()
            let owner = ExactIndexReadTests.owners[1]
            var results: [Any] = []
            let decoded = try ExactIndexReadTests.decodes {
                results.append(try context.aggregate(.sum(\CountedItem.group)))
                results.append(try context.aggregate(.maximum(\CountedItem.group)) as Any)
                results.append(
                    try context.aggregate(.minimum(\.group), matching: #Predicate<CountedItem> { $0.group > 2 }) as Any)
                results.append(try context.aggregate(.distinct(\CountedItem.label)))
                results.append(try context.aggregate(.distinct(\CountedItem.ownerID)))
                results.append(
                    try context.aggregate(.average(\.group), matching: #Predicate<CountedItem> { $0.group < 4 }) as Any)
            }
            // The labels include one longer than LMDB's key limit: its cut key reads its models.
            let longLabels = models.filter { $0.label.utf8.count > 400 }.count
            #expect(decoded == longLabels)
            #expect(results[0] as? Int == models.map(\.group).reduce(0, +))
            #expect(results[1] as? Int? == models.map(\.group).max())
            #expect(results[2] as? Int? == models.map(\.group).filter { $0 > 2 }.min())
            #expect(results[3] as? Set<String> == Set(models.map(\.label)))
            #expect(results[4] as? Set<UUID?> == Set(models.map(\.ownerID)))
            let small = models.map(\.group).filter { $0 < 4 }
            #expect(results[5] as? Double? == Double(small.reduce(0, +)) / Double(small.count))
            #expect(try context.explain(.sum(\CountedItem.group)) == "sum(group): index group keys")
            #expect(
                try context.explain(.sum(\.group), matching: #Predicate<CountedItem> { $0.ownerID == owner })
                    .hasPrefix("sum(group): records of index ownerID"))
            #expect(
                try context.explain(.sum(\.group), matching: #Predicate<CountedItem> { $0.score > 1 })
                    .hasPrefix("sum(group): models of"))
            #expect(
                try context.explain(Aggregate<CountedItem, Int>.count, matching: #Predicate { $0.group > 2 })
                    .hasPrefix("count: entries of index group: range ("))
            #expect(
                try context.explain(Aggregate<CountedItem, Int>.count, matching: #Predicate { $0.score > 1 })
                    .hasPrefix("count: models of index score: range ("))
            #expect(try context.explain(Aggregate<CountedItem, Int>.count) == "count: the table's count of records")
            // Another index's exact plan reads records, decoding one model to check the record's field.
            let recordDecodes = try ExactIndexReadTests.decodes {
                let sum = try context.aggregate(
                    .sum(\.group), matching: #Predicate<CountedItem> { $0.ownerID == owner })
                #expect(sum == models.filter { $0.ownerID == owner }.map(\.group).reduce(0, +))
            }
            #expect(recordDecodes == 1)
        }
    }

    @Test func integerSumsThatDoNotFitThrowWhateverTheOrder() throws {
        try withContainer(LedgerEntry.self) { container throws in
            let context = ModelContext(container)
            // 100 + 100 - 100 fits Int8 only as a whole: the order of reading must not matter.
            let quantities: [Int8] = [100, 100, -100]
            for (position, quantity) in quantities.enumerated() {
                context.insert(
                    LedgerEntry(
                        account: position, amount: .max, quantity: quantity, weight: nil, category: nil, labels: [],
                        bookedAt: Self.base, left: 0, right: 0))
            }
            try context.save()
            #expect(try context.aggregate(.sum(\LedgerEntry.quantity)) == 100)
            let error = #expect(throws: KVStoreError.overflow) { try context.aggregate(.sum(\LedgerEntry.amount)) }
            #expect(error?.message.contains("does not fit Int") == true)
            #expect(try context.aggregate(.average(\LedgerEntry.amount)) == Double(Int.max))
            context.insert(
                LedgerEntry(
                    account: 9, amount: 0, quantity: 100, weight: nil, category: nil, labels: [], bookedAt: Self.base,
                    left: 0, right: 0))
            #expect(throws: KVStoreError.overflow) { try context.aggregate(.sum(\LedgerEntry.quantity)) }
            #expect(
                try context.aggregate(.sum(\.quantity), matching: #Predicate<LedgerEntry> { $0.account < 9 }) == 100)
        }
    }

    @Test func aggregatesOfNoModelsAreEmpty() throws {
        try withContainer(LedgerEntry.self) { container throws in
            let context = ModelContext(container)
            #expect(try context.aggregate(Aggregate<LedgerEntry, Int>.count) == 0)
            #expect(try context.aggregate(.sum(\LedgerEntry.amount)) == 0)
            #expect(try context.aggregate(.sum(\LedgerEntry.weight)) == 0)
            #expect(try context.aggregate(.minimum(\LedgerEntry.account)) == nil)
            #expect(try context.aggregate(.maximum(\LedgerEntry.quantity)) == nil)
            #expect(try context.aggregate(.average(\LedgerEntry.amount)) == nil)
            #expect(try context.aggregate(.distinct(\LedgerEntry.category)).isEmpty)
            #expect(try context.aggregate(.count, groupedBy: \LedgerEntry.account).isEmpty)
        }
    }

    @Test func referenceModelAggregatesSeeTheContextsUnsavedChanges() throws {
        try withContainer(LedgerLine.self) { container throws in
            let context = ModelContext(container)
            let lines = (0..<40).map { LedgerLine(account: $0 % 4, amount: $0 * 10) }
            for line in lines { context.insert(line) }
            try context.save()
            // Changed, deleted and inserted, none of it saved.
            lines[0].amount = 1_000
            lines[1].account = 3
            context.delete(lines[2])
            context.insert(LedgerLine(account: 1, amount: 5))
            let current = Array(lines[0..<2]) + Array(lines[3...]) + [LedgerLine(account: 1, amount: 5)]
            #expect(try context.aggregate(.sum(\LedgerLine.amount)) == current.map(\.amount).reduce(0, +))
            #expect(try context.aggregate(.count, matching: #Predicate<LedgerLine> { $0.account == 3 }) == 11)
            let accountOne = try context.aggregate(.sum(\LedgerLine.amount), matching: #Predicate { $0.account == 1 })
            #expect(accountOne == current.filter { $0.account == 1 }.map(\.amount).reduce(0, +))
            let byAccount: [Int: Int] = try context.aggregate(.sum(\LedgerLine.amount), groupedBy: \.account)
            var expectedByAccount: [Int: Int] = [:]
            for line in current { expectedByAccount[line.account, default: 0] += line.amount }
            #expect(byAccount == expectedByAccount)
            #expect(
                try context.aggregate(.maximum(\.amount), matching: #Predicate<LedgerLine> { $0.amount < 2_000 })
                    == 1_000)
            context.rollback()
            #expect(try context.aggregate(.sum(\LedgerLine.amount)) == lines.map(\.amount).reduce(0, +))
        }
    }
}

/// Unsigned counters, indexed, to sum from the keys of their indexes.
struct UnsignedCounter: Model {
    var id = UUID.timeOrdered()
    var small: UInt8
    var big: UInt64

    static let entity = Entity<UnsignedCounter>(indexes: [.index(\.small), .index(\.big)])
}

/// Integer sums read from an index's keys in place: unsigned types up to `UInt64.max`, and the type's range checked.
@Suite struct IndexKeySumTests {
    @Test func unsignedSumsFromKeysAreExactAndOverflowAsTheirType() throws {
        try withContainer(UnsignedCounter.self) { container throws in
            let context = ModelContext(container)
            let half = UInt64.max / 2
            for (small, big) in [(UInt8(255), half), (200, half), (0, 1)] {
                context.insert(UnsignedCounter(small: small, big: big))
            }
            try context.save()
            #expect(try context.explain(.sum(\UnsignedCounter.big)) == "sum(big): index big keys")
            #expect(try context.aggregate(.sum(\UnsignedCounter.big)) == UInt64.max)
            #expect(try context.aggregate(.average(\UnsignedCounter.big)) == Double(UInt64.max) / 3)
            #expect(throws: KVStoreError.overflow) { try context.aggregate(.sum(\UnsignedCounter.small)) }
            context.insert(UnsignedCounter(small: 1, big: 1))
            try context.save()
            #expect(throws: KVStoreError.overflow) { try context.aggregate(.sum(\UnsignedCounter.big)) }
            #expect(
                try context.aggregate(.sum(\.big), matching: #Predicate<UnsignedCounter> { $0.small == 0 }) == 1)
        }
    }

    /// A key of the right length whose integer does not fit the attribute's type is damage, not a value.
    @Test func aKeyOutsideTheTypesRangeIsReportedAsDamage() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        do {
            let container = try ModelContainer(for: UnsignedCounter.self, configuration: configuration)
            defer { try? container.close() }
            let context = ModelContext(container)
            context.insert(UnsignedCounter(small: 1, big: 1))
            try context.save()
        }
        do {
            // The key of 300 (present marker, eight big-endian bytes) in the index of a UInt8.
            let environment = try Environment.open(path: directory.path)
            defer { try? environment.close() }
            let table = try environment.openTable(
                named: Catalog.indexTableName("UnsignedCounter", "small"), options: [.dupSort, .dupFixed])
            let key: [UInt8] = [IndexKey.present, 0, 0, 0, 0, 0, 0, 1, 44]
            try environment.write { txn in try txn.put(Array(repeating: 7, count: 16), forKey: key, in: table) }
        }
        let container = try ModelContainer(for: UnsignedCounter.self, configuration: configuration)
        defer { try? container.close() }
        let error = try #require(throws: KVStoreError.self) {
            try ModelContext(container).aggregate(.sum(\UnsignedCounter.small))
        }
        #expect(error == .damaged)
        #expect(error.message.contains("A key of the index small of UnsignedCounter holds no value"))
    }
}

/// An aggregate read from an index whose key is damaged stops with a typed error that says what to do.
@Suite struct AggregateDamageTests {
    @Test func aKeyThatHoldsNoValueOfTheAttributesTypeIsReportedAsDamage() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        do {
            let container = try ModelContainer(for: CountedItem.self, configuration: configuration)
            defer { try? container.close() }
            let context = ModelContext(container)
            try context.insert(contentsOf: ExactIndexReadTests.models().prefix(20))
            try context.save()
            #expect(try context.aggregate(.sum(\CountedItem.group)) > 0)
        }
        do {
            // A key of two bytes in the index of an integer, whose keys are nine.
            let environment = try Environment.open(path: directory.path)
            defer { try? environment.close() }
            let table = try environment.openTable(
                named: Catalog.indexTableName("CountedItem", "group"), options: [.dupSort, .dupFixed])
            try environment.write { txn in try txn.put(Array(repeating: 7, count: 16), forKey: [1, 2], in: table) }
        }
        let container = try ModelContainer(for: CountedItem.self, configuration: configuration)
        defer { try? container.close() }
        let error = try #require(throws: KVStoreError.self) {
            try ModelContext(container).aggregate(.sum(\CountedItem.group))
        }
        #expect(error == .damaged)
        #expect(
            error.message.contains("A key of the index group of CountedItem holds no value of the attribute's type"))
        #expect(error.message.contains("kvtool check"))
    }
}

/// Integer sums read from records' fields in place, the records found through another attribute's index: signed and
/// unsigned types of every width to 64 bits, their ranges, and overflow as their type.
@Suite struct RecordFieldSumTests {
    @Test func sumsReadFromRecordsMatchTheModels() throws {
        try withContainer(JournalLine.self) { container throws in
            let context = ModelContext(container)
            let half = UInt64.max / 2
            let lines = [
                JournalLine(group: 1, small: -128, medium: -5, big: half),
                JournalLine(group: 1, small: 127, medium: 7, big: half),
                JournalLine(group: 1, small: -3, medium: Int32.min + 10, big: 1),
                JournalLine(group: 2, small: 100, medium: 1, big: 9),
            ]
            for line in lines { context.insert(line) }
            try context.save()
            let inGroup = #Predicate<JournalLine> { $0.group == 1 }
            #expect(try context.explain(.sum(\JournalLine.small), matching: inGroup).contains("records of index group"))
            #expect(try context.aggregate(.sum(\JournalLine.small), matching: inGroup) == -4)
            #expect(try context.aggregate(.sum(\JournalLine.medium), matching: inGroup) == Int32.min + 12)
            #expect(try context.aggregate(.sum(\JournalLine.big), matching: inGroup) == UInt64.max)
            #expect(try context.aggregate(.average(\JournalLine.small), matching: inGroup) == -4.0 / 3)
            // One more line takes each sum past its type.
            context.insert(JournalLine(group: 1, small: -125, medium: -13, big: 1))
            try context.save()
            #expect(throws: KVStoreError.overflow) {
                try context.aggregate(.sum(\JournalLine.small), matching: inGroup)
            }
            #expect(throws: KVStoreError.overflow) {
                try context.aggregate(.sum(\JournalLine.medium), matching: inGroup)
            }
            #expect(throws: KVStoreError.overflow) { try context.aggregate(.sum(\JournalLine.big), matching: inGroup) }
        }
    }

    /// A record whose integer does not fit the type a later version reads is not added in place: the model is
    /// decoded, and its decoding reports the record.
    @Test func aValueOutsideTheTypesRangeIsDecoded() throws {
        let directory = StoreDirectory()
        do {
            let old = try ModelContainer(
                for: WideJournalLine.self, configuration: ModelConfiguration(path: directory.path))
            let context = ModelContext(old)
            // Between the first and last records, which the open decodes to check the model against the store.
            context.insert(WideJournalLine(group: 1, small: 100))
            context.insert(WideJournalLine(group: 1, small: 300))
            context.insert(WideJournalLine(group: 1, small: 100))
            try context.save()
            try old.close()
        }
        let container = try ModelContainer(
            for: JournalLine.self, configuration: ModelConfiguration(path: directory.path))
        defer { try? container.close() }
        let error = try #require(throws: KVStoreError.self) {
            try ModelContext(container).aggregate(.sum(\JournalLine.small), matching: #Predicate { $0.group == 1 })
        }
        #expect(error == .corruptRecord)
        #expect(error.message.contains("The stored Journal"))
    }
}

/// A line of a journal: integers of several widths, indexed by group only.
struct JournalLine: Model {
    var id = UUID.timeOrdered()
    var group: Int
    var small: Int8
    var medium: Int32
    var big: UInt64

    static let entity = Entity<JournalLine>(name: "Journal", indexes: [.index(\.group)])
}

/// An earlier version of ``JournalLine`` whose `small` was an `Int`.
struct WideJournalLine: Model {
    var id = UUID.timeOrdered()
    var group: Int
    var small: Int
    var medium: Int32 = 0
    var big: UInt64 = 0

    static let entity = Entity<WideJournalLine>(name: "Journal", indexes: [.index(\.group)])
}
