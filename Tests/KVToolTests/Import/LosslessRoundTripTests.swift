import Foundation
import KVStore
import Testing

/// A model with a value of every kind the record format knows, nested and at the top level.
struct Specimen: Model, Equatable {
    /// A nested value, whose fields the catalog gives no kinds.
    struct Part: Codable, Equatable {
        var label: String
        var weight: Float
        var stamp: Date
        var code: UInt8
    }

    /// A raw-value enum, stored and indexed as its raw value.
    enum Mood: String, Codable, IndexKeyEncodable {
        case calm, busy
    }

    var id = UUID.timeOrdered()
    var count: Int
    var big: UInt64
    var ratio: Double
    var small: Float
    var flag: Bool
    var name: String
    var blob: Data
    var link: URL
    var price: Decimal
    var when: Date
    var other: UUID
    var maybe: Int?
    var numbers: [Int]
    var ids: [UUID]
    var part: Part
    var parts: [Part]
    var byName: [String: Double]
    var byNumber: [Int: String]
    var mood: Mood

    static let entity = Entity<Specimen>(indexes: [.index(\.ids), .index(\.mood), .unique(\.name), .index(\.when)])

    /// Values at the edges: extremes, negative zero, odd dates, a dictionary key that looks like a tag.
    static let samples: [Specimen] = [
        Specimen(
            id: fixedID(1, entity: 6), count: .min, big: .max, ratio: -0.0, small: 0.1, flag: true, name: "edges",
            blob: Data([0, 1, 254, 255]), link: URL(fileURLWithPath: "/tmp/a b"), price: Decimal(string: "12.345") ?? 0,
            when: Date(timeIntervalSinceReferenceDate: 800_000_000.123_456_789), other: fixedID(9),
            maybe: nil, numbers: [1, -2, 3], ids: [fixedID(1), fixedID(2), fixedID(1)],
            part: Part(
                label: "\"quoted\"\n\u{1}", weight: .infinity, stamp: Date(timeIntervalSinceReferenceDate: 1e-10),
                code: 255),
            parts: [], byName: ["$uuid": 1.5], byNumber: [-1: "minus"], mood: .calm),
        Specimen(
            id: fixedID(2, entity: 6), count: 42, big: 0, ratio: 1e300, small: -.greatestFiniteMagnitude, flag: false,
            name: "plain ✓", blob: Data(), link: URL(string: "https://example.com/?q=1") ?? URL(fileURLWithPath: "/"),
            price: Decimal(-7), when: Date(timeIntervalSinceReferenceDate: -63_000_000_000), other: fixedID(8),
            maybe: 5, numbers: [], ids: [],
            part: Part(label: "", weight: -0.0, stamp: Date(timeIntervalSinceReferenceDate: 0.5), code: 0),
            parts: [Part(label: "x", weight: 1, stamp: Date(timeIntervalSinceReferenceDate: 3), code: 1)],
            byName: [:], byNumber: [:], mood: .busy),
    ]
}

/// Export then import gives back the same records, bit for bit, for every kind of value.
@Suite struct LosslessRoundTripTests {
    @Test func everyKindSurvivesExportAndImport() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        for (path, models) in [(source.path, Specimen.samples), (target.path, [])] {
            let container = try ModelContainer(for: Specimen.self, configuration: ModelConfiguration(path: path))
            let context = ModelContext(container)
            for model in models { context.insert(model) }
            try context.save()
            try container.close()
        }
        let exported = kvtool("export", source.path)
        #expect(exported.status == 0)
        let file = source.sibling("specimens.jsonl")
        try Data(exported.output.utf8).write(to: URL(fileURLWithPath: file))
        #expect(kvtool("import", target.path, file).status == 0)
        // The header's creation time is each store's own.
        #expect(try ImportTesting.export(target.path) == ImportTesting.withoutCreationTime(exported.output))
        #expect(kvtool("check", target.path).status == 0)

        let container = try ModelContainer(for: Specimen.self, configuration: ModelConfiguration(path: target.path))
        defer { try? container.close() }
        let imported = try ModelContext(container).models(for: Specimen.samples.map(\.id), as: Specimen.self)
        #expect(imported == Specimen.samples)
        let bits = imported.map { $0.map { [$0.ratio.bitPattern, UInt64($0.part.weight.bitPattern)] } }
        #expect(bits == Specimen.samples.map { [$0.ratio.bitPattern, UInt64($0.part.weight.bitPattern)] })
    }

    @Test func naturalAndTaggedFormsAreDocumentedOnes() throws {
        let source = TemporaryStore()
        let container = try ModelContainer(for: Specimen.self, configuration: ModelConfiguration(path: source.path))
        let context = ModelContext(container)
        for model in Specimen.samples { context.insert(model) }
        try context.save()
        try container.close()
        let line = kvtool("list", source.path, "Specimen", "--limit", "1").output
        for fragment in [
            #""count":-9223372036854775808"#, #""big":18446744073709551615"#, #""ratio":-0.0"#, #""small":0.1"#,
            #""blob":"AAH+/w=="#, #""link":"file:///tmp/a%20b""#, #""price":"12.345""#,
            #""when":"2026-05-09T06:13:20.123456836Z""#, #""numbers":[1,-2,3]"#,
            #""ids":[{"$uuid":"01900000-0000-7000-8000-000000000001"}"#,
            #""label":"\"quoted\"\n\u0001","weight":{"$float":"inf"},"stamp":{"$date":1e-10},"code":{"$uint":255}"#,
            #""byName":{"$stringMap":{"$uuid":1.5}}"#, #""byNumber":{"-1":"minus"}"#, #""mood":"calm""#,
        ] {
            #expect(line.contains(fragment), "\(fragment)")
        }
        #expect(!line.contains("\"maybe\""))
    }
}
