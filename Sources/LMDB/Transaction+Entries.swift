import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads, writes and deletes of single entries.
///
/// Each operation takes keys and values either as `UnsafeRawBufferPointer` or as any collection of bytes (`[UInt8]`,
/// `Data`, `String.UTF8View`, slices); collections with contiguous storage are not copied.
extension Transaction {
    // MARK: - Reading

    /// The bytes stored under `key`, or `nil` when the key is absent, without a copy.
    ///
    /// - Warning: The bytes are LMDB's memory map. They stay valid only until this transaction ends or writes
    ///   anything; prefer `withUnsafeBytes(forKey:in:_:)`, which scopes them. In a
    ///   `dupSort` table they are the key's first value.
    /// - Parameters:
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to read.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    public func unsafeBytes(forKey key: UnsafeRawBufferPointer, in table: Table) throws -> UnsafeRawBufferPointer? {
        try unsafe validateKey(key, table, "mdb_get")
        var keyValue = unsafe mdbValue(key)
        var data = unsafe MDB_val()
        let code = unsafe mdb_get(handle, try dbi(of: table, "mdb_get"), &keyValue, &data)
        if code == MDB_NOTFOUND { return nil }
        try check(code, "mdb_get", table)
        return unsafe buffer(data)
    }

    /// Calls `body` with the bytes stored under `key`, or with `nil` when the key is absent.
    ///
    /// - Warning: The bytes are LMDB's memory map. They are valid only inside `body`: copy what must outlive it.
    ///   In a `dupSort` table they are the key's first value.
    /// - Parameters:
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to read.
    ///   - body: The work to do with the value.
    /// - Returns: What `body` returns.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/badTable`` for a handle
    ///   dropped already or of another environment, or what `body` throws.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    @inlinable
    public func withUnsafeBytes<R>(
        forKey key: UnsafeRawBufferPointer,
        in table: Table,
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try unsafe body(unsafeBytes(forKey: key, in: table))
    }

    /// Calls `body` with the bytes stored under `key`, or with `nil` when the key is absent.
    ///
    /// - Warning: The bytes are valid only inside `body`.
    /// - Parameters:
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to read.
    ///   - body: The work to do with the value.
    /// - Returns: What `body` returns.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/badTable`` for a handle
    ///   dropped already or of another environment, or what `body` throws.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    @inlinable
    public func withUnsafeBytes<Key: Collection<UInt8>, R>(
        forKey key: Key,
        in table: Table,
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try unsafe withBytes(key) { key in try unsafe withUnsafeBytes(forKey: key, in: table, body) }
    }

    /// A copy of the bytes stored under `key`, or `nil` when the key is absent.
    ///
    /// - Parameters:
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to read.
    /// - Returns: The value, or the first value of the key in a `dupSort` table.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/badTable`` for a handle
    ///   dropped already or of another environment.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    @inlinable
    public func value<Key: Collection<UInt8>>(forKey key: Key, in table: Table) throws -> [UInt8]? {
        try unsafe withUnsafeBytes(forKey: key, in: table) { unsafe $0.map(Array.init) }
    }

    /// Whether `key` is present in `table`.
    ///
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/badTable`` for a handle
    ///   dropped already or of another environment.
    @inlinable
    public func containsKey<Key: Collection<UInt8>>(_ key: Key, in table: Table) throws -> Bool {
        try unsafe withUnsafeBytes(forKey: key, in: table) { unsafe $0 != nil }
    }

    // MARK: - Writing

    /// Stores `value` under `key`, replacing the key's value, or in a `dupSort` table adding it to the key's values.
    ///
    /// - Parameters:
    ///   - value: The bytes to store. In a `dupSort` table at most ``Environment/maxKeySize`` bytes.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write.
    ///   - options: Conditions on the write and hints for speed.
    /// - Throws: ``LMDBError/keyExists`` when an option forbids the write, ``LMDBError/badValueSize`` for a key or
    ///   value of the wrong size, ``LMDBError/accessDenied`` in a read transaction, ``LMDBError/badTable`` for a
    ///   stale handle, ``LMDBError/mapFull`` when the map is full (``Environment/write(_:)`` then grows it and runs
    ///   its body again).
    ///
    /// The corresponding LMDB function is `mdb_put`.
    public func put(
        _ value: UnsafeRawBufferPointer,
        forKey key: UnsafeRawBufferPointer,
        in table: Table,
        options: PutOptions = []
    ) throws {
        try checkWritable("mdb_put", table)
        try unsafe validateKey(key, table, "mdb_put")
        try unsafe validateValue(value, table, "mdb_put")
        var keyValue = unsafe mdbValue(key)
        var data = unsafe mdbValue(value)
        try unsafe check(
            mdb_put(handle, try dbi(of: table, "mdb_put"), &keyValue, &data, options.rawValue), "mdb_put", table)
    }

    /// Stores `value` under `key`, replacing the key's value, or in a `dupSort` table adding it to the key's values.
    ///
    /// - Parameters:
    ///   - value: The bytes to store. In a `dupSort` table at most ``Environment/maxKeySize`` bytes.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write.
    ///   - options: Conditions on the write and hints for speed.
    /// - Throws: ``LMDBError/keyExists`` when an option forbids the write, ``LMDBError/badValueSize`` for a key or
    ///   value of the wrong size, ``LMDBError/accessDenied`` in a read transaction, ``LMDBError/badTable`` for a
    ///   stale handle, ``LMDBError/mapFull`` when the map is full (``Environment/write(_:)`` then grows it and runs
    ///   its body again).
    ///
    /// The corresponding LMDB function is `mdb_put`.
    @inlinable
    public func put<Value: Collection<UInt8>, Key: Collection<UInt8>>(
        _ value: Value,
        forKey key: Key,
        in table: Table,
        options: PutOptions = []
    ) throws {
        try unsafe withBytes(value) { value in
            try unsafe withBytes(key) { key in try unsafe put(value, forKey: key, in: table, options: options) }
        }
    }

    /// Stores `value` under `key` unless the key is present, and otherwise returns the value already there: an
    /// insert and a lookup in one descent of the tree.
    ///
    /// - Warning: The returned bytes are LMDB's memory map. They stay valid only until this transaction ends or
    ///   writes anything.
    /// - Parameters:
    ///   - value: The bytes to store.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write; in a `dupSort` table the key's first value is returned.
    /// - Returns: `nil` when `value` was stored, or the bytes already stored under `key`, which are left as they
    ///   were.
    /// - Throws: ``LMDBError/badValueSize`` for a key or value of the wrong size, ``LMDBError/accessDenied`` in a read
    ///   transaction, ``LMDBError/badTable`` for a stale handle, ``LMDBError/mapFull`` when the map is full
    ///   (``Environment/write(_:)`` then grows it and runs its body again).
    ///
    /// The corresponding LMDB function is `mdb_put` with `MDB_NOOVERWRITE`.
    public func unsafePutIfAbsent(
        _ value: UnsafeRawBufferPointer,
        forKey key: UnsafeRawBufferPointer,
        in table: Table
    ) throws -> UnsafeRawBufferPointer? {
        try checkWritable("mdb_put", table)
        try unsafe validateKey(key, table, "mdb_put")
        try unsafe validateValue(value, table, "mdb_put")
        var keyValue = unsafe mdbValue(key)
        var data = unsafe mdbValue(value)
        let code = unsafe mdb_put(handle, try dbi(of: table, "mdb_put"), &keyValue, &data, UInt32(MDB_NOOVERWRITE))
        if code == MDB_KEYEXIST { return unsafe buffer(data) }
        try check(code, "mdb_put", table)
        return nil
    }

    /// Stores `value` under `key` when the key sorts after every key of the table, and otherwise writes nothing and
    /// returns `false`.
    ///
    /// LMDB then goes down the tree's last branches to the last leaf and compares the key with that leaf's last key
    /// only, where a put searches every page on its way; the leaves fill as a put's of ascending keys do. A key
    /// equal to the last one is not after it, so a value is never replaced.
    ///
    /// - Parameters:
    ///   - value: The bytes to store.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write; not a `dupSort` table.
    /// - Returns: Whether `value` was stored: `false` when the table holds `key` or a key after it.
    /// - Throws: ``LMDBError/incompatible`` for a `dupSort` table, ``LMDBError/badValueSize`` for a key or value
    ///   of the wrong size, ``LMDBError/accessDenied`` in a read transaction, ``LMDBError/badTable`` for a stale
    ///   handle, ``LMDBError/mapFull`` when the map is full (``Environment/write(_:)`` then grows it and runs its body
    ///   again).
    ///
    /// The corresponding LMDB function is `mdb_put` with `MDB_APPEND`.
    public func unsafeAppend(
        _ value: UnsafeRawBufferPointer,
        forKey key: UnsafeRawBufferPointer,
        in table: Table
    ) throws -> Bool {
        try checkWritable("mdb_put", table)
        if table.options.contains(.dupSort) {
            throw failure(
                MDB_INCOMPATIBLE, "mdb_put", table,
                detail: "Entries of a dupSort table are appended with the appendDuplicate option")
        }
        try unsafe validateKey(key, table, "mdb_put")
        try unsafe validateValue(value, table, "mdb_put")
        var keyValue = unsafe mdbValue(key)
        var data = unsafe mdbValue(value)
        let code = unsafe mdb_put(handle, try dbi(of: table, "mdb_put"), &keyValue, &data, UInt32(MDB_APPEND))
        if code == MDB_KEYEXIST { return false }
        try check(code, "mdb_put", table)
        return true
    }

    /// Reserves `count` bytes under `key` and lets `fill` write the value in place, which saves a copy for values
    /// that are produced straight into their final bytes.
    ///
    /// - Warning: `fill` must write all `count` bytes; whatever it leaves is stored as it was. The buffer is valid
    ///   only inside `fill`.
    /// - Parameters:
    ///   - count: The size of the value.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write; not a `dupSort` table.
    ///   - options: Conditions on the write and hints for speed.
    ///   - fill: Writes the value.
    /// - Throws: ``LMDBError/incompatible`` for a `dupSort` table, or what ``put(_:forKey:in:options:)-(_,Key,_,_)`` throws;
    ///   when `fill` throws, the transaction should be abandoned by throwing on.
    ///
    /// The corresponding LMDB function is `mdb_put` with `MDB_RESERVE`.
    public func put(
        reservingCount count: Int,
        forKey key: UnsafeRawBufferPointer,
        in table: Table,
        options: PutOptions = [],
        _ fill: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        try checkWritable("mdb_put", table)
        if table.options.contains(.dupSort) {
            throw failure(
                MDB_INCOMPATIBLE, "mdb_put", table, detail: "Values of a dupSort table cannot be reserved")
        }
        if count < 0 { throw failure(EINVAL, "mdb_put", table, detail: "A reserved size cannot be negative") }
        try unsafe validateKey(key, table, "mdb_put")
        var keyValue = unsafe mdbValue(key)
        var data = unsafe MDB_val(mv_size: count, mv_data: nil)
        try unsafe check(
            mdb_put(handle, try dbi(of: table, "mdb_put"), &keyValue, &data, options.rawValue | UInt32(MDB_RESERVE)),
            "mdb_put", table)
        try unsafe fill(UnsafeMutableRawBufferPointer(start: data.mv_data, count: count))
    }

    /// Reserves `count` bytes under `key` and lets `fill` write the value in place.
    ///
    /// - Warning: `fill` must write all `count` bytes; the buffer is valid only inside `fill`.
    /// - Parameters:
    ///   - count: The size of the value.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write; not a `dupSort` table.
    ///   - options: Conditions on the write and hints for speed.
    ///   - fill: Writes the value.
    /// - Throws: What the variant taking an `UnsafeRawBufferPointer` key throws.
    ///
    /// The corresponding LMDB function is `mdb_put` with `MDB_RESERVE`.
    @inlinable
    public func put<Key: Collection<UInt8>>(
        reservingCount count: Int,
        forKey key: Key,
        in table: Table,
        options: PutOptions = [],
        _ fill: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        try unsafe withBytes(key) { key in
            try unsafe put(reservingCount: count, forKey: key, in: table, options: options, fill)
        }
    }

    // MARK: - Deleting

    /// Deletes `key` with all its values.
    ///
    /// - Parameters:
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write.
    /// - Returns: Whether the key was present.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/accessDenied`` in a read
    ///   transaction, ``LMDBError/badTable`` for a stale handle, ``LMDBError/mapFull`` when the map is full
    ///   (``Environment/write(_:)`` then grows it and runs its body again).
    ///
    /// The corresponding LMDB function is `mdb_del`.
    @discardableResult
    public func delete(forKey key: UnsafeRawBufferPointer, in table: Table) throws -> Bool {
        try checkWritable("mdb_del", table)
        try unsafe validateKey(key, table, "mdb_del")
        var keyValue = unsafe mdbValue(key)
        let code = unsafe mdb_del(handle, try dbi(of: table, "mdb_del"), &keyValue, nil)
        if code == MDB_NOTFOUND { return false }
        try check(code, "mdb_del", table)
        return true
    }

    /// Deletes `key` with all its values.
    ///
    /// - Parameters:
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write.
    /// - Returns: Whether the key was present.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/accessDenied`` in a read
    ///   transaction, ``LMDBError/badTable`` for a stale handle, ``LMDBError/mapFull`` when the map is full
    ///   (``Environment/write(_:)`` then grows it and runs its body again).
    ///
    /// The corresponding LMDB function is `mdb_del`.
    @inlinable
    @discardableResult
    public func delete<Key: Collection<UInt8>>(forKey key: Key, in table: Table) throws -> Bool {
        try unsafe withBytes(key) { key in try unsafe delete(forKey: key, in: table) }
    }

    /// Deletes one value of `key` in a `dupSort` table, keeping the key's other values.
    ///
    /// - Parameters:
    ///   - value: The value to delete.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write.
    /// - Returns: Whether the pair was present.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/accessDenied`` in a read
    ///   transaction, ``LMDBError/badTable`` for a stale handle, ``LMDBError/mapFull`` when the map is full
    ///   (``Environment/write(_:)`` then grows it and runs its body again).
    ///
    /// The corresponding LMDB function is `mdb_del` with a value.
    @discardableResult
    public func delete(
        _ value: UnsafeRawBufferPointer,
        forKey key: UnsafeRawBufferPointer,
        in table: Table
    ) throws -> Bool {
        try checkWritable("mdb_del", table)
        try unsafe validateKey(key, table, "mdb_del")
        try unsafe validateValue(value, table, "mdb_del")
        var keyValue = unsafe mdbValue(key)
        var data = unsafe mdbValue(value)
        let code = unsafe mdb_del(handle, try dbi(of: table, "mdb_del"), &keyValue, &data)
        if code == MDB_NOTFOUND { return false }
        try check(code, "mdb_del", table)
        return true
    }

    /// Deletes one value of `key` in a `dupSort` table, keeping the key's other values.
    ///
    /// - Parameters:
    ///   - value: The value to delete.
    ///   - key: The key, 1 to ``Environment/maxKeySize`` bytes.
    ///   - table: The table to write.
    /// - Returns: Whether the pair was present.
    /// - Throws: ``LMDBError/badValueSize`` for an empty or too long key, ``LMDBError/accessDenied`` in a read
    ///   transaction, ``LMDBError/badTable`` for a stale handle, ``LMDBError/mapFull`` when the map is full
    ///   (``Environment/write(_:)`` then grows it and runs its body again).
    ///
    /// The corresponding LMDB function is `mdb_del` with a value.
    @inlinable
    @discardableResult
    public func delete<Value: Collection<UInt8>, Key: Collection<UInt8>>(
        _ value: Value,
        forKey key: Key,
        in table: Table
    ) throws -> Bool {
        try unsafe withBytes(value) { value in
            try unsafe withBytes(key) { key in try unsafe delete(value, forKey: key, in: table) }
        }
    }
}
