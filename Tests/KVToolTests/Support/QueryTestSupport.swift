import Foundation
import KVStore
import KVStoreInspection
import TestSupport
import Testing

/// A record with a field of each kind `--where` compares, and indexes of each shape the planner reads: single-field
/// (`name`, `rank`, `score`, `due`), compound of three fields (`group`, `level`, `name`) and multi-entry (`tags`).
/// `size`, `weight`, `isOpen` and `note` have no index.
struct Item: Model, Equatable {
    var id: UUID
    var name: String
    var rank: Int
    var score: Double?
    var size: UInt64
    var weight: Float
    var group: String
    var level: Int
    var tags: [String]
    var isOpen: Bool
    var due: Date?
    var note: String?

    static let entity = Entity<Item>(
        indexes: [
            .index(\.name), .index(\.rank), .index(\.score), .index(\.due), .index(\.group, \.level, \.name),
            .index(\.tags),
        ])
}

/// Random items, their store, and what a reference that holds every item in memory finds.
enum ItemData {
    /// The names items take: composed and decomposed accents (one NFC form), a NUL, an empty string, a prefix of
    /// another, and a name longer than LMDB's key limit, whose key is cut.
    static let names = [
        "alpha", "alp", "Alpha", "beta", "b", "", "\u{E9}t\u{E9}", "e\u{301}t\u{E9}", "e", "zeta", "a\u{0}b",
        String(repeating: "x", count: 600) + "1", String(repeating: "x", count: 600) + "2",
    ]
    /// The tags items take.
    static let tags = ["red", "green", "blue", "\u{E9}", "e\u{301}"]
    /// The first date; items' dates are whole hours after it.
    static let firstDate = Date(timeIntervalSinceReferenceDate: 800_000_000)

    /// The `number`th ID, in increasing byte order, so that the record table holds items in the order made.
    static func id(_ number: Int) -> UUID {
        UUID(uuid: (0x01, 0x90, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0x0a, UInt8(number >> 8), UInt8(number & 0xff)))
    }

    /// `count` random items, seeded.
    static func random(count: Int, seed: UInt64) -> [Item] {
        var random = SplitMix64(seed: seed)
        let scores: [Double?] = [nil, nil, .nan, -0.0, 0.0, .infinity, -.infinity, -2.5, -1, 0.5, 1, 1.5, 3]
        return (0..<count).map { number in
            Item(
                id: id(number), name: random.pick(names), rank: Int.random(in: -50...50, using: &random),
                score: random.pick(scores), size: UInt64.random(in: 0...10, using: &random),
                weight: Float(Int.random(in: -8...8, using: &random)) / 4, group: random.pick(["g1", "g2", "g3"]),
                level: Int.random(in: 0...3, using: &random),
                tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(tags) },
                isOpen: Bool.random(using: &random),
                due: Bool.random(using: &random) ? nil : date(Int.random(in: 0...10, using: &random)),
                note: Int.random(in: 0...3, using: &random) == 0 ? ["n1", "n2"].randomElement(using: &random) : nil)
        }
    }

    /// The `hours`th date.
    static func date(_ hours: Int) -> Date {
        firstDate.addingTimeInterval(Double(hours) * 3600)
    }

    /// The text of the `hours`th date, as `--where` takes it.
    static func dateText(_ hours: Int) -> String {
        ISO8601DateFormatter().string(from: date(hours))
    }

    /// Writes `items` at `path` through the library, and closes the store.
    static func write(_ items: [Item], at path: String) throws {
        let container = try ModelContainer(
            for: Item.self, configuration: ModelConfiguration(path: path, durability: .off))
        try container.write { txn in
            for item in items { try txn.insert(item) }
        }
        try container.close()
    }
}

/// The reference's view of a field's value, computed from the Swift values, not from the store.
enum ReferenceValue: Equatable {
    case integer(Int128)
    case double(Double)
    case string(String)
    case bool(Bool)

    /// The order `--where` and `--min`/`--max` promise: numbers by value (NaN above everything and equal to
    /// itself, -0.0 equal to 0.0), strings by the UTF-8 bytes of their NFC form; `nil` across kinds.
    static func order(_ left: ReferenceValue, _ right: ReferenceValue) -> Int? {
        switch (left, right) {
        case (.integer(let left), .integer(let right)): return left < right ? -1 : left > right ? 1 : 0
        case (.double(let left), .double(let right)):
            if left.isNaN || right.isNaN { return left.isNaN == right.isNaN ? 0 : left.isNaN ? 1 : -1 }
            return left < right ? -1 : left > right ? 1 : 0
        case (.string(let left), .string(let right)):
            let (a, b) = (nfc(left), nfc(right))
            return a == b ? 0 : a.lexicographicallyPrecedes(b) ? -1 : 1
        default: return nil
        }
    }

    /// A string's NFC form's UTF-8.
    static func nfc(_ text: String) -> [UInt8] {
        Array(text.precomposedStringWithCanonicalMapping.utf8)
    }
}

extension Item {
    /// The values of a field: none for nil, the elements of `tags`.
    func referenceValues(_ field: String) -> [ReferenceValue] {
        switch field {
        case "name": [.string(name)]
        case "rank": [.integer(Int128(rank))]
        case "score": score.map { [.double($0)] } ?? []
        case "size": [.integer(Int128(size))]
        case "weight": [.double(Double(weight))]
        case "group": [.string(group)]
        case "level": [.integer(Int128(level))]
        case "tags": tags.map { .string($0) }
        case "isOpen": [.bool(isOpen)]
        case "due": due.map { [.double($0.timeIntervalSinceReferenceDate)] } ?? []
        case "note": note.map { [.string($0)] } ?? []
        default: []
        }
    }
}

/// One `--where` condition as the reference evaluates it.
struct ReferenceCondition: CustomStringConvertible {
    let field: String
    let op: String
    /// The value, `nil` for `null`.
    let value: ReferenceValue?
    /// The text given to `--where`.
    let text: String

    var description: String { field + op + text }

    /// Whether an item meets the condition, as the reference reads the documented semantics.
    func matches(_ item: Item) -> Bool {
        let values = item.referenceValues(field)
        switch op {
        case "=", "!=":
            let isEqual: Bool
            if let value {
                isEqual = values.contains { ReferenceValue.order($0, value) == 0 || $0 == value }
            } else {
                isEqual = values.isEmpty && field != "tags"
            }
            // An empty array is no null: `tags=null` matches only an absent field, which items never have.
            return op == "=" ? isEqual : !isEqual
        case "^=":
            guard case .string(let prefix)? = value else { return false }
            return values.contains { element in
                guard case .string(let text) = element else { return false }
                return ReferenceValue.nfc(text).starts(with: ReferenceValue.nfc(prefix))
            }
        default:
            guard let value else { return false }
            return values.contains { element in
                guard let order = ReferenceValue.order(element, value) else { return false }
                switch op {
                case "<": return order < 0
                case "<=": return order <= 0
                case ">": return order > 0
                default: return order >= 0
                }
            }
        }
    }
}

/// Parses one line of JSON printed by kvtool.
func parseJSON(_ line: some StringProtocol) throws -> JSONValue {
    try JSONParser.parse(Array(line.utf8))
}

/// The IDs of `kvtool list … --fields id` JSON Lines.
func listedIDs(_ output: String) throws -> [UUID] {
    try output.split(separator: "\n").map { line in
        guard case .string(let text)? = try parseJSON(line)[member: "id"], let id = UUID(uuidString: text) else {
            throw ReferenceFailure("not an ID line: \(line)")
        }
        return id
    }
}

/// A test's own failure to read kvtool's output.
struct ReferenceFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
