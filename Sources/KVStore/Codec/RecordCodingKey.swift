/// A coding key made at run time: dictionary keys, array indexes and `super`
/// in coding paths.
///
/// Index keys build their text only when asked, so walking an array does
/// not format a string per element.
struct RecordCodingKey: CodingKey, Sendable {
    /// Where the key's text comes from.
    private enum Storage: Sendable {
        case text(String)
        case integer(Int)
        case index(Int)
    }

    /// The key's value.
    private let storage: Storage

    /// The key's text; `"Index 3"` for the fourth element of an array, as JSONEncoder spells it.
    var stringValue: String {
        switch storage {
        case .text(let text): text
        case .integer(let value): String(value)
        case .index(let index): "Index \(index)"
        }
    }

    /// The key's integer value, for array indexes and `Int` dictionary keys.
    var intValue: Int? {
        switch storage {
        case .text: nil
        case .integer(let value), .index(let value): value
        }
    }

    /// Creates a string key.
    init(stringValue: String) {
        storage = .text(stringValue)
    }

    /// Creates an integer key, whose text is the integer's decimal form.
    init(intValue: Int) {
        storage = .integer(intValue)
    }

    /// Creates the key of the element at `index` of an unkeyed container.
    private init(index: Int) {
        storage = .index(index)
    }

    /// The key of the element at `index` of an unkeyed container.
    static func index(_ index: Int) -> RecordCodingKey {
        RecordCodingKey(index: index)
    }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = RecordCodingKey(stringValue: "super")
}
