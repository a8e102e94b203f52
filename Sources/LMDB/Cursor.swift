import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A position in a table, lent to the body of ``Transaction/withCursor(on:_:)``.
///
/// Moving methods (``first()``, ``next()``, ``seek(atOrAfter:)-(Key)``...) return whether the cursor landed on an entry;
/// ``withCurrent(_:)`` then reads it without copying, ``current()`` copies it. ``scan(_:reverse:_:)`` walks a
/// range of keys.
///
/// ```swift
/// try txn.withCursor(on: table) { cursor in
///     var found = try cursor.seek(atOrAfter: Array("m".utf8))
///     while found {
///         try cursor.withCurrent { key, value in print(key.count, value.count) }
///         found = try cursor.next()
///     }
/// }
/// ```
///
/// A cursor is non-copyable and only ever borrowed, so it cannot outlive its transaction.
///
/// `@safe`: its `MDB_cursor` handle is valid for as long as the cursor is, since the cursor is lent to a closure that
/// runs inside the transaction and closed when the closure returns; memory it hands out is only lent too.
@safe
public struct Cursor: ~Copyable {
    let handle: OpaquePointer
    let transaction: OpaquePointer
    let table: Table
    let environment: Environment
    let isReadOnly: Bool

    deinit {
        // Closed before its transaction ends, which lmdb.h allows for cursors of both kinds of transaction.
        unsafe mdb_cursor_close(handle)
    }

    // MARK: - Moving

    /// Moves to the first entry of the table. Returns whether there is one.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_FIRST`.
    public func first() throws -> Bool { try move(MDB_FIRST) }

    /// Moves to the last entry of the table (the last value of the last key). Returns whether there is one.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_LAST`.
    public func last() throws -> Bool { try move(MDB_LAST) }

    /// Moves to the next entry, which in a `dupSort` table is the key's next value or the next key's first value.
    /// From an unpositioned cursor, moves to the first entry. Returns whether there is one.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_NEXT`.
    public func next() throws -> Bool { try move(MDB_NEXT) }

    /// Moves to the previous entry. From an unpositioned cursor, moves to the last entry. Returns whether there is
    /// one.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_PREV`.
    public func previous() throws -> Bool { try move(MDB_PREV) }

    /// Moves to the first value of the next key, skipping the current key's other values. Returns whether there is
    /// one.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_NEXT_NODUP`.
    public func nextKey() throws -> Bool { try move(MDB_NEXT_NODUP) }

    /// Moves to the last value of the previous key. Returns whether there is one.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_PREV_NODUP`.
    public func previousKey() throws -> Bool { try move(MDB_PREV_NODUP) }

    /// Moves to `key`. Returns whether the key is present; the cursor's position is undefined when it is not.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or the ``LMDBError`` LMDB returns for a page
    ///   it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_KEY`.
    public func seek(to key: UnsafeRawBufferPointer) throws -> Bool {
        try unsafe move(MDB_SET_KEY, key: key)
    }

    /// Moves to `key`. Returns whether the key is present; the cursor's position is undefined when it is not.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or the ``LMDBError`` LMDB returns for a page
    ///   it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_KEY`.
    @inlinable
    public func seek<Key: Collection<UInt8>>(to key: Key) throws -> Bool {
        try unsafe withBytes(key) { key in try unsafe seek(to: key) }
    }

    /// Moves to the first key greater than or equal to `key`. Returns whether there is one.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or the ``LMDBError`` LMDB returns for a page
    ///   it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_RANGE`.
    public func seek(atOrAfter key: UnsafeRawBufferPointer) throws -> Bool {
        try unsafe move(MDB_SET_RANGE, key: key)
    }

    /// Moves to the first key greater than or equal to `key`. Returns whether there is one.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or the ``LMDBError`` LMDB returns for a page
    ///   it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_RANGE`.
    @inlinable
    public func seek<Key: Collection<UInt8>>(atOrAfter key: Key) throws -> Bool {
        try unsafe withBytes(key) { key in try unsafe seek(atOrAfter: key) }
    }

    /// Moves to `key` and returns its value without a copy, or `nil` when the key is absent; the cursor's position
    /// is then undefined. In a `dupSort` table the value is the key's first.
    ///
    /// Keys looked up in ascending order through one cursor cost less than a `Transaction.unsafeBytes(forKey:in:)`
    /// each: when a key belongs on the leaf page the cursor is on, LMDB searches that page alone instead of
    /// descending the tree from its root.
    ///
    /// - Warning: The bytes are LMDB's memory map. They stay valid only until the transaction ends or writes
    ///   anything.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_KEY`.
    public func unsafeValue(forKey key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try unsafe validateKey(key, table, "mdb_cursor_get")
        var keyValue = unsafe mdbValue(key)
        var value = unsafe MDB_val()
        guard try unsafe position(MDB_SET_KEY, &keyValue, &value) else { return nil }
        return unsafe buffer(value)
    }

    // MARK: - Duplicates

    /// In a `dupSort` table, moves to `value` of `key`. Returns whether the pair is present.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or a value too long for a `dupSort` table;
    ///   the ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_BOTH`.
    public func seek(to key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Bool {
        try unsafe move(MDB_GET_BOTH, key: key, value: value)
    }

    /// In a `dupSort` table, moves to `value` of `key`. Returns whether the pair is present.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or a value too long for a `dupSort` table;
    ///   the ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_BOTH`.
    @inlinable
    public func seek<Key: Collection<UInt8>, Value: Collection<UInt8>>(to key: Key, value: Value) throws -> Bool {
        try unsafe withBytes(key) { key in
            try unsafe withBytes(value) { value in try unsafe seek(to: key, value: value) }
        }
    }

    /// In a `dupSort` table, moves to the first value of `key` greater than or equal to `value`. Returns whether
    /// there is one.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or a value too long for a `dupSort` table;
    ///   the ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_BOTH_RANGE`.
    public func seek(to key: UnsafeRawBufferPointer, valueAtOrAfter value: UnsafeRawBufferPointer) throws -> Bool {
        try unsafe move(MDB_GET_BOTH_RANGE, key: key, value: value)
    }

    /// In a `dupSort` table, moves to `value` of `key`. Returns whether the pair is present.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, or a value too long for a `dupSort` table;
    ///   the ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_BOTH`.
    @inlinable
    public func seek<Key: Collection<UInt8>, Value: Collection<UInt8>>(
        to key: Key,
        valueAtOrAfter value: Value
    ) throws -> Bool {
        try unsafe withBytes(key) { key in
            try unsafe withBytes(value) { value in try unsafe seek(to: key, valueAtOrAfter: value) }
        }
    }

    /// Moves to the current key's first value. Returns whether the cursor is on a key.
    ///
    /// - Throws: ``LMDBError/invalidArgument`` when the cursor is not on an entry, ``LMDBError/incompatible`` when the
    ///   table is not `dupSort`, or the ``LMDBError`` LMDB returns for a page it cannot read.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_FIRST_DUP`.
    public func firstDuplicate() throws -> Bool { try move(MDB_FIRST_DUP) }

    /// Moves to the current key's last value. Returns whether the cursor is on a key.
    ///
    /// - Throws: ``LMDBError/invalidArgument`` when the cursor is not on an entry, ``LMDBError/incompatible`` when the
    ///   table is not `dupSort`, or the ``LMDBError`` LMDB returns for a page it cannot read.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_LAST_DUP`.
    public func lastDuplicate() throws -> Bool { try move(MDB_LAST_DUP) }

    /// Moves to the current key's next value. Returns false after the key's last value.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_NEXT_DUP`.
    public func nextDuplicate() throws -> Bool { try move(MDB_NEXT_DUP) }

    /// Moves to the current key's previous value. Returns false before the key's first value.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``); running off the table is `false`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_PREV_DUP`.
    public func previousDuplicate() throws -> Bool { try move(MDB_PREV_DUP) }

    /// The number of values of the current key in a `dupSort` table.
    ///
    /// - Throws: ``LMDBError/invalidArgument`` when the table is not `dupSort` or the cursor is not on an entry.
    ///
    /// The corresponding LMDB function is `mdb_cursor_count`.
    public func duplicateCount() throws -> Int {
        guard table.options.contains(.dupSort) else {
            throw failure(EINVAL, "mdb_cursor_count", table, detail: "The table is not a dupSort table")
        }
        var count = 0
        try unsafe check(mdb_cursor_count(handle, &count), "mdb_cursor_count", table)
        return count
    }

    /// Walks the keys of a `dupSort` table from the one the cursor is on, forward (backward when `reverse`), calling
    /// `body` with each key and its number of values, until `body` returns `false` or the keys end. Nothing is
    /// called when the cursor is not on an entry.
    ///
    /// This is the fastest way to visit the distinct keys of a table, such as the values of an index with how many
    /// entries hold each: one call into LMDB reaches a key and one counts its values.
    ///
    /// `body` may move the cursor among the values of the key it is given, and the walk goes on from that key; it
    /// must not move the cursor to another key, nor write.
    ///
    /// - Warning: The key's bytes are LMDB's memory map, valid only inside `body`.
    /// - Parameters:
    ///   - reverse: Whether to walk to the previous keys rather than the next ones.
    ///   - body: Called for each key with its number of values; returns whether to go on.
    /// - Throws: ``LMDBError/invalidArgument`` when the table is not `dupSort`, the ``LMDBError`` LMDB returns for a
    ///   page it cannot read (``LMDBError/corrupted``, ``LMDBError/pageNotFound``), or what `body` throws.
    ///
    /// The corresponding LMDB functions are `mdb_cursor_get` with `MDB_GET_CURRENT`, then `MDB_NEXT_NODUP` or
    /// `MDB_PREV_NODUP`, and `mdb_cursor_count`.
    public func forEachKey(
        reverse: Bool = false, _ body: (_ key: UnsafeRawBufferPointer, _ count: Int) throws -> Bool
    ) throws {
        guard table.options.contains(.dupSort) else {
            throw failure(EINVAL, "mdb_cursor_count", table, detail: "The table is not a dupSort table")
        }
        // The calls into LMDB made here rather than through `currentBuffers()`, `nextKeyBuffers(reverse:)` and
        // `duplicateCount()`, whose layers cost about 40 instructions a key (9% of a sum over an index's keys).
        var key = unsafe MDB_val()
        var value = unsafe MDB_val()
        var code = unsafe mdb_cursor_get(handle, &key, &value, MDB_GET_CURRENT)
        // An unpositioned cursor answers EINVAL; one whose entry was just deleted, MDB_NOTFOUND.
        if code == EINVAL || code == MDB_NOTFOUND { return }
        let step = reverse ? MDB_PREV_NODUP : MDB_NEXT_NODUP
        while code == 0 {
            var count = 0
            try unsafe check(mdb_cursor_count(handle, &count), "mdb_cursor_count", table)
            guard try unsafe body(buffer(key), count) else { return }
            code = unsafe mdb_cursor_get(handle, &key, &value, step)
        }
        if code != MDB_NOTFOUND { throw failure(code, "mdb_cursor_get", table) }
    }

    /// Counts the values of the keys from the one the cursor is on, forward (backward when `reverse`), up to
    /// `bound`: the keys before it in the walk's direction, and `bound` itself when `includingBound`; to the end of
    /// the table without a bound. Keys are ordered by the table's comparison, as LMDB orders them; a key of a table
    /// that is not `dupSort` counts one.
    ///
    /// This is the fastest way to count the entries of a range of keys, such as the models in a range of an index:
    /// per key, one call into LMDB moves, one counts its values and one compares the key with the bound, and no
    /// closure is called. The cursor is left on the first key not counted, or past the end.
    ///
    /// - Parameters:
    ///   - reverse: Whether to walk to the previous keys rather than the next ones.
    ///   - bound: The key the count stops at, or `nil` for the end of the table.
    ///   - includingBound: Whether the values of `bound` itself are counted.
    ///   - limit: The count past which to stop: the answer is then `nil`.
    /// - Returns: The number of values counted (0 when the cursor is not on an entry), or `nil` when it passed
    ///   `limit`.
    /// - Throws: ``LMDBError/badValueSize`` for a bound LMDB would not accept as a key of the table, the
    ///   ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``, ``LMDBError/pageNotFound``).
    ///
    /// The corresponding LMDB functions are `mdb_cursor_get` with `MDB_GET_CURRENT`, then `MDB_NEXT_NODUP` or
    /// `MDB_PREV_NODUP`, `mdb_cursor_count` and `mdb_cmp`.
    public func countValues(
        reverse: Bool = false, upTo bound: UnsafeRawBufferPointer?, includingBound: Bool, limit: Int = .max
    ) throws -> Int? {
        if let bound = unsafe bound { try unsafe validateKey(bound, table, "mdb_cmp") }
        var boundValue = unsafe bound.map(mdbValue) ?? MDB_val()
        let hasBound = unsafe bound != nil
        let isDupSort = table.options.contains(.dupSort)
        let dbi = unsafe mdb_cursor_dbi(handle)
        var key = unsafe MDB_val()
        var value = unsafe MDB_val()
        var code = unsafe mdb_cursor_get(handle, &key, &value, MDB_GET_CURRENT)
        // An unpositioned cursor answers EINVAL; one whose entry was just deleted, MDB_NOTFOUND.
        if code == EINVAL || code == MDB_NOTFOUND { return 0 }
        let step = reverse ? MDB_PREV_NODUP : MDB_NEXT_NODUP
        var total = 0
        while code == 0 {
            if hasBound {
                let order = unsafe mdb_cmp(transaction, dbi, &key, &boundValue)
                let isPastBound = reverse ? order < 0 : order > 0
                if isPastBound || (order == 0 && !includingBound) { return total }
            }
            var count = 1
            if isDupSort { try unsafe check(mdb_cursor_count(handle, &count), "mdb_cursor_count", table) }
            total += count
            if total > limit { return nil }
            code = unsafe mdb_cursor_get(handle, &key, &value, step)
        }
        if code != MDB_NOTFOUND { throw failure(code, "mdb_cursor_get", table) }
        return total
    }

    /// Calls `body` with the values of `key` in a `dupFixed` table, a page of values at a time: each buffer holds
    /// whole values of the table's fixed size, back to back.
    ///
    /// This is the fastest way to read many values of one key, such as the IDs under an index entry.
    ///
    /// - Warning: The buffers are valid only inside `body`.
    /// - Parameters:
    ///   - key: The key whose values to read.
    ///   - body: Called once per page of values.
    /// - Returns: Whether the key is present.
    /// - Throws: ``LMDBError/incompatible`` when the table is not `dupFixed`, or what `body` throws.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_MULTIPLE` and `MDB_NEXT_MULTIPLE`.
    @discardableResult
    public func forEachDuplicatePage(
        ofKey key: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        guard table.options.contains(.dupFixed) else {
            throw failure(
                MDB_INCOMPATIBLE, "mdb_cursor_get", table, detail: "Pages of values need a dupFixed table")
        }
        var keyValue = unsafe MDB_val()
        var data = unsafe MDB_val()
        try unsafe validateKey(key, table, "mdb_cursor_get")
        unsafe keyValue = unsafe mdbValue(key)
        guard try unsafe position(MDB_SET_KEY, &keyValue, &data) else { return false }
        // A key with a single value has no duplicate subtree; LMDB then answers MDB_GET_MULTIPLE with success and
        // leaves `data` as it was, so the value MDB_SET_KEY returned is the only page.
        let single = unsafe data
        unsafe data = unsafe MDB_val()
        var code = unsafe mdb_cursor_get(handle, &keyValue, &data, MDB_GET_MULTIPLE)
        if unsafe code == 0 && data.mv_data == nil {
            try unsafe body(buffer(single))
            return true
        }
        while code == 0 {
            try unsafe body(buffer(data))
            code = unsafe mdb_cursor_get(handle, &keyValue, &data, MDB_NEXT_MULTIPLE)
        }
        if code != MDB_NOTFOUND { throw failure(code, "mdb_cursor_get", table) }
        return true
    }

    /// Calls `body` with the values of `key` in a `dupFixed` table, a page of values at a time: each buffer holds
    /// whole values of the table's fixed size, back to back.
    ///
    /// This is the fastest way to read many values of one key, such as the IDs under an index entry.
    ///
    /// - Warning: The buffers are valid only inside `body`.
    /// - Parameters:
    ///   - key: The key whose values to read.
    ///   - body: Called once per page of values.
    /// - Returns: Whether the key is present.
    /// - Throws: ``LMDBError/incompatible`` when the table is not `dupFixed`, or what `body` throws.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_MULTIPLE` and `MDB_NEXT_MULTIPLE`.
    @inlinable
    @discardableResult
    public func forEachDuplicatePage<Key: Collection<UInt8>>(
        ofKey key: Key,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        try unsafe withBytes(key) { key in try unsafe forEachDuplicatePage(ofKey: key, body) }
    }

    // MARK: - Reading

    /// Calls `body` with the key and value the cursor is on, without copying them, or returns `nil` when the cursor
    /// is not on an entry.
    ///
    /// - Warning: The bytes are LMDB's memory map, valid only inside `body`.
    /// - Returns: What `body` returns, or `nil`.
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``), or what `body`
    ///   throws.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_CURRENT`.
    @inlinable
    public func withCurrent<R>(
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        // Inlinable over a call that is not generic: a caller in another module gets code of its own for `R`, where
        // an unspecialized generic call would look up the metadata of `R?` at run time, on every entry of a loop.
        guard let (key, value) = try unsafe currentBuffers() else { return nil }
        return unsafe try body(key, value)
    }

    /// The key and value the cursor is on, without copying them, or `nil` when the cursor is not on an entry: the
    /// reading of ``withCurrent(_:)``.
    ///
    /// - Warning: The bytes are LMDB's memory map, valid until the cursor moves or writes, or its transaction ends.
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_CURRENT`.
    @unsafe
    public func currentBuffers() throws -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        var key = unsafe MDB_val()
        var value = unsafe MDB_val()
        let code = unsafe mdb_cursor_get(handle, &key, &value, MDB_GET_CURRENT)
        // An unpositioned cursor answers EINVAL; one whose entry was just deleted, MDB_NOTFOUND.
        if code == EINVAL || code == MDB_NOTFOUND { return nil }
        try check(code, "mdb_cursor_get", table)
        return unsafe (buffer(key), buffer(value))
    }

    /// Moves to the next key, as ``nextKey()`` does (or, when `reverse`, to the previous one, as ``previousKey()``
    /// does), and runs `body` with the entry it lands on: the move and the read in one call into LMDB. Returns `nil`
    /// when there is no such key.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``), or what `body` throws; running off the table is `nil`, not an error.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_NEXT_NODUP` or `MDB_PREV_NODUP`.
    @inlinable
    public func withNextKey<R>(
        reverse: Bool = false, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        // Inlinable over a call that is not generic, as ``withCurrent(_:)`` is.
        guard let (key, value) = try unsafe nextKeyBuffers(reverse: reverse) else { return nil }
        return unsafe try body(key, value)
    }

    /// Moves to the next key (the previous one when `reverse`) and returns the entry it lands on without copying it,
    /// or `nil` when there is none: the moving and reading of ``withNextKey(reverse:_:)``.
    ///
    /// - Warning: The bytes are LMDB's memory map, valid until the cursor moves or writes, or its transaction ends.
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``,
    ///   ``LMDBError/pageNotFound``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_NEXT_NODUP` or `MDB_PREV_NODUP`.
    @unsafe
    public func nextKeyBuffers(
        reverse: Bool = false
    ) throws -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        var key = unsafe MDB_val()
        var value = unsafe MDB_val()
        guard try unsafe position(reverse ? MDB_PREV_NODUP : MDB_NEXT_NODUP, &key, &value) else { return nil }
        return unsafe (buffer(key), buffer(value))
    }

    /// A copy of the entry the cursor is on, or `nil` when it is not on one.
    ///
    /// - Throws: The ``LMDBError`` LMDB returns for a page it cannot read (``LMDBError/corrupted``).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_CURRENT`.
    public func current() throws -> Entry? {
        try unsafe withCurrent { key, value in unsafe Entry(key: Array(key), value: Array(value)) }
    }

    // MARK: - Ranges

    /// Walks the entries whose keys are in `range`, calling `body` with each key and value, until `body` returns
    /// false or the range ends.
    ///
    /// In a `dupSort` table every value of a key is an entry, in value order.
    ///
    /// - Warning: The bytes are valid only inside `body`, and the table must not be written during the walk.
    /// - Parameters:
    ///   - range: The keys to visit.
    ///   - reverse: Whether to walk from the last key of the range to the first.
    ///   - body: Called for each entry; returns whether to go on.
    /// - Throws: ``LMDBError/incompatible`` for a prefix range in a table whose keys are not in byte-wise order, or
    ///   what `body` throws.
    public func scan(
        _ range: KeyRange = .all,
        reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        if range.isPrefix && !table.options.isDisjoint(with: [.reverseKey, .integerKey]) {
            throw failure(
                MDB_INCOMPATIBLE, "mdb_cursor_get", table,
                detail: "Prefix ranges need the default key order, not reverseKey or integerKey")
        }
        var key = unsafe MDB_val()
        var value = unsafe MDB_val()
        if reverse {
            var found: Bool
            if let upper = range.upperBound {
                found = try unsafe seek(atOrAfter: upper, &key, &value)
                found = try unsafe position(found ? MDB_PREV : MDB_LAST, &key, &value)
            } else {
                found = try unsafe position(MDB_LAST, &key, &value)
            }
            while found {
                if let lower = range.lowerBound, unsafe compare(key, lower) < 0 { return }
                guard try unsafe body(buffer(key), buffer(value)) else { return }
                found = try unsafe position(MDB_PREV, &key, &value)
            }
        } else {
            var found: Bool
            if let lower = range.lowerBound {
                found = try unsafe seek(atOrAfter: lower, &key, &value)
            } else {
                found = try unsafe position(MDB_FIRST, &key, &value)
            }
            while found {
                if let upper = range.upperBound, unsafe compare(key, upper) >= 0 { return }
                guard try unsafe body(buffer(key), buffer(value)) else { return }
                found = try unsafe position(MDB_NEXT, &key, &value)
            }
        }
    }

    // MARK: - Writing

    /// Stores `value` under `key` and moves the cursor to it.
    ///
    /// - Parameters:
    ///   - value: The bytes to store. In a `dupSort` table at most ``Environment/maxKeySize`` bytes.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - options: Conditions on the write and hints for speed.
    /// - Throws: ``LMDBError/keyExists`` when an option forbids the write, ``LMDBError/badValueSize`` for a key or
    ///   value of the wrong size, ``LMDBError/accessDenied`` in a read transaction.
    ///
    /// The corresponding LMDB function is `mdb_cursor_put`.
    public func put(
        _ value: UnsafeRawBufferPointer,
        forKey key: UnsafeRawBufferPointer,
        options: Transaction.PutOptions = []
    ) throws {
        try checkWritable("mdb_cursor_put", table)
        try unsafe validateKey(key, table, "mdb_cursor_put")
        try unsafe validateValue(value, table, "mdb_cursor_put")
        var keyValue = unsafe mdbValue(key)
        var data = unsafe mdbValue(value)
        try unsafe check(mdb_cursor_put(handle, &keyValue, &data, options.rawValue), "mdb_cursor_put", table)
    }

    /// Stores `value` under `key` and moves the cursor to it.
    ///
    /// - Parameters:
    ///   - value: The bytes to store. In a `dupSort` table at most ``Environment/maxKeySize`` bytes.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - options: Conditions on the write and hints for speed.
    /// - Throws: ``LMDBError/keyExists`` when an option forbids the write, ``LMDBError/badValueSize`` for a key or
    ///   value of the wrong size, ``LMDBError/accessDenied`` in a read transaction.
    ///
    /// The corresponding LMDB function is `mdb_cursor_put`.
    @inlinable
    public func put<Value: Collection<UInt8>, Key: Collection<UInt8>>(
        _ value: Value,
        forKey key: Key,
        options: Transaction.PutOptions = []
    ) throws {
        try unsafe withBytes(value) { value in
            try unsafe withBytes(key) { key in try unsafe put(value, forKey: key, options: options) }
        }
    }

    /// Deletes the entry the cursor is on; the cursor then stands on the next entry.
    ///
    /// - Warning: Debian's LMDB 0.9.24 mishandles repeated deletes through a cursor in `dupSort` tables (ITS#9376,
    ///   ITS#9461): collect the keys first and delete them with ``Transaction/delete(_:forKey:in:)-(_,Key,_)`` there.
    /// - Parameter allDuplicates: In a `dupSort` table, whether to delete every value of the current key.
    /// - Throws: ``LMDBError/accessDenied`` in a read transaction, ``LMDBError/invalidArgument`` when the cursor is
    ///   not on an entry.
    ///
    /// The corresponding LMDB function is `mdb_cursor_del`.
    public func deleteCurrent(allDuplicates: Bool = false) throws {
        try checkWritable("mdb_cursor_del", table)
        try unsafe check(
            mdb_cursor_del(handle, allDuplicates ? UInt32(MDB_NODUPDATA) : 0), "mdb_cursor_del", table)
    }

    // MARK: - Internals

    private func move(_ operation: MDB_cursor_op) throws -> Bool {
        var key = unsafe MDB_val()
        var value = unsafe MDB_val()
        return try unsafe position(operation, &key, &value)
    }

    private func move(
        _ operation: MDB_cursor_op,
        key: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer? = nil
    ) throws -> Bool {
        try unsafe validateKey(key, table, "mdb_cursor_get")
        if let value = unsafe value { try unsafe validateValue(value, table, "mdb_cursor_get") }
        var keyValue = unsafe mdbValue(key)
        var data = unsafe value.map(mdbValue) ?? MDB_val()
        return try unsafe position(operation, &keyValue, &data)
    }

    /// Moves to the first key at or after `bound`, leaving the entry in `key` and `value`.
    private func seek(atOrAfter bound: [UInt8], _ key: inout MDB_val, _ value: inout MDB_val) throws -> Bool {
        try unsafe bound.withUnsafeBytes { bound in
            try unsafe validateKey(bound, table, "mdb_cursor_get")
            unsafe key = unsafe mdbValue(bound)
            return try unsafe position(MDB_SET_RANGE, &key, &value)
        }
    }

    /// The one place that calls `mdb_cursor_get` for moves: `MDB_NOTFOUND` is an answer, not an error.
    private func position(_ operation: MDB_cursor_op, _ key: inout MDB_val, _ value: inout MDB_val) throws -> Bool {
        let code = unsafe mdb_cursor_get(handle, &key, &value, operation)
        if code == MDB_NOTFOUND { return false }
        try check(code, "mdb_cursor_get", table)
        return true
    }

    private func compare(_ key: MDB_val, _ bound: [UInt8]) -> Int32 {
        unsafe bound.withUnsafeBytes { bound in
            var key = unsafe key
            var other = unsafe mdbValue(bound)
            return unsafe mdb_cmp(transaction, mdb_cursor_dbi(handle), &key, &other)
        }
    }
}

extension Cursor: TransactionContext {}

@available(*, unavailable)
extension Cursor: Sendable {}

extension Transaction {
    /// Runs `body` with a cursor on `table`, closed when `body` returns.
    ///
    /// - Parameters:
    ///   - table: The table to walk.
    ///   - body: The work to do with the cursor.
    /// - Returns: What `body` returns.
    /// - Throws: ``LMDBError/badTable`` for a handle dropped already or of another environment, another
    ///   ``LMDBError`` when LMDB cannot open the cursor, or what `body` throws.
    ///
    /// The corresponding LMDB function is `mdb_cursor_open`.
    public func withCursor<R>(on table: Table, _ body: (borrowing Cursor) throws -> R) throws -> R {
        var opened: OpaquePointer?
        try unsafe check(
            mdb_cursor_open(handle, try dbi(of: table, "mdb_cursor_open"), &opened), "mdb_cursor_open", table)
        guard let opened = unsafe opened else { throw failure(ENOMEM, "mdb_cursor_open", table) }
        let cursor = unsafe Cursor(
            handle: opened, transaction: handle, table: table, environment: environment, isReadOnly: isReadOnly)
        return try body(cursor)
    }

    /// Walks the entries of `table` whose keys are in `range`, until `body` returns false or the range ends.
    ///
    /// - Warning: The bytes are valid only inside `body`, and the table must not be written during the walk.
    /// - Parameters:
    ///   - table: The table to walk.
    ///   - range: The keys to visit.
    ///   - reverse: Whether to walk from the last key of the range to the first.
    ///   - body: Called for each entry; returns whether to go on.
    /// - Throws: What ``Cursor/scan(_:reverse:_:)`` throws.
    public func scan(
        _ table: Table,
        in range: KeyRange = .all,
        reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try withCursor(on: table) { cursor in try unsafe cursor.scan(range, reverse: reverse, body) }
    }

    /// Copies of the entries of `table` whose keys are in `range`, in order.
    ///
    /// - Parameters:
    ///   - table: The table to read.
    ///   - range: The keys to read.
    ///   - reverse: Whether to list from the last key of the range to the first.
    ///   - limit: The most entries to return, or `nil` for all.
    /// - Returns: The entries.
    /// - Throws: ``LMDBError/badTable`` for a handle dropped already or of another environment,
    ///   ``LMDBError/incompatible`` for a prefix range in a table whose keys are not in byte-wise order, or the
    ///   ``LMDBError`` LMDB returns for a page it cannot read.
    public func entries(
        in table: Table,
        range: KeyRange = .all,
        reverse: Bool = false,
        limit: Int? = nil
    ) throws -> [Entry] {
        var entries: [Entry] = []
        if let limit, limit <= 0 { return entries }
        try unsafe scan(table, in: range, reverse: reverse) { key, value in
            unsafe entries.append(Entry(key: Array(key), value: Array(value)))
            return limit.map { entries.count < $0 } ?? true
        }
        return entries
    }
}
