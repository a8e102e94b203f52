import LMDB

extension EntityStore {
    /// The number of entries of the index `name` between two bounds, for an exact range: of keys that are never
    /// cut, on an index that is not multi-entry, so that every model has one entry. A key's entries of a non-unique
    /// index are counted in one call.
    ///
    /// LMDB keeps the number of a table's entries, so a range that holds most of a non-unique index is counted from
    /// the rest: the entries below its lower bound and above its upper one, taken from the total. Which side is
    /// smaller is estimated from where the bounds fall between the index's first and last keys (``KeySpan``); a walk
    /// of the rest that passes half the entries stops and counts the range itself, which then holds fewer than half.
    /// A wrong estimate costs at most a walk of half the entries more; a right one walks the smaller side.
    ///
    /// - Throws: What LMDB throws reading the index.
    func countEntries(
        inRange name: String, lower: QueryPlan.Bound?, upper: QueryPlan.Bound?, in txn: borrowing Transaction
    ) throws -> Int {
        let index = try storedIndex(name)
        guard !index.description.isUnique else {
            var count = 0
            try forEachID(inRange: name, lower: lower, upper: upper, in: txn) { _ in
                count += 1
                return true
            }
            return count
        }
        let bounds = KeyBounds(
            lower: lower.map { (IndexKey.finalized($0.key, hash: longKeyHash), $0.isInclusive) },
            upper: upper.map { (IndexKey.finalized($0.key, hash: longKeyHash), $0.isInclusive) })
        let total = try txn.count(of: index.table)
        guard total > 0, !bounds.isEmpty else { return 0 }
        return try txn.withCursor(on: index.table) { cursor in
            if let span = try KeySpan(of: cursor), span.share(between: bounds) > 0.5,
                let outside = try Self.countEntries(outside: bounds, with: cursor, upTo: total / 2)
            {
                return total - outside
            }
            return try Self.countEntries(inside: bounds, with: cursor)
        }
    }

    /// The entries of the cursor's table between `bounds`, walked from the lower one.
    ///
    /// - Throws: What LMDB throws reading the table.
    private static func countEntries(inside bounds: KeyBounds, with cursor: borrowing Cursor) throws -> Int {
        guard try bounds.lower.map({ try cursor.seek(atOrAfter: $0.key) }) ?? cursor.first() else { return 0 }
        // Only the first key reached can be the lower bound itself: the keys after it are greater.
        if let lower = bounds.lower, !lower.isInclusive,
            try cursor.withCurrentEntry({ key, _ in compareBytes(key, lower.key) == 0 }) == true
        {
            guard try cursor.nextKey() else { return 0 }
        }
        let upper = bounds.upper
        // Without a limit, never `nil`.
        return try cursor.countValues(
            reverse: false, upToKey: upper?.key, includingBound: upper?.isInclusive ?? false, limit: .max) ?? 0
    }

    /// The entries of the cursor's table outside `bounds` (below the lower one, above the upper one), or `nil` once
    /// they pass `limit`.
    ///
    /// - Throws: What LMDB throws reading the table.
    private static func countEntries(
        outside bounds: KeyBounds, with cursor: borrowing Cursor, upTo limit: Int
    ) throws -> Int? {
        var count = 0
        // The keys below the lower bound, and the bound itself when it is not in the range.
        if let lower = bounds.lower, try cursor.first() {
            guard
                let below = try cursor.countValues(
                    reverse: false, upToKey: lower.key, includingBound: !lower.isInclusive, limit: limit)
            else { return nil }
            count = below
        }
        // The keys above the upper bound, walked down from the last.
        if let upper = bounds.upper, try cursor.last() {
            guard
                let above = try cursor.countValues(
                    reverse: true, upToKey: upper.key, includingBound: !upper.isInclusive, limit: limit - count)
            else { return nil }
            count += above
        }
        return count
    }
}

/// The bounds of a range of stored index keys, each inclusive or not; `nil` for a side the range leaves open.
struct KeyBounds {
    /// The lower bound.
    let lower: (key: [UInt8], isInclusive: Bool)?
    /// The upper bound.
    let upper: (key: [UInt8], isInclusive: Bool)?

    /// Whether no key is between the bounds: the lower one above the upper one, or both the same key and not both
    /// inclusive. The rest of an empty range is every key, which the walks of ``EntityStore`` below the lower bound
    /// and above the upper one would count twice.
    var isEmpty: Bool {
        guard let lower, let upper else { return false }
        let order = lower.key.withBorrowedBytes { compareBytes($0, upper.key) }
        return order > 0 || (order == 0 && !(lower.isInclusive && upper.isInclusive))
    }
}

/// A table's keys from its first to its last, read as numbers for an estimate of how many of its entries a range
/// holds, as if they were spread evenly between the two.
///
/// A key is read as the eight bytes after the prefix the first and last keys share, big-endian (missing bytes read
/// as zeros): the place of an order-preserving encoding of an integer, a date or a double between the ends, to
/// within a few parts in a billion. For keys spread unevenly the estimate may be far off; it only picks which side
/// of a count to walk (``EntityStore/countEntries(inRange:lower:upper:in:)``), never a result.
struct KeySpan {
    /// The first key.
    let first: [UInt8]
    /// The last key.
    let last: [UInt8]
    /// The length of the prefix the first and last keys share.
    private let prefix: Int
    /// The first and last keys read as numbers.
    private let low, high: UInt64

    /// The span of `first` to `last`; `nil` when they read as the same number (one key, or a last key that is the
    /// first followed by zeros).
    init?(first: [UInt8], last: [UInt8]) {
        self.first = first
        self.last = last
        prefix = zip(first, last).prefix { $0 == $1 }.count
        low = Self.number(first, after: prefix)
        high = Self.number(last, after: prefix)
        guard low < high else { return nil }
    }

    /// The span of the first and last keys of the cursor's table, which the cursor is left on; `nil` when the table
    /// is empty or the keys read as one number.
    ///
    /// - Throws: What LMDB throws reading the table.
    init?(of cursor: borrowing Cursor) throws {
        guard try cursor.first(), let first = try cursor.withCurrentEntry({ key, _ in Array(key) }),
            try cursor.last(), let last = try cursor.withCurrentEntry({ key, _ in Array(key) })
        else { return nil }
        self.init(first: first, last: last)
    }

    /// The share of the span between the two bounds (an open side at its end of the span), from 0 to 1.
    func share(between bounds: KeyBounds) -> Double {
        let start = position(of: bounds.lower?.key) ?? 0
        let end = position(of: bounds.upper?.key) ?? 1
        return max(end - start, 0)
    }

    /// Where `key` falls in the span, from 0 at the first key to 1 at the last; `nil` for `nil`.
    func position(of key: [UInt8]?) -> Double? {
        guard let key else { return nil }
        if key.lexicographicallyPrecedes(first) || key == first { return 0 }
        if !key.lexicographicallyPrecedes(last) { return 1 }
        // Between the ends, the key shares their prefix, and its number is between theirs.
        let number = Self.number(key, after: prefix)
        guard number > low else { return 0 }
        guard number < high else { return 1 }
        return Double(number - low) / Double(high - low)
    }

    /// The eight bytes of `key` after its first `prefix`, big-endian, missing bytes read as zeros.
    private static func number(_ key: [UInt8], after prefix: Int) -> UInt64 {
        var number: UInt64 = 0
        for position in prefix..<(prefix + 8) {
            number = number << 8 | UInt64(position < key.count ? key[position] : 0)
        }
        return number
    }
}
