import Foundation
import TestSupport
import Testing

@testable import KVStore

/// A meter reading with an integer index, a double index and a unique integer: the kinds of index a count of a
/// range reads.
struct Meter: Model, Equatable {
    var id = UUID()
    var value: Int
    var level: Double
    var serial: Int

    static let entity = Entity<Meter>(indexes: [.index(\.value), .index(\.level), .unique(\.serial)])
}

/// A count of a range of an index counts the range, or, when the estimate says the range holds most entries, the
/// entries outside it taken from the index's total: either way the count is the number of models the predicate
/// matches, however the values are spread, for open and closed, inclusive and exclusive, empty and whole ranges.
@Suite struct RangeCountTests {
    /// How the readings' values are spread.
    enum Spread: String, CaseIterable, CustomTestStringConvertible {
        /// 0 to 999, several readings each.
        case even
        /// Most readings at 0 to 9, a few up to a million: the estimate says "most" where the range holds few.
        case skewed
        /// Negative and positive, across zero.
        case signed
        /// One value for every reading.
        case single

        var testDescription: String { rawValue }

        /// The value of the `number`th reading of 3,000.
        func value(_ number: Int, using random: inout SplitMix64) -> Int {
            switch self {
            case .even: Int(random.next() % 1_000)
            case .skewed: number % 50 == 0 ? Int(random.next() % 1_000_000) : Int(random.next() % 10)
            case .signed: Int(random.next() % 2_001) - 1_000
            case .single: 7
            }
        }
    }

    /// 3,000 readings spread as `spread`.
    private static func readings(_ spread: Spread) -> [Meter] {
        var random = SplitMix64(seed: 25)
        return (0..<3_000).map { number in
            let value = spread.value(number, using: &random)
            return Meter(
                value: value, level: Double(value) / 4, serial: value * 3_001 + number)
        }
    }

    /// The bounds worth trying for `values`: below and above them all, their ends, and points between.
    private static func bounds(of values: [Int]) -> [Int] {
        let sorted = values.sorted()
        let quantiles = [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99].map { sorted[Int(Double(sorted.count - 1) * $0)] }
        return Array(
            Set([sorted[0] - 1, sorted[0], sorted[sorted.count - 1], sorted[sorted.count - 1] + 1] + quantiles)
        )
        .sorted()
    }

    private func withReadings<R>(_ spread: Spread, _ body: (ModelContext, [Meter]) throws -> R) throws -> R {
        let container = try ModelContainer(
            for: Meter.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        let readings = Self.readings(spread)
        let context = ModelContext(container)
        try context.insert(contentsOf: readings)
        return try body(context, readings)
    }

    /// Expects the count of `predicate`, planned as a range of `index`, to be the number of `readings` it matches.
    private func expectCount(
        _ predicate: Predicate<Meter>, of readings: [Meter], index: String, in context: ModelContext,
        _ label: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let descriptor = FetchDescriptor(predicate: predicate)
        let plan = try context.explain(descriptor)
        #expect(plan.contains("index \(index): range"), "\(label): \(plan)", sourceLocation: sourceLocation)
        let expected = try readings.filter { try predicate.evaluate($0) }.count
        #expect(try context.fetchCount(descriptor) == expected, "\(label)", sourceLocation: sourceLocation)
    }

    @Test(arguments: Spread.allCases)
    func countsOfOneSidedRangesAreTheMatches(spread: Spread) throws {
        try withReadings(spread) { context, readings in
            for bound in Self.bounds(of: readings.map(\.value)) {
                try expectCount(
                    #Predicate { $0.value > bound }, of: readings, index: "value", in: context, "> \(bound)")
                try expectCount(
                    #Predicate { $0.value >= bound }, of: readings, index: "value", in: context, ">= \(bound)")
                try expectCount(
                    #Predicate { $0.value < bound }, of: readings, index: "value", in: context, "< \(bound)")
                try expectCount(
                    #Predicate { $0.value <= bound }, of: readings, index: "value", in: context, "<= \(bound)")
                let serial = bound * 3_001
                try expectCount(
                    #Predicate { $0.serial > serial }, of: readings, index: "serial", in: context, "serial > \(serial)")
            }
        }
    }

    @Test(arguments: Spread.allCases)
    func countsOfTwoSidedRangesAreTheMatchesEmptyOnesIncluded(spread: Spread) throws {
        try withReadings(spread) { context, readings in
            let bounds = Self.bounds(of: readings.map(\.value))
            for low in bounds {
                for high in bounds {
                    try expectCount(
                        #Predicate { $0.value >= low && $0.value <= high }, of: readings, index: "value", in: context,
                        "[\(low), \(high)]")
                    try expectCount(
                        #Predicate { $0.value > low && $0.value < high }, of: readings, index: "value", in: context,
                        "(\(low), \(high))")
                }
            }
        }
    }

    @Test func countsOfDoubleRangesAreTheMatches() throws {
        try withReadings(.even) { context, readings in
            for bound in [-1.0, 0, 12.5, 124.75, 240, 249.75, 250] {
                try expectCount(
                    #Predicate { $0.level > bound }, of: readings, index: "level", in: context, "> \(bound)")
                try expectCount(
                    #Predicate { $0.level <= bound }, of: readings, index: "level", in: context, "<= \(bound)")
            }
        }
    }

    @Test func aCountInAWriteSeesTheWritesChanges() throws {
        let container = try ModelContainer(
            for: Meter.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        var readings = Self.readings(.even)
        try ModelContext(container).insert(contentsOf: readings)
        try container.write { txn in
            // The range holds nearly every reading, so its count is taken from the total less the others.
            let descriptor = FetchDescriptor<Meter>(predicate: #Predicate { $0.value > 5 })
            let added = (0..<40).map { Meter(value: 500 + $0, level: 0, serial: -1 - $0) }
            for reading in added { try txn.insert(reading) }
            readings += added
            let removed = readings.filter { $0.value == 3 || $0.value == 900 }
            #expect(try txn.delete(Meter.self, ids: removed.map(\.id)) == removed.count)
            readings.removeAll { $0.value == 3 || $0.value == 900 }
            #expect(try txn.fetchCount(descriptor) == readings.count { $0.value > 5 })
        }
    }
}

/// Where keys fall between a table's first and last keys, as the count's estimate reads them.
@Suite struct KeySpanTests {
    @Test func positionsGoFromZeroAtTheFirstKeyToOneAtTheLast() throws {
        let span = try #require(KeySpan(first: [1, 0, 0], last: [1, 0, 200]))
        #expect(span.position(of: [1, 0, 0]) == 0)
        #expect(span.position(of: [1, 0, 100]) == 0.5)
        #expect(span.position(of: [1, 0, 200]) == 1)
        // Keys beyond the ends, shorter or longer ones included, are at the ends.
        #expect(span.position(of: [0, 255]) == 0)
        #expect(span.position(of: [1, 0]) == 0)
        #expect(span.position(of: [1, 0, 200, 0]) == 1)
        #expect(span.position(of: [2]) == 1)
        #expect(span.position(of: nil) == nil)
    }

    @Test func theBytesReadAreThoseAfterTheSharedPrefix() throws {
        // The ends share 13 bytes: the next eight tell the keys apart.
        let prefix = [UInt8](repeating: 9, count: 12)
        let span = try #require(KeySpan(first: prefix + [0, 0], last: prefix + [0, 4]))
        #expect(span.position(of: prefix + [0, 1]) == 0.25)
        // A longer key reads its eight bytes; the rest do not move it.
        #expect(span.position(of: prefix + [0, 3, 255]) == Double(0x03FF) / Double(0x0400))
    }

    @Test func sharesOfRangesBetweenTheBounds() throws {
        let span = try #require(KeySpan(first: [0], last: [100]))
        func share(_ lower: UInt8?, _ upper: UInt8?) -> Double {
            span.share(between: KeyBounds(lower: lower.map { ([$0], true) }, upper: upper.map { ([$0], true) }))
        }
        #expect(share(nil, nil) == 1)
        #expect(share(25, nil) == 0.75)
        #expect(share(nil, 25) == 0.25)
        #expect(share(25, 75) == 0.5)
        // Bounds the wrong way round hold nothing.
        #expect(share(75, 25) == 0)
    }

    @Test func endsThatReadAsOneNumberHaveNoSpan() {
        #expect(KeySpan(first: [5], last: [5]) == nil)
        // The last key the first followed by zeros, which the first is read as.
        #expect(KeySpan(first: [1, 2], last: [1, 2, 0, 0]) == nil)
    }

    @Test func emptyBounds() {
        func bounds(_ lower: (UInt8, Bool), _ upper: (UInt8, Bool)) -> KeyBounds {
            KeyBounds(lower: ([lower.0], lower.1), upper: ([upper.0], upper.1))
        }
        #expect(bounds((5, true), (4, true)).isEmpty)
        #expect(bounds((5, false), (5, true)).isEmpty)
        #expect(bounds((5, true), (5, false)).isEmpty)
        #expect(!bounds((5, true), (5, true)).isEmpty)
        #expect(!bounds((4, false), (5, false)).isEmpty)
        #expect(!KeyBounds(lower: nil, upper: ([5], false)).isEmpty)
    }
}
