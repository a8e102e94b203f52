import Foundation

/// A record's value as a generic tree, readable and writable without the
/// program's Swift types.
///
/// `kvtool` uses it to print and edit records. ``decode(from:fields:)`` reads
/// any record, and ``encode(fields:)`` writes the same bytes the typed
/// ``RecordEncoder`` writes for the same data, so a record can be decoded,
/// changed and written back.
///
/// ```swift
/// let value = try RecordValue.decode(from: bytes, fields: fields)
/// if case .object(let entries) = value {
///     for entry in entries { print(entry.name, entry.value.kind.typeName) }
/// }
/// ```
///
/// Equality compares floating-point values by bit pattern, so `NaN` equals
/// itself and `-0.0` differs from `0.0`: a tree equals its round trip.
package indirect enum RecordValue: Sendable {
    /// An absent value.
    case null
    /// A Boolean.
    case bool(Bool)
    /// A signed integer of any width.
    case int(Int64)
    /// An unsigned integer of any width.
    case uint(UInt64)
    /// A `Float`.
    case float(Float)
    /// A `Double`.
    case double(Double)
    /// A string.
    case string(String)
    /// Bytes.
    case data(Data)
    /// A date.
    case date(Date)
    /// A UUID.
    case uuid(UUID)
    /// A URL, as its absolute string.
    case url(String)
    /// A `Decimal`, as its `description`.
    case decimal(String)
    /// An unkeyed container.
    case array([RecordValue])
    /// A keyed container, entries in stored order; a field id the table does
    /// not name is shown, and written back, as `"#<id>"`.
    case object([(name: String, value: RecordValue)])
    /// A `[String: V]` dictionary, entries in stored order.
    case stringMap([(key: String, value: RecordValue)])
    /// An `[Int: V]` dictionary, entries in stored order.
    case intMap([(key: Int64, value: RecordValue)])

    /// The tag this value is stored with.
    package var kind: ValueKind {
        switch self {
        case .null: .null
        case .bool(let value): value ? .true : .false
        case .int: .int
        case .uint: .uint
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .url: .url
        case .decimal: .decimal
        case .array: .array
        case .object: .object
        case .stringMap: .stringMap
        case .intMap: .intMap
        }
    }
}

extension RecordValue: Equatable {
    /// Compares two trees; floating-point values and dates compare by bit pattern.
    package static func == (lhs: RecordValue, rhs: RecordValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.uint(let a), .uint(let b)): a == b
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.uuid(let a), .uuid(let b)): a == b
        case (.url(let a), .url(let b)): a == b
        case (.decimal(let a), .decimal(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
        case (.stringMap(let a), .stringMap(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.intMap(let a), .intMap(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }
}

extension RecordValue {
    /// The top-level fields of a record's tree named in `names`, in stored order; none for a tree that is not a
    /// keyed container.
    package func fields(named names: [String]) -> [(name: String, value: RecordValue)] {
        guard case .object(let entries) = self else { return [] }
        let wanted = Set(names)
        return entries.filter { wanted.contains($0.name) }
    }
}
