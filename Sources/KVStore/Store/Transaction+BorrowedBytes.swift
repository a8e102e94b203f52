import LMDB

// The engine's reads of LMDB's memory map, as `BorrowedBytes`. One of the module's few files with unsafe code
// (ARCHITECTURE.md lists them): the binding lends the map as raw buffers, and this file turns each into a view.
//
// Invariant: a view of the map stays valid until its transaction ends or writes anything (LMDB's rule for
// `mdb_get` and `mdb_cursor_get`), and a view lent to a closure only for the closure. Each function below says which
// of the two it gives. The engine reads what it needs before its next write, and copies (`Array(view)`) what it
// keeps.
//
// Keys and values going into the binding need no adapter: `BorrowedBytes` is a `Collection<UInt8>` with contiguous
// storage, which the binding's generic APIs take without copying.

extension Transaction {
    /// Runs `body` with the bytes stored under `key`, or with `nil` when it is absent; the view is valid only inside
    /// `body`.
    ///
    /// - Throws: What `withUnsafeBytes(forKey:in:_:)` throws: `LMDBError.badValueSize` for an empty or too long key,
    ///   `LMDBError.badTable` for a stale handle; or what `body` throws.
    @inline(__always)
    func withBytes<Key: Collection<UInt8>, R>(
        forKey key: Key, in table: Table, _ body: (BorrowedBytes?) throws -> R
    ) throws -> R {
        try unsafe withUnsafeBytes(forKey: key, in: table) { (bytes: UnsafeRawBufferPointer?) in
            try unsafe body(bytes.map { unsafe BorrowedBytes(unsafe: $0) })
        }
    }

    /// The bytes stored under `key`, or `nil` when it is absent; they stay valid until this transaction ends or
    /// writes.
    ///
    /// - Throws: What `unsafeBytes(forKey:in:)` throws: `LMDBError.badValueSize` for an empty or too long key,
    ///   `LMDBError.badTable` for a stale handle.
    @inline(__always)
    func bytes(forKey key: BorrowedBytes, in table: Table) throws -> BorrowedBytes? {
        try unsafe key.withUnsafeBytes { key in
            try unsafe unsafeBytes(forKey: key, in: table).map { unsafe BorrowedBytes(unsafe: $0) }
        }
    }

    /// Stores `value` under `key` unless the key is present, and otherwise returns the bytes already there, which
    /// stay valid until this transaction ends or writes again.
    ///
    /// - Throws: What `unsafePutIfAbsent(_:forKey:in:)` throws: `LMDBError.badValueSize`, `LMDBError.accessDenied`
    ///   in a read transaction, `LMDBError.mapFull`.
    @inline(__always)
    func putIfAbsent(_ value: BorrowedBytes, forKey key: BorrowedBytes, in table: Table) throws -> BorrowedBytes? {
        try unsafe value.withUnsafeBytes { value in
            try unsafe key.withUnsafeBytes { key in
                try unsafe unsafePutIfAbsent(value, forKey: key, in: table).map { unsafe BorrowedBytes(unsafe: $0) }
            }
        }
    }

    /// Stores `value` under `key` when the key sorts after every key of `table` (not a `dupSort` table); otherwise
    /// writes nothing and returns `false`.
    ///
    /// - Throws: What `unsafeAppend(_:forKey:in:)` throws: `LMDBError.badValueSize`, `LMDBError.accessDenied` in a
    ///   read transaction, `LMDBError.mapFull`.
    @inline(__always)
    func append(_ value: BorrowedBytes, forKey key: BorrowedBytes, in table: Table) throws -> Bool {
        try unsafe value.withUnsafeBytes { value in
            try unsafe key.withUnsafeBytes { key in try unsafe unsafeAppend(value, forKey: key, in: table) }
        }
    }

    /// Runs `body` with each entry of `range` of `table`, in key order or reversed, while it returns `true`; the
    /// views are valid only inside `body`.
    ///
    /// - Throws: What `scan(_:in:reverse:_:)` throws, or what `body` throws.
    @inline(__always)
    func scanEntries(
        _ table: Table, in range: KeyRange = .all, reverse: Bool = false,
        _ body: (_ key: BorrowedBytes, _ value: BorrowedBytes) throws -> Bool
    ) throws {
        try unsafe scan(table, in: range, reverse: reverse) { (key: UnsafeRawBufferPointer, value) in
            try unsafe body(BorrowedBytes(unsafe: key), BorrowedBytes(unsafe: value))
        }
    }
}

extension Cursor {
    /// Moves to `key` and returns its value (its first value in a `dupSort` table), or `nil` when the key is absent;
    /// the bytes stay valid until the transaction ends or writes.
    ///
    /// - Throws: What `unsafeValue(forKey:)` throws: `LMDBError.badValueSize` for an empty or too long key.
    @inline(__always)
    func value(forKey key: BorrowedBytes) throws -> BorrowedBytes? {
        try unsafe key.withUnsafeBytes { key in
            try unsafe unsafeValue(forKey: key).map { unsafe BorrowedBytes(unsafe: $0) }
        }
    }

    /// Runs `body` with the key and value at the cursor, or returns `nil` when it is not on an entry; the views are
    /// valid only inside `body`.
    ///
    /// - Throws: What `withCurrent(_:)` throws, or what `body` throws.
    @inline(__always)
    func withCurrentEntry<R>(_ body: (_ key: BorrowedBytes, _ value: BorrowedBytes) throws -> R) throws -> R? {
        try unsafe withCurrent { (key: UnsafeRawBufferPointer, value) in
            try unsafe body(BorrowedBytes(unsafe: key), BorrowedBytes(unsafe: value))
        }
    }

    /// Moves to the next key (the previous one when `reverse`) and runs `body` with the entry it lands on, or returns
    /// `nil` when there is none; the views are valid only inside `body`.
    ///
    /// - Throws: What `withNextKey(reverse:_:)` throws, or what `body` throws.
    @inline(__always)
    func withNextKeyEntry<R>(
        reverse: Bool, _ body: (_ key: BorrowedBytes, _ value: BorrowedBytes) throws -> R
    ) throws -> R? {
        try unsafe withNextKey(reverse: reverse) { (key: UnsafeRawBufferPointer, value) in
            try unsafe body(BorrowedBytes(unsafe: key), BorrowedBytes(unsafe: value))
        }
    }

    /// Walks the keys of a `dupSort` table from the one the cursor is on (backward when `reverse`), calling `body`
    /// with each key and its number of values until it returns `false`; the views are valid only inside `body`.
    ///
    /// - Throws: What `forEachKey(reverse:_:)` throws, or what `body` throws.
    @inline(__always)
    func forEachKeyEntry(reverse: Bool, _ body: (_ key: BorrowedBytes, _ count: Int) throws -> Bool) throws {
        try unsafe forEachKey(reverse: reverse) { (key: UnsafeRawBufferPointer, count) in
            try unsafe body(BorrowedBytes(unsafe: key), count)
        }
    }

    /// Counts the values of the keys from the cursor's, forward or backward, up to `bound` (included when
    /// `includingBound`); `nil` once past `limit`.
    ///
    /// - Throws: What `countValues(reverse:upTo:includingBound:limit:)` throws.
    @inline(__always)
    func countValues(reverse: Bool, upToKey bound: [UInt8]?, includingBound: Bool, limit: Int) throws -> Int? {
        guard let bound else {
            return try unsafe countValues(reverse: reverse, upTo: nil, includingBound: false, limit: limit)
        }
        return try unsafe bound.withUnsafeBytes { bound in
            try unsafe countValues(reverse: reverse, upTo: bound, includingBound: includingBound, limit: limit)
        }
    }

    /// Runs `body` with each page of the fixed-size values of `key` in a `dupFixed` table; the views are valid only
    /// inside `body`. Returns whether the key is present.
    ///
    /// - Throws: What `forEachDuplicatePage(ofKey:_:)` throws, or what `body` throws.
    @discardableResult
    @inline(__always)
    func forEachValuePage<Key: Collection<UInt8>>(ofKey key: Key, _ body: (BorrowedBytes) throws -> Void) throws -> Bool
    {
        try unsafe forEachDuplicatePage(ofKey: key) { (page: UnsafeRawBufferPointer) in
            try unsafe body(BorrowedBytes(unsafe: page))
        }
    }

    /// Runs `body` with each entry of `range` from the cursor's table while it returns `true`; the views are valid
    /// only inside `body`.
    ///
    /// - Throws: What `scan(_:reverse:_:)` throws, or what `body` throws.
    @inline(__always)
    func scanEntries(
        _ range: KeyRange = .all, reverse: Bool = false,
        _ body: (_ key: BorrowedBytes, _ value: BorrowedBytes) throws -> Bool
    ) throws {
        try unsafe scan(range, reverse: reverse) { (key: UnsafeRawBufferPointer, value) in
            try unsafe body(BorrowedBytes(unsafe: key), BorrowedBytes(unsafe: value))
        }
    }
}
