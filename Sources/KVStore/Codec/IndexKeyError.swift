/// An index key that cannot be built or read.
enum IndexKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A value of this kind cannot be part of an index key (containers, data, URLs, decimals).
    case notIndexable(ValueKind)
    /// Key bytes that do not parse as the expected components.
    case malformed(offset: Int, reason: String)

    /// A one-line explanation.
    var description: String {
        switch self {
        case .notIndexable(let kind):
            "A \(kind.typeName) value cannot be part of an index key."
        case .malformed(let offset, let reason):
            "Malformed index key at byte \(offset): \(reason)."
        }
    }
}
