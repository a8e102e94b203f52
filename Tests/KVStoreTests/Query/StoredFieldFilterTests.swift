import Foundation
import LMDB
import Synchronization
import TestSupport
import Testing

@testable import KVStore

/// A model without indexes, so that every fetch scans, with a stored attribute of each type a scan's field test reads.
struct ScanItem: Model, Equatable {
    enum Kind: String, Codable {
        case open, closed
    }

    var id = UUID.timeOrdered()
    var title: String
    var note: String?
    var count: Int
    var limit: Int?
    var isOpen: Bool
    var flag: Bool?
    var score: Double
    var weight: Double?
    var day: Date
    var due: Date?
    var ownerID: UUID
    var parentID: UUID?
    var kind: Kind
    var small: Int8
    var tags: [String]

    static let entity = Entity<ScanItem>()
}

/// Counts the models of ``CountedScanItem`` decoded, through a decoding that reads as the synthesized one does.
let countedScanDecodes = Atomic<Int>(0)

/// A model whose decoding counts itself, to tell how many records a scan decoded.
struct CountedScanItem: Model {
    var id = UUID.timeOrdered()
    var group: Int

    static let entity = Entity<CountedScanItem>()

    init(group: Int) {
        self.group = group
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        group = try container.decode(Int.self, forKey: .group)
        countedScanDecodes.add(1, ordering: .relaxed)
    }

    private enum CodingKeys: String, CodingKey {
        case id, group
    }
}

/// A model whose coding keys give each of two properties the other's name: the field named `first` holds `second`.
struct SwappedItem: Model {
    var id = UUID.timeOrdered()
    var first: String
    var second: String

    static var entity: Entity<SwappedItem> { Entity<SwappedItem>() }

    private enum CodingKeys: String, CodingKey {
        case id
        case first = "second"
        case second = "first"
    }
}

/// ``SwappedItem`` with the stored-field tests turned off.
struct SwappedUntestedItem: Model {
    var id = UUID.timeOrdered()
    var first: String
    var second: String

    static var entity: Entity<SwappedUntestedItem> {
        var entity = Entity<SwappedUntestedItem>()
        entity.testsStoredFields = false
        return entity
    }

    private enum CodingKeys: String, CodingKey {
        case id
        case first = "second"
        case second = "first"
    }
}

/// Scans that test stored fields return what the predicate evaluated on every model returns.
@Suite struct StoredFieldFilterTests {
    static let strings = ["", "a", "b", "A", "é", "e\u{301}", "\u{0}", "a longer string than fifteen bytes"]
    static let owners = (0..<3).map { _ in UUID() }
    static let doubles = [-0.0, 0.0, 1.5, -1, .infinity, 2.25]
    static let days = (0..<4).map { Date(timeIntervalSinceReferenceDate: 800_000_000 + Double($0) * 86_400) }

    static func randomItem(_ random: inout SplitMix64) -> ScanItem {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        func maybe<T>(_ value: T) -> T? { Int.random(in: 0..<3, using: &random) == 0 ? nil : value }
        return ScanItem(
            title: pick(strings), note: maybe(pick(strings)), count: pick([-2, -1, 0, 1, 2, 3, .min, .max]),
            limit: maybe(Int.random(in: -1...2, using: &random)), isOpen: Bool.random(using: &random),
            flag: maybe(Bool.random(using: &random)), score: pick(doubles), weight: maybe(pick(doubles)),
            day: pick(days), due: maybe(pick(days)), ownerID: pick(owners), parentID: maybe(pick(owners)),
            kind: pick([.open, .closed]), small: Int8.random(in: -2...2, using: &random),
            tags: Bool.random(using: &random) ? ["x"] : [])
    }

    /// A predicate of a shape the scan compiles, or now and then of one it does not, with constants drawn.
    static func randomPredicate(_ random: inout SplitMix64) -> (label: String, predicate: Predicate<ScanItem>) {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        let string = pick(strings)
        let optionalString: String? = Bool.random(using: &random) ? nil : pick(strings)
        let int = pick([-2, 0, 1, 3, Int.max])
        let optionalInt: Int? = Bool.random(using: &random) ? nil : Int.random(in: -1...2, using: &random)
        let double = pick(doubles)
        let day = pick(days)
        let optionalDay: Date? = Bool.random(using: &random) ? nil : pick(days)
        let owner = pick(owners)
        let parent: UUID? = Bool.random(using: &random) ? nil : pick(owners)
        let kind = pick([ScanItem.Kind.open, .closed])
        let small = Int8.random(in: -2...2, using: &random)
        let flag: Bool? = Bool.random(using: &random) ? nil : Bool.random(using: &random)
        switch Int.random(in: 0..<27, using: &random) {
        case 0: return ("title ==", #Predicate { $0.title == string })
        case 1: return ("title <", #Predicate { $0.title < string })
        case 2: return ("constant >= title", #Predicate { string >= $0.title })
        case 3: return ("note ==", #Predicate { $0.note == optionalString })
        case 4: return ("note != nil", #Predicate { $0.note != nil })
        case 5: return ("count >", #Predicate { $0.count > int })
        case 6: return ("count <=, flipped", #Predicate { int <= $0.count })
        case 7: return ("limit == optional", #Predicate { $0.limit == optionalInt })
        case 8: return ("isOpen", #Predicate { $0.isOpen })
        case 9: return ("!isOpen || flag", #Predicate { !$0.isOpen || $0.flag == flag })
        case 10: return ("score >=", #Predicate { $0.score >= double })
        case 11: return ("score ==", #Predicate { $0.score == double })
        case 12: return ("weight == nil", #Predicate { $0.weight == nil })
        case 13: return ("day < && due ==", #Predicate { $0.day < day && $0.due == optionalDay })
        case 14: return ("ownerID ==", #Predicate { $0.ownerID == owner })
        case 15: return ("parentID !=", #Predicate { $0.parentID != parent })
        case 16: return ("!(ownerID != ...)", #Predicate { !($0.ownerID != owner) })
        case 17: return ("kind ==", #Predicate { $0.kind == kind })
        case 18: return ("small >", #Predicate { $0.small > small })
        case 19: return ("count == base + 1", #Predicate { $0.count == int - 1 })
        case 20:
            return (
                "(a && b) || !(c)",
                #Predicate { ($0.isOpen && $0.count >= int) || !($0.title == string) }
            )
        case 21: return ("|| with a string function", #Predicate { $0.title.starts(with: string) || $0.isOpen })
        case 22: return ("&& with contains", #Predicate { $0.tags.contains("x") && $0.score < double })
        case 23: return ("parentID ==", #Predicate { $0.parentID == parent })
        case 24: return ("!(parentID == ...)", #Predicate { !($0.parentID == parent) })
        case 25:
            return (
                "!(ownerID == ...) && !(parentID != ...)",
                #Predicate { !($0.ownerID == owner) && !($0.parentID != parent) }
            )
        default: return ("true && ownerID", #Predicate { true && $0.ownerID != owner })
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomScansAgreeWithThePredicateEvaluated(seed: UInt64) throws {
        try withContainer(ScanItem.self) { container throws in
            var random = SplitMix64(seed: seed)
            let context = ModelContext(container)
            let items = (0..<300).map { _ in Self.randomItem(&random) }
            for item in items { context.insert(item) }
            try context.save()
            for _ in 0..<200 {
                let (label, predicate) = Self.randomPredicate(&random)
                let expected = try items.filter { try predicate.evaluate($0) }.map(\.id)
                let descriptor = FetchDescriptor(predicate: predicate)
                #expect(try context.explain(descriptor) == "scan", "\(label)")
                #expect(Set(try context.fetch(descriptor).map(\.id)) == Set(expected), "\(label)")
                #expect(try context.fetchCount(descriptor) == expected.count, "\(label)")
                var limited = descriptor
                limited.fetchLimit = 2
                #expect(try context.fetch(limited).map(\.id) == Array(expected.sorted().prefix(2)), "\(label)")
            }
        }
    }

    @Test func theShapesCompiled() throws {
        try withContainer(ScanItem.self) { container throws in
            let store = try container.store(for: ScanItem.self)
            func compiles(_ predicate: Predicate<ScanItem>) -> Bool {
                StoredFieldFilter.compile(predicate, fieldName: store.storedFieldName, fields: store.fields) != nil
            }
            let owner = UUID()
            // No record yet: the field table has no ids, so nothing compiles.
            #expect(!compiles(#Predicate { $0.ownerID == owner }))
            var random = SplitMix64(seed: 4)
            let context = ModelContext(container)
            context.insert(Self.randomItem(&random))
            try context.save()
            #expect(compiles(#Predicate { $0.ownerID == owner }))
            #expect(compiles(#Predicate { !($0.ownerID != owner) }))
            #expect(compiles(#Predicate { $0.count > 3 && ($0.isOpen || $0.title == "a") }))
            #expect(compiles(#Predicate { 3 < $0.count }))
            let past = Date.distantPast
            #expect(compiles(#Predicate { $0.day >= past || $0.score < 2 }))
            // Types not read in place, string functions, arrays, computed values: the models are decoded.
            let open = ScanItem.Kind.open
            #expect(!compiles(#Predicate { $0.kind == open }))
            #expect(!compiles(#Predicate { $0.small > 1 }))
            #expect(!compiles(#Predicate { $0.title.starts(with: "a") }))
            #expect(!compiles(#Predicate { $0.count > 3 && $0.tags.contains("x") }))
            #expect(!compiles(#Predicate { $0.count == $0.small.hashValue }))
            #expect(!compiles(#Predicate { $0.title.count == 3 }))
        }
    }

    /// Past its first checked records, a scan decodes only the records its test matches.
    @Test func aScanDecodesOnlyTheMatchesPastItsCheckedRecords() throws {
        try withContainer(CountedScanItem.self) { container throws in
            let context = ModelContext(container)
            for group in 0..<200 { context.insert(CountedScanItem(group: group % 50)) }
            try context.save()
            countedScanDecodes.store(0, ordering: .relaxed)
            let found = try context.fetch(FetchDescriptor<CountedScanItem>(predicate: #Predicate { $0.group == 7 }))
            #expect(found.count == 4)
            let decoded = countedScanDecodes.load(ordering: .relaxed)
            // The 32 records checked, and the matches past them.
            #expect(decoded == EntityStore<CountedScanItem>.checkedRecords + 3)
        }
    }

    /// Fields stored under another property's name: a match of the test that its model does not match turns the
    /// test off and the scan starts again, decoding every record.
    @Test func fieldsUnderAnotherNameStartTheScanAgain() throws {
        try withContainer(SwappedItem.self) { container throws in
            let context = ModelContext(container)
            // The first records hold equal values in both fields, so their checks pass.
            for _ in 0..<40 { context.insert(SwappedItem(first: "same", second: "same")) }
            let wanted = (0..<5).map { _ in SwappedItem(first: "x", second: "y") }
            for item in wanted { context.insert(item) }
            // The test reads `second` under `first`'s name, and matches this record for `first == "x"`.
            context.insert(SwappedItem(first: "z", second: "x"))
            try context.save()
            let descriptor = FetchDescriptor<SwappedItem>(predicate: #Predicate { $0.first == "x" })
            #expect(Set(try context.fetch(descriptor).map(\.id)) == Set(wanted.map(\.id)))
            #expect(try context.fetchCount(descriptor) == 5)
        }
    }

    /// With the tests turned off, such a model's scans decode every record.
    @Test func testsStoredFieldsOff() throws {
        try withContainer(SwappedUntestedItem.self) { container throws in
            let context = ModelContext(container)
            for _ in 0..<40 { context.insert(SwappedUntestedItem(first: "same", second: "same")) }
            let wanted = (0..<5).map { _ in SwappedUntestedItem(first: "x", second: "y") }
            for item in wanted { context.insert(item) }
            try context.save()
            let descriptor = FetchDescriptor<SwappedUntestedItem>(predicate: #Predicate { $0.first == "x" })
            #expect(Set(try context.fetch(descriptor).map(\.id)) == Set(wanted.map(\.id)))
            #expect(try context.fetchCount(descriptor) == 5)
        }
    }

    /// A damaged record is decoded, not passed over: the scan reports it.
    @Test func aDamagedRecordIsReported() throws {
        try withContainer(ScanItem.self) { container throws in
            var random = SplitMix64(seed: 9)
            let context = ModelContext(container)
            let items = (0..<60).map { _ in Self.randomItem(&random) }
            for item in items { context.insert(item) }
            try context.save()
            let damaged = items[50]
            let store = try container.store(for: ScanItem.self)
            try container.environment.write { txn throws in
                var bytes = try #require(try withKey(damaged.id) { try txn.value(forKey: $0, in: store.records) })
                bytes[bytes.count / 2] ^= 0x40
                try withKey(damaged.id) { key throws in try txn.put(bytes, forKey: key, in: store.records) }
            }
            let owner = Self.owners[0]
            let descriptor = FetchDescriptor<ScanItem>(predicate: #Predicate { $0.ownerID == owner })
            let error = try #require(throws: KVStoreError.self) { try context.fetch(descriptor) }
            #expect(error == .damaged)
            #expect(error.id == damaged.id)
            #expect(throws: KVStoreError.damaged) { try context.fetchCount(descriptor) }
        }
    }

    /// Records written before an optional attribute existed lack its field: the test reads `nil` there, as the
    /// model's decoding does.
    @Test func aMissingOptionalFieldReadsNil() throws {
        let directory = StoreDirectory()
        let container = try Self.reopen(
            directory.path, writtenWith: (0..<50).map { OldScanItem(count: $0) }, as: NewScanItem.self)
        defer { try? container.close() }
        let context = ModelContext(container)
        context.insert(NewScanItem(count: 100, note: "new"))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<NewScanItem>(predicate: #Predicate { $0.note == nil })) == 50)
        let noted = try context.fetch(FetchDescriptor<NewScanItem>(predicate: #Predicate { $0.note != nil }))
        #expect(noted.map(\.count) == [100])
    }
}

extension StoredFieldFilterTests {
    /// UUIDs are compared as their stored bytes: a record written before its `UUID?` field existed reads `nil`, a
    /// null reads `nil`, and each negated form finds what its predicate evaluated finds.
    @Test func uuidFieldsComparedInPlace() throws {
        let directory = StoreDirectory()
        let container = try Self.reopen(
            directory.path, writtenWith: (0..<40).map { OldOwnedItem(count: $0) }, as: NewOwnedItem.self)
        defer { try? container.close() }
        let context = ModelContext(container)
        let owner = UUID()
        let other = UUID()
        context.insert(NewOwnedItem(count: 100, ownerID: owner))
        context.insert(NewOwnedItem(count: 101, ownerID: nil))
        context.insert(NewOwnedItem(count: 102, ownerID: other))
        try context.save()
        func counts(_ predicate: Predicate<NewOwnedItem>) throws -> [Int] {
            let descriptor = FetchDescriptor(predicate: predicate)
            #expect(try context.explain(descriptor) == "scan")
            return try context.fetch(descriptor).map(\.count).sorted()
        }
        let none: UUID? = nil
        #expect(try counts(#Predicate { $0.ownerID == owner }) == [100])
        #expect(try counts(#Predicate { !($0.ownerID != owner) }) == [100])
        #expect(try counts(#Predicate { $0.ownerID != owner }).count == 42)
        #expect(try counts(#Predicate { !($0.ownerID == owner) }) == (0..<40).map { $0 } + [101, 102])
        #expect(try counts(#Predicate { $0.ownerID == none }) == (0..<40).map { $0 } + [101])
        #expect(try counts(#Predicate { $0.ownerID != nil }) == [100, 102])
        #expect(try counts(#Predicate { !($0.ownerID == nil) }) == [100, 102])
    }

    /// A container for `New` on the store at `path`, which a container for `Old`, an earlier version of the entity,
    /// wrote `models` to and closed.
    static func reopen<Old: Model, New: Model>(
        _ path: String, writtenWith models: [Old], as _: New.Type
    ) throws -> ModelContainer {
        let old = try ModelContainer(for: Old.self, configuration: ModelConfiguration(path: path))
        let context = ModelContext(old)
        for model in models { context.insert(model) }
        try context.save()
        try old.close()
        return try ModelContainer(for: New.self, configuration: ModelConfiguration(path: path))
    }

    /// Integers stored in a field a later version reads as `Double`: the test cannot read them in place, so the
    /// scan decodes those records, and the model reads them as `Double`.
    @Test func aValueInAnotherEncodingIsDecoded() throws {
        let directory = StoreDirectory()
        let container = try Self.reopen(
            directory.path, writtenWith: (0..<40).map { IntScoreItem(score: $0) }, as: DoubleScoreItem.self)
        defer { try? container.close() }
        let context = ModelContext(container)
        context.insert(DoubleScoreItem(score: 38.5))
        try context.save()
        let high = FetchDescriptor<DoubleScoreItem>(predicate: #Predicate { $0.score > 37.5 })
        #expect(try context.fetch(high).map(\.score).sorted() == [38, 38.5, 39])
        #expect(try context.fetchCount(high) == 3)
    }
}

/// A score stored as an integer.
struct IntScoreItem: Model {
    var id = UUID.timeOrdered()
    var score: Int

    static let entity = Entity<IntScoreItem>(name: "Scored")
}

/// The same field read as a `Double`.
struct DoubleScoreItem: Model {
    var id = UUID.timeOrdered()
    var score: Double

    static let entity = Entity<DoubleScoreItem>(name: "Scored")
}

/// A model's first version, without `ownerID`.
struct OldOwnedItem: Model {
    var id = UUID.timeOrdered()
    var count: Int

    static let entity = Entity<OldOwnedItem>(name: "OwnedVersioned")
}

/// The next version, with an optional `ownerID` after `count`.
struct NewOwnedItem: Model {
    var id = UUID.timeOrdered()
    var count: Int
    var ownerID: UUID?

    static let entity = Entity<NewOwnedItem>(name: "OwnedVersioned")
}

/// A model's first version, without `note`.
struct OldScanItem: Model {
    var id = UUID.timeOrdered()
    var count: Int

    static let entity = Entity<OldScanItem>(name: "ScanVersioned")
}

/// The next version, with an optional `note`.
struct NewScanItem: Model {
    var id = UUID.timeOrdered()
    var count: Int
    var note: String?

    static let entity = Entity<NewScanItem>(name: "ScanVersioned")
}

// Example: begin scan tests off
struct Subscriber: Model {
    var id = UUID.timeOrdered()
    var email: String

    init(email: String) {
        self.email = email
    }

    // The stored email keeps its capitals; the model reads it lowercased.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        email = try container.decode(String.self, forKey: .email).lowercased()
    }

    static var entity: Entity<Subscriber> {
        var entity = Entity<Subscriber>()
        entity.testsStoredFields = false  // scans decode every model and evaluate the predicate on it
        return entity
    }
}
// Example: end scan tests off

extension StoredFieldFilterTests {
    /// A model whose decoding normalizes a value, with the tests off: its scans find what its models hold.
    @Test func aNormalizingModelWithTheTestsOff() throws {
        try withContainer(Subscriber.self) { container throws in
            let context = ModelContext(container)
            for index in 0..<40 { context.insert(Subscriber(email: "m\(index)@example.org")) }
            context.insert(Subscriber(email: "Ann@Example.org"))
            try context.save()
            let ann = FetchDescriptor<Subscriber>(predicate: #Predicate { $0.email == "ann@example.org" })
            #expect(try context.fetch(ann).map(\.email) == ["ann@example.org"])
            #expect(try context.fetchCount(ann) == 1)
        }
    }

    @Test func theArticleShowsTheExampleAsTested() throws {
        #expect(try documentationDifferences([("scan tests off", 0)], testedIn: #filePath) == [])
    }
}
