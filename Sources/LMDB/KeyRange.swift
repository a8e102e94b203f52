/// A range of keys to iterate: everything, the keys with a prefix, or the keys between an inclusive lower bound and
/// an exclusive upper bound.
///
/// Bounds compare in the table's order (LMDB's `mdb_cmp`); prefixes assume the default byte-wise order.
///
/// ```swift
/// try txn.scan(table, in: .prefix(Array("user/".utf8))) { key, value in
///     print(key.count, value.count)
///     return true
/// }
/// ```
public struct KeyRange: Hashable, Sendable {
    /// The smallest key in the range, or `nil` to start at the first key.
    public let lowerBound: [UInt8]?

    /// The first key past the range, or `nil` to run to the last key.
    public let upperBound: [UInt8]?

    /// Whether the range was made from a prefix, which needs the default byte-wise key order.
    let isPrefix: Bool

    /// Creates the range `[lowerBound, upperBound)`.
    ///
    /// - Parameters:
    ///   - lowerBound: The smallest key in the range, or `nil` for no lower bound.
    ///   - upperBound: The first key past the range, or `nil` for no upper bound.
    public init(from lowerBound: [UInt8]?, upTo upperBound: [UInt8]?) {
        self.init(lowerBound: lowerBound, upperBound: upperBound, isPrefix: false)
    }

    private init(lowerBound: [UInt8]?, upperBound: [UInt8]?, isPrefix: Bool) {
        self.lowerBound = lowerBound?.isEmpty == true ? nil : lowerBound
        self.upperBound = upperBound
        self.isPrefix = isPrefix
    }

    /// Every key of the table.
    public static let all = KeyRange(from: nil, upTo: nil)

    /// The keys that start with `prefix`. An empty prefix is every key.
    ///
    /// - Parameter prefix: The bytes every key in the range starts with.
    public static func prefix<Bytes: Collection<UInt8>>(_ prefix: Bytes) -> KeyRange {
        let bytes = Array(prefix)
        return KeyRange(lowerBound: bytes, upperBound: successor(ofPrefix: bytes), isPrefix: true)
    }

    /// The keys greater than or equal to `lowerBound`.
    public static func from<Bytes: Collection<UInt8>>(_ lowerBound: Bytes) -> KeyRange {
        KeyRange(from: Array(lowerBound), upTo: nil)
    }

    /// The keys less than `upperBound`.
    public static func upTo<Bytes: Collection<UInt8>>(_ upperBound: Bytes) -> KeyRange {
        KeyRange(from: nil, upTo: Array(upperBound))
    }

    /// The smallest byte string greater than every string that starts with `prefix`, or `nil` when there is none
    /// (an empty prefix, or one made of 0xFF bytes only: then every key from the prefix on has it): the exclusive
    /// upper bound of ``prefix(_:)``.
    ///
    /// - Parameter prefix: The bytes the strings start with.
    public static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }
}

/// A key and value copied out of a table.
public struct Entry: Hashable, Sendable {
    /// The key's bytes.
    public var key: [UInt8]
    /// The value's bytes.
    public var value: [UInt8]

    /// Creates an entry.
    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}
