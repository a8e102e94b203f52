import Foundation
import KVStore
import KVStoreInspection
import LMDB
import TestSupport
import Testing

@testable import KVToolCore

/// A model with a field of every type the record format stores, an external value and relationships.
struct Everything: Model {
    /// A nested value.
    struct Part: Codable {
        var label: String
        var weights: [Double]
        var flag: Bool?
        var stamp: Date
        var byte: UInt8
    }

    /// A raw-value enum, stored as its raw value.
    enum Tone: String, Codable, CaseIterable, IndexKeyEncodable {
        case low, middle, high
    }

    var id = UUID.timeOrdered()
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var int: Int
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var uint: UInt
    var float: Float
    var double: Double
    var flag: Bool
    var text: String
    var date: Date
    var uuid: UUID
    var data: Data
    var url: URL
    var decimal: Decimal
    var ints: [Int]
    var texts: [String]
    var part: Part
    var parts: [Part]
    var byName: [String: Int]
    var byNumber: [Int: String]
    var maybeInt: Int?
    var maybeText: String?
    var maybePart: Part?
    var tone: Tone
    var code: String
    var blob = ExternalData()
    var ownerID: UUID?
    var tagIDs: [UUID] = []

    static let entity = Entity<Everything>(
        indexes: [.unique(\.code), .index(\.int32), .index(\.date), .index(\.tone)],
        relationships: [
            .toOne("owner", \.ownerID, to: Owner.self, inverse: "items"),
            .toMany("tags", \.tagIDs, to: Label.self),
        ],
        externalStorage: [.attribute(\.blob)])
}

/// The parent of ``Everything`` records.
struct Owner: Model {
    var id = UUID.timeOrdered()
    var name: String

    static let entity = Entity<Owner>(relationships: [
        .toMany("items", of: Everything.self, inverse: \.ownerID, deleteRule: .cascade)
    ])
}

/// What ``Everything`` records are tagged with.
struct Label: Model {
    var id = UUID.timeOrdered()
    var text: String
}

/// Export, import into a new store and export again give the same lines, for random stores of every kind of value.
@Suite struct RoundTripPropertyTests {

    /// A store of random owners, labels and records, with a large external value in one of them.
    static func makeStore(at path: String, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let owners = (0..<3).map { Owner(name: "Owner \($0) \(random.text())") }
        let labels = (0..<4).map { _ in Label(text: random.text()) }
        var records: [Everything] = []
        for number in 0..<10 {
            let size = number == 0 ? Int.random(in: (2 << 20)...(4 << 20), using: &random) : random.pick([0, 1, 5000])
            records.append(
                Everything(
                    int8: random.integer(Int8.self), int16: random.integer(Int16.self),
                    int32: random.integer(Int32.self), int64: random.integer(Int64.self), int: random.integer(Int.self),
                    uint8: random.integer(UInt8.self), uint16: random.integer(UInt16.self),
                    uint32: random.integer(UInt32.self), uint64: random.integer(UInt64.self),
                    uint: random.integer(UInt.self), float: random.float(), double: random.double(),
                    flag: random.chance(50), text: random.text(), date: random.date(),
                    uuid: UUID(), data: random.bytes(Int.random(in: 0...40, using: &random)),
                    url: random.pick([
                        URL(fileURLWithPath: "/tmp/a b/ç"),
                        URL(string: "https://example.com/p?q=1&r=%20") ?? URL(fileURLWithPath: "/"),
                        URL(string: "mailto:someone@example.com") ?? URL(fileURLWithPath: "/"),
                    ]),
                    decimal: random.pick([
                        Decimal(string: "12.345") ?? 0, Decimal(-7),
                        Decimal(sign: .minus, exponent: -20, significand: 3),
                        Decimal(string: "79228162514264337593543950335") ?? 0, 0,
                    ]),
                    ints: (0..<Int.random(in: 0...4, using: &random)).map { _ in random.integer(Int.self) },
                    texts: (0..<Int.random(in: 0...3, using: &random)).map { _ in random.text() },
                    part: random.part(), parts: (0..<Int.random(in: 0...2, using: &random)).map { _ in random.part() },
                    byName: Dictionary(
                        (0..<Int.random(in: 0...3, using: &random)).map {
                            ("\(random.text())\($0)", random.integer(Int.self))
                        },
                        uniquingKeysWith: { first, _ in first }),
                    byNumber: Dictionary(
                        (0..<Int.random(in: 0...3, using: &random)).map { _ in (random.integer(Int.self), random.text())
                        },
                        uniquingKeysWith: { first, _ in first }),
                    maybeInt: random.chance(50) ? random.integer(Int.self) : nil,
                    maybeText: random.chance(50) ? random.text() : nil,
                    maybePart: random.chance(50) ? random.part() : nil, tone: random.pick(Everything.Tone.allCases),
                    code: "code \(number) \(random.text())", blob: ExternalData(random.bytes(size)),
                    ownerID: random.chance(80) ? random.pick(owners).id : nil,
                    tagIDs: (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(labels).id }))
        }
        let container = try ModelContainer(
            for: Owner.self, Label.self, Everything.self,
            configuration: ModelConfiguration(path: path, durability: .off))
        try container.write { txn in
            for owner in owners { try txn.insert(owner) }
            for label in labels { try txn.insert(label) }
            for record in records { try txn.insert(record) }
        }
        try container.close()
    }

    /// Every record of the store as a value tree, by entity and ID.
    static func records(_ path: String) throws -> [String: [UUID: RecordValue]] {
        let store = try InspectedStore.open(path)
        defer { store.close() }
        var all: [String: [UUID: RecordValue]] = [:]
        for entity in store.entities {
            let table = try store.recordTable(of: entity)
            try store.environment.read { txn in
                try txn.scan(table) { key, value in
                    let id = try #require(RecordKey.uuid(key))
                    all[entity.name, default: [:]][id] = try RecordValue.decode(
                        from: BorrowedBytes(unsafe: value), fields: entity.fields)
                    return true
                }
            }
        }
        return all
    }

    /// The external values of the store, by owner.
    static func blobs(_ path: String) throws -> [UUID: Data] {
        let container = try ModelContainer(
            for: Owner.self, Label.self, Everything.self, configuration: ModelConfiguration(path: path))
        defer { try? container.close() }
        let records = try container.read { txn in try txn.fetch(FetchDescriptor<Everything>()) }
        return try Dictionary(uniqueKeysWithValues: records.map { ($0.id, try container.data(for: \.blob, of: $0)) })
    }

    @Test(arguments: [1, 2, 3, 0xDEAD_BEEF] as [UInt64])
    func randomStoresRoundTrip(seed: UInt64) throws {
        let source = TemporaryStore()
        try Self.makeStore(at: source.path, seed: seed)
        let file = source.sibling("export.jsonl")
        #expect(kvtool("export", source.path, "--output", file, "--chunk-size", "4").status == 0)
        let exported = try ImportTesting.export(source.path)

        // Into a path without a store: the export's catalog makes the schema.
        let created = source.sibling("created")
        let first = kvtool("import", created, file, "--chunk-size", "3", "--chunk-bytes", "1000000")
        #expect(first.status == 0, "\(first.errors)")
        #expect(try ImportTesting.export(created) == exported)
        ImportTesting.expectClean(created)
        #expect(kvtool("check", created).output.hasPrefix("No problems: "))

        // Into a store the program opened: its catalog is the truth, and the records come out the same.
        let opened = source.sibling("opened")
        try ModelContainer(
            for: Owner.self, Label.self, Everything.self, configuration: ModelConfiguration(path: opened)
        )
        .close()
        let second = kvtool("import", opened, file)
        #expect(second.status == 0, "\(second.errors)")
        ImportTesting.expectClean(opened)

        let records = try Self.records(source.path)
        #expect(try Self.records(created) == records)
        #expect(try Self.records(opened) == records)
        let blobs = try Self.blobs(source.path)
        #expect(try Self.blobs(created) == blobs)
        #expect(try Self.blobs(opened) == blobs)
    }
}

/// The random values of the round-trip property, every kind a record holds, edge cases often.
extension SplitMix64 {
    mutating func pick<T>(_ values: [T]) -> T {
        values[Int.random(in: 0..<values.count, using: &self)]
    }

    mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &self) < percent
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T {
        chance(30) ? pick([T.min, T.max, 0, 1, T.max / 2]) : T.random(in: T.min...T.max, using: &self)
    }

    mutating func double() -> Double {
        if chance(40) {
            return pick([
                .nan, -.nan, Double(bitPattern: 0x7FF8_0000_0000_0ABC), -0.0, 0.0, .infinity, -.infinity,
                .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.1, 1e300, 1e-300,
            ])
        }
        return Double(bitPattern: next())
    }

    mutating func float() -> Float {
        if chance(40) {
            return pick([
                .nan, Float(bitPattern: 0x7FC0_0123), -0.0, .infinity, -.infinity, .leastNonzeroMagnitude,
                .greatestFiniteMagnitude, 0.1,
            ])
        }
        return Float(bitPattern: UInt32(truncatingIfNeeded: next()))
    }

    mutating func text() -> String {
        let pieces = [
            "", "a", "plain words", "\u{0}", "NUL\u{0}inside", "é", "日本語", "😀👍🏽", "\u{7F}\u{1}\u{1F}", "\"quoted\"",
            "back\\slash", "line\nbreak\ttab\r", "\u{2028}\u{2029}", "e\u{301}", "$uuid", "{\"$int\":3}", "#1",
        ]
        return (0..<Int.random(in: 0...3, using: &self)).map { _ in pick(pieces) }.joined()
    }

    mutating func date() -> Date {
        Date(
            timeIntervalSinceReferenceDate: chance(50)
                ? pick([0, -1, 1e-10, 800_000_000.123_456_789, -63_000_000_000, 1e11, 0.5])
                : Double.random(in: -1e10...1e10, using: &self))
    }

    mutating func part() -> Everything.Part {
        Everything.Part(
            label: text(), weights: (0..<Int.random(in: 0...3, using: &self)).map { _ in double() },
            flag: chance(50) ? chance(50) : nil, stamp: date(), byte: integer(UInt8.self))
    }

    mutating func bytes(_ count: Int) -> Data {
        ImportTesting.pattern(count, seed: next())
    }
}
