/// The type tag that starts every encoded value in a record.
///
/// The raw values are the bytes on disk: never renumber a case. The catalog
/// also stores the kind first observed for each top-level field, so a store
/// can describe its records without the program's Swift types.
package enum ValueKind: UInt8, CaseIterable, Codable, Sendable {
    /// An absent value: `nil`, or `encodeNil()`.
    case null = 0
    /// The Boolean `false`; no payload.
    case `false` = 1
    /// The Boolean `true`; no payload.
    case `true` = 2
    /// A signed integer of any width: a zigzag LEB128 varint of its `Int64` value.
    case int = 3
    /// An unsigned integer of any width: a LEB128 varint of its `UInt64` value.
    case uint = 4
    /// A `Float`: its 4-byte bit pattern, little-endian.
    case float = 5
    /// A `Double`: its 8-byte bit pattern, little-endian.
    case double = 6
    /// A `String`: varint byte length, then UTF-8.
    case string = 7
    /// `Data`: varint byte length, then the bytes.
    case data = 8
    /// A `Date`: its `timeIntervalSinceReferenceDate` as an 8-byte little-endian `Double`.
    case date = 9
    /// A `UUID`: its 16 bytes.
    case uuid = 10
    /// A `URL`: its `absoluteString`, laid out like a string.
    case url = 11
    /// A `Decimal`: its `description`, laid out like a string.
    case decimal = 12
    /// An unkeyed container: varint count, then that many values.
    case array = 13
    /// A keyed container: varint count, then that many (varint field id, value) pairs.
    case object = 14
    /// A `[String: V]` dictionary: varint count, then (varint length, UTF-8 key, value) entries.
    case stringMap = 15
    /// An `[Int: V]` dictionary: varint count, then (zigzag varint key, value) entries.
    case intMap = 16

    /// The name the catalog and `kvtool` show for this kind; both Boolean tags are `bool`.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .false, .true: "bool"
        case .int: "int"
        case .uint: "uint"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .uuid: "uuid"
        case .url: "url"
        case .decimal: "decimal"
        case .array: "array"
        case .object: "object"
        case .stringMap: "stringMap"
        case .intMap: "intMap"
        }
    }

    /// Whether this is one of the two Boolean tags.
    package var isBool: Bool { self == .false || self == .true }
}
