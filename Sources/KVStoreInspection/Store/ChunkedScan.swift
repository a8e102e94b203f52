import LMDB

/// Walks a table in key order with one short read transaction per chunk of entries, resuming after the last entry
/// of the previous chunk.
///
/// Memory stays bounded whatever the size of the table, and no read transaction stays open long: a long-lived
/// reader would stop LMDB from reusing pages while a program writes. After each full chunk the pages it read through the
/// memory map are given back to the kernel (``LMDB/Environment/releaseMappedPages()``), so that the process's resident
/// memory does not grow with the table either. Entries written or deleted between chunks may
/// or may not be seen, as with any scan of a live store. A `dupSort` table resumes after the last key and value. A walk
/// may start at a key (a range of an index), and `body` ends it where the range ends.
///
/// ```swift
/// var scan = ChunkedScan(environment: environment, table: records, chunkSize: 1000)
/// try scan.forEach { txn, key, value in
///     print(key.count, value.count)
///     return true
/// }
/// ```
package struct ChunkedScan {
    /// The environment to read.
    package let environment: Environment
    /// The table to walk.
    package let table: Table
    /// The most entries one read transaction visits.
    package let chunkSize: Int
    /// The key the walk starts at (the first key at or after it); `nil` for the table's first key.
    package let startKey: [UInt8]?
    /// How many read transactions the walk has used so far.
    private(set) var transactions = 0
    /// The most entries one transaction visited.
    private(set) var largestChunk = 0

    /// Creates a walk over `table`.
    ///
    /// - Parameters:
    ///   - environment: The environment of the table.
    ///   - table: The table to walk.
    ///   - chunkSize: The most entries one read transaction visits.
    ///   - startKey: The key to start at (the first key at or after it), such as the lower end of a range of an
    ///     index; `nil` for the table's first key.
    package init(environment: Environment, table: Table, chunkSize: Int, startKey: [UInt8]? = nil) {
        self.environment = environment
        self.table = table
        self.chunkSize = max(1, chunkSize)
        self.startKey = startKey
    }

    /// Calls `body` with each entry in key order, inside the read transaction of its chunk.
    ///
    /// - Parameters:
    ///   - beforeChunk: Called at the start of each chunk's transaction, the last one (which may find no entry)
    ///     included; for what the walk learns from each snapshot, such as the table's own count of its entries.
    ///   - afterChunk: Called after each chunk's transaction ended, with the number of entries visited so far; for
    ///     progress lines and for writing out what the chunk produced.
    ///   - body: Receives the chunk's transaction (for lookups in other tables), and the entry's key and value,
    ///     which are valid only during the call; returns whether to go on. It must not `await`.
    /// - Throws: What LMDB, `beforeChunk`, `afterChunk` or `body` throws.
    package mutating func forEach(
        beforeChunk: (borrowing Transaction) throws -> Void = { _ in },
        afterChunk: (Int) throws -> Void = { _ in },
        _ body: (borrowing Transaction, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let (environment, table, chunkSize, startKey) = (environment, table, chunkSize, startKey)
        var resume: Entry?
        var visited = 0
        let isDupSort = table.options.contains(.dupSort)
        while true {
            var stopped = false
            let (count, last) = try environment.read { txn -> (Int, Entry?) in
                try beforeChunk(txn)
                return try txn.withCursor(on: table) { cursor -> (Int, Entry?) in
                    var found = try Self.position(cursor, after: resume, startKey: startKey, isDupSort: isDupSort)
                    var count = 0
                    var last: Entry?
                    while found && count < chunkSize && !stopped {
                        try cursor.withCurrent { key, value in
                            stopped = try !body(txn, key, value)
                            count += 1
                            if count == chunkSize { last = Entry(key: Array(key), value: Array(value)) }
                        }
                        if count < chunkSize && !stopped { found = try cursor.next() }
                    }
                    return (count, found && !stopped ? last : nil)
                }
            }
            transactions += 1
            largestChunk = max(largestChunk, count)
            visited += count
            // Only a walk that goes on reads enough for this to matter; small tables skip its cost.
            if last != nil { try environment.releaseMappedPages() }
            try afterChunk(visited)
            guard let last else { return }
            resume = last
        }
    }

    /// Moves the cursor to the first entry after `resume`, or when `resume` is `nil` to the first entry at or after
    /// `startKey` (the first entry when that is `nil` too).
    private static func position(
        _ cursor: borrowing Cursor, after resume: Entry?, startKey: [UInt8]?, isDupSort: Bool
    ) throws -> Bool {
        guard let resume else {
            guard let startKey else { return try cursor.first() }
            return try cursor.seek(atOrAfter: startKey)
        }
        if isDupSort {
            if try cursor.seek(to: resume.key, valueAtOrAfter: resume.value) {
                let same = try cursor.withCurrent { key, value in
                    key.elementsEqual(resume.key) && value.elementsEqual(resume.value)
                }
                return same == true ? try cursor.next() : true
            }
            // The key has no value at or after the last one any more: go on with the next key.
            guard try cursor.seek(atOrAfter: resume.key) else { return false }
            let sameKey = try cursor.withCurrent { key, _ in key.elementsEqual(resume.key) }
            return sameKey == true ? try cursor.nextKey() : true
        }
        guard try cursor.seek(atOrAfter: resume.key) else { return false }
        let sameKey = try cursor.withCurrent { key, _ in key.elementsEqual(resume.key) }
        return sameKey == true ? try cursor.next() : true
    }
}
