/// The index keys of one model for every index of its entity, in one buffer.
///
/// A save computes the keys of the model it writes, and of the model it replaces, to move index entries from the
/// old keys to the new ones. Kept in the entity's writer state and emptied before each use, a set costs no
/// allocation once its buffers have grown, where an array of key arrays per index cost several per save.
struct IndexKeySet {
    /// The keys' bytes, one after the other.
    private var bytes: [UInt8] = []
    /// For each key, in the order appended (index by index): the position of its index and where its bytes end.
    private var ends: [(index: Int, end: Int)] = []
    /// The whole keys of the keys that were cut, one after the other, with the cut key each belongs to.
    private var whole: [(index: Int, cut: [UInt8], whole: [UInt8])] = []
    /// How the store completes cut keys.
    let longKeyHash: LongKeyHash

    /// Creates an empty set for a store whose cut keys end with `longKeyHash`.
    init(longKeyHash: LongKeyHash = .standard) {
        self.longKeyHash = longKeyHash
    }

    /// Whether the set has no key.
    var isEmpty: Bool { ends.isEmpty }

    /// Removes every key, keeping the buffers.
    mutating func removeAll() {
        bytes.clear()
        ends.clear()
        whole.clear()
    }

    /// The whole key of the cut key `key` of the index at position `index`: the bytes the value encodes to before
    /// LMDB's limit cut them; `key` itself when it was not cut.
    func wholeKey(of key: BorrowedBytes, index: Int) -> [UInt8] {
        whole.first { $0.index == index && $0.cut.elementsEqual(key) }?.whole ?? Array(key)
    }

    /// Appends a key of the index at position `index`, which `build` writes, cut to LMDB's key limit.
    ///
    /// - Parameter unique: Whether to leave the key out when the index already has the same key (the elements of a
    ///   multi-entry index's array may repeat).
    mutating func append(index: Int, unique: Bool = false, _ build: (inout [UInt8]) -> Void) {
        let start = bytes.count
        build(&bytes)
        if bytes.count - start > IndexKey.maximumLength {
            let wholeKey = Array(bytes[start...])
            IndexKey.finalize(&bytes, from: start, hash: longKeyHash)
            whole.append((index, Array(bytes[start...]), wholeKey))
        }
        if unique {
            let key = bytes[start...]
            var keyStart = 0
            for (keyIndex, end) in ends {
                if keyIndex == index, bytes[keyStart..<end].elementsEqual(key) {
                    bytes.removeSubrange(start...)
                    return
                }
                keyStart = end
            }
        }
        ends.append((index, bytes.count))
    }

    /// Calls `body` with each key of the index at position `index`, in the order they were appended.
    func forEachKey(of index: Int, _ body: (BorrowedBytes) throws -> Void) rethrows {
        try bytes.withBorrowedBytes { buffer in
            var start = 0
            for (keyIndex, end) in ends {
                if keyIndex == index { try body(buffer.extracting(start..<end)) }
                start = end
            }
        }
    }

    /// Calls `body` with the one key of the index at position `index` (a unique index has one per model), or `nil`.
    func withOnlyKey<R>(of index: Int, _ body: (BorrowedBytes?) throws -> R) rethrows -> R {
        try bytes.withBorrowedBytes { buffer in
            var start = 0
            for (keyIndex, end) in ends {
                if keyIndex == index { return try body(buffer.extracting(start..<end)) }
                start = end
            }
            return try body(nil)
        }
    }

    /// Whether the index at position `index` has the key `key`.
    func contains(_ key: BorrowedBytes, of index: Int) -> Bool {
        var start = 0
        for (keyIndex, end) in ends {
            if keyIndex == index, end - start == key.count, bytes[start..<end].elementsEqual(key) { return true }
            start = end
        }
        return false
    }

    /// The keys of the index at position `index`, as arrays.
    func keys(of index: Int) -> [[UInt8]] {
        var keys: [[UInt8]] = []
        forEachKey(of: index) { keys.append(Array($0)) }
        return keys
    }
}
