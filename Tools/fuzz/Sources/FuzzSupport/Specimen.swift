import Foundation
import KVStore

/// The model the fuzz targets decode: one field of every shape the record format has, so that random bytes meet
/// every path of the decoder (integers of each width, floats, strings, data, dates, UUIDs, URLs, decimals,
/// optionals, arrays, nested structs, enums with payloads, and dictionaries keyed by strings and by integers).
public struct Specimen: Model {
    /// An enum with payloads, which `Codable` writes as nested keyed containers.
    enum Shape: Codable {
        case point
        case circle(radius: Double)
        case polygon([Vertex], closed: Bool)
        case labelled(String, Int8)
    }

    /// A nested struct.
    struct Vertex: Codable {
        var x: Float
        var y: Float
        var tag: String?
    }

    /// A raw-value enum, indexable through its raw value.
    enum Level: String, Codable, IndexKeyEncodable {
        case low, high
    }

    /// The record's ID.
    public var id: UUID
    var name: String
    var count: Int
    var small: Int8
    var medium: Int32
    var unsigned: UInt64
    var byte: UInt8
    var ratio: Double
    var weight: Float
    var flag: Bool
    var created: Date
    var due: Date?
    var parentID: UUID?
    var blob: Data
    var link: URL?
    var amount: Decimal
    var level: Level
    var tags: [String]
    var tagIDs: [UUID]
    var matrix: [[Int]]
    var scores: [String: Double]
    var byCode: [Int: String]
    var shapes: [Shape]
    var nested: Vertex?
    var maybeNumbers: [Int?]

    /// Indexes of every indexable shape: strings, integers, optional dates, a raw-value enum, a multi-entry array of
    /// UUIDs, a unique unsigned integer and a compound of a string and a double.
    public static let entity = Entity<Specimen>(indexes: [
        .index(\.name), .index(\.count), .index(\.due), .index(\.level), .index(\.tagIDs), .unique(\.unsigned),
        .index(\.name, \.ratio),
    ])

    /// Values that together use every field and the edges of each type: empty and missing values, extreme integers,
    /// signed zero, infinities and NaN, strings with NUL bytes and characters outside ASCII.
    public static let samples: [Specimen] = [
        Specimen(
            id: UUID(uuid: (1, 2, 3, 4, 5, 6, 0x70, 8, 0x80, 10, 11, 12, 13, 14, 15, 16)), name: "Ada", count: 42,
            small: -8, medium: 1 << 20, unsigned: 7, byte: 255, ratio: 0.5, weight: 1.25, flag: true,
            created: Date(timeIntervalSinceReferenceDate: 800_000_000.125),
            due: Date(timeIntervalSinceReferenceDate: 1),
            parentID: UUID(uuid: (9, 9, 9, 9, 9, 9, 0x40, 9, 0x80, 9, 9, 9, 9, 9, 9, 9)), blob: Data([0, 1, 2, 254]),
            link: URL(string: "https://example.com/a?b=c#d"), amount: Decimal(string: "-12.50") ?? 0, level: .high,
            tags: ["a", "b"], tagIDs: [UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))],
            matrix: [[1, 2], [], [-3]], scores: ["x": 1.5, "y": -2], byCode: [404: "missing", -1: "minus"],
            shapes: [
                .point, .circle(radius: 2), .polygon([Vertex(x: 0, y: 1, tag: "v")], closed: true),
                .labelled("l", -1),
            ],
            nested: Vertex(x: -0.5, y: .infinity, tag: nil), maybeNumbers: [1, nil, 3]),
        Specimen(
            id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0)), name: "", count: .min, small: .min,
            medium: .max, unsigned: .max, byte: 0, ratio: -0.0, weight: .nan, flag: false,
            created: Date(timeIntervalSinceReferenceDate: -63_000_000_000), due: nil, parentID: nil, blob: Data(),
            link: nil, amount: 0, level: .low, tags: [], tagIDs: [], matrix: [], scores: [:], byCode: [:], shapes: [],
            nested: nil, maybeNumbers: []),
        Specimen(
            id: UUID(
                uuid: (0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xBF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)),
            name: "Zoë \u{0} 日本 🎉", count: .max, small: .max, medium: .min, unsigned: 0, byte: 128,
            ratio: -.infinity, weight: -.greatestFiniteMagnitude, flag: true,
            created: Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude),
            due: Date(timeIntervalSinceReferenceDate: -0.001), parentID: nil, blob: Data(repeating: 0xAB, count: 300),
            link: URL(fileURLWithPath: "/tmp/with space"), amount: Decimal(string: "1e-20") ?? 0, level: .high,
            tags: [String(repeating: "long ", count: 120)],
            tagIDs: [
                UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 2)),
                UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 2)),
            ],
            matrix: [[Int.min, Int.max]], scores: ["": .nan, "é": .leastNonzeroMagnitude], byCode: [.min: ""],
            shapes: [.polygon([], closed: false)], nested: Vertex(x: .nan, y: 0, tag: ""), maybeNumbers: [nil]),
    ]
}

extension Specimen {
    /// The `number`th of many specimens that may share a store: the samples in turn, each with an ID of its own and
    /// `number` as its unique value.
    public static func numbered(_ number: Int) -> Specimen {
        var specimen = samples[number % samples.count]
        specimen.id = UUID.timeOrdered()
        specimen.unsigned = UInt64(number)
        return specimen
    }
}

extension Specimen: FieldCodable {
    /// Reads the fields as the synthesized `init(from:)` does: the same keys, types and optionality.
    public init(fields: FieldReader) throws {
        id = try fields.decode(UUID.self, forKey: "id")
        name = try fields.decode(String.self, forKey: "name")
        count = try fields.decode(Int.self, forKey: "count")
        small = try fields.decode(Int8.self, forKey: "small")
        medium = try fields.decode(Int32.self, forKey: "medium")
        unsigned = try fields.decode(UInt64.self, forKey: "unsigned")
        byte = try fields.decode(UInt8.self, forKey: "byte")
        ratio = try fields.decode(Double.self, forKey: "ratio")
        weight = try fields.decode(Float.self, forKey: "weight")
        flag = try fields.decode(Bool.self, forKey: "flag")
        created = try fields.decode(Date.self, forKey: "created")
        due = try fields.decodeIfPresent(Date.self, forKey: "due")
        parentID = try fields.decodeIfPresent(UUID.self, forKey: "parentID")
        blob = try fields.decode(Data.self, forKey: "blob")
        link = try fields.decodeIfPresent(URL.self, forKey: "link")
        amount = try fields.decode(Decimal.self, forKey: "amount")
        level = try fields.decode(Level.self, forKey: "level")
        tags = try fields.decode([String].self, forKey: "tags")
        tagIDs = try fields.decode([UUID].self, forKey: "tagIDs")
        matrix = try fields.decode([[Int]].self, forKey: "matrix")
        scores = try fields.decode([String: Double].self, forKey: "scores")
        byCode = try fields.decode([Int: String].self, forKey: "byCode")
        shapes = try fields.decode([Shape].self, forKey: "shapes")
        nested = try fields.decodeIfPresent(Vertex.self, forKey: "nested")
        maybeNumbers = try fields.decode([Int?].self, forKey: "maybeNumbers")
    }

    /// Writes the fields as the synthesized `encode(to:)` does, in the order of the coding keys.
    public func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(name, forKey: "name")
        try fields.encode(count, forKey: "count")
        try fields.encode(small, forKey: "small")
        try fields.encode(medium, forKey: "medium")
        try fields.encode(unsigned, forKey: "unsigned")
        try fields.encode(byte, forKey: "byte")
        try fields.encode(ratio, forKey: "ratio")
        try fields.encode(weight, forKey: "weight")
        try fields.encode(flag, forKey: "flag")
        try fields.encode(created, forKey: "created")
        try fields.encodeIfPresent(due, forKey: "due")
        try fields.encodeIfPresent(parentID, forKey: "parentID")
        try fields.encode(blob, forKey: "blob")
        try fields.encodeIfPresent(link, forKey: "link")
        try fields.encode(amount, forKey: "amount")
        try fields.encode(level, forKey: "level")
        try fields.encode(tags, forKey: "tags")
        try fields.encode(tagIDs, forKey: "tagIDs")
        try fields.encode(matrix, forKey: "matrix")
        try fields.encode(scores, forKey: "scores")
        try fields.encode(byCode, forKey: "byCode")
        try fields.encode(shapes, forKey: "shapes")
        try fields.encodeIfPresent(nested, forKey: "nested")
        try fields.encode(maybeNumbers, forKey: "maybeNumbers")
    }
}
