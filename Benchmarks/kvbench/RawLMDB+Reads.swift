import CLMDB
import Foundation

/// The baseline's reads: gets by ID and index lookups, each folding what it reads into a checksum.
extension RawLMDB {
    /// What a read found.
    struct ReadResult {
        /// The number of records found.
        var found = 0
        /// A checksum of their bytes, for the ``BlackHole``.
        var checksum: UInt64 = 0
    }

    /// Gets the tasks whose IDs are `keys` (16 bytes each), in that order, in one read transaction.
    ///
    /// The corresponding LMDB calls are one `mdb_get` per key.
    func getTasks(keys: [UInt8]) throws -> ReadResult {
        try read { txn in
            try keys.withUnsafeBytes { keys in
                var result = ReadResult()
                for position in 0..<keys.count / 16 {
                    var key = mdbValue(keys.baseAddress, offset: position &* 16, count: 16)
                    try get(txn, &key, into: &result)
                }
                return result
            }
        }
    }

    /// Gets the task whose ID is the 16 bytes at `key` in a read transaction of its own: the raw form of the N+1
    /// pattern, which pays a transaction per read as the subject's one-at-a-time reads do.
    ///
    /// The corresponding LMDB calls are `mdb_txn_begin` (or `mdb_txn_renew`), one `mdb_get`, and the transaction's
    /// end.
    func getTask(key: UnsafeRawPointer) throws -> ReadResult {
        try read { txn in
            var result = ReadResult()
            var value = mdbValue(key, offset: 0, count: 16)
            try get(txn, &value, into: &result)
            return result
        }
    }

    /// Reads the tasks of the projects whose IDs are `keys` (16 bytes each) in one read transaction: for each
    /// project, the task IDs from the index a page at a time, then each task.
    ///
    /// The corresponding LMDB calls are `mdb_cursor_get` with `MDB_SET_KEY`, `MDB_GET_MULTIPLE` and
    /// `MDB_NEXT_MULTIPLE` on the index, and `mdb_get` per task.
    func tasksOfProjects(keys: [UInt8]) throws -> ReadResult {
        try read { txn in
            try withCursor(txn, index) { cursor in
                try keys.withUnsafeBytes { keys in
                    var result = ReadResult()
                    for position in 0..<keys.count / 16 {
                        let project = mdbValue(keys.baseAddress, offset: position &* 16, count: 16)
                        try forEachTaskID(cursor, of: project) { taskID in
                            var key = taskID
                            try get(txn, &key, into: &result)
                        }
                    }
                    return result
                }
            }
        }
    }

    /// Reads the tasks of one project, whose ID is `key`, in a read transaction of its own: the raw form of a query
    /// on the indexed attribute.
    func tasksOfProject(key: UnsafeRawPointer) throws -> ReadResult {
        try read { txn in
            try withCursor(txn, index) { cursor in
                var result = ReadResult()
                try forEachTaskID(cursor, of: mdbValue(key, offset: 0, count: 16)) { taskID in
                    var key = taskID
                    try get(txn, &key, into: &result)
                }
                return result
            }
        }
    }

    /// Reads the tasks of one project, whose ID is `key`, in a read transaction of its own by scanning the task table
    /// and testing each record's `projectID` in place: the raw form of a query that no index answers.
    ///
    /// The corresponding LMDB calls are `mdb_cursor_get` with `MDB_FIRST` and `MDB_NEXT`; each record's checksum is
    /// checked, as the store checks every record it tests, and `projectID`, a task's last field, is the 16 bytes
    /// before the checksum.
    func tasksOfProjectByScan(key: UnsafeRawPointer) throws -> ReadResult {
        try read { txn in
            try withCursor(txn, tasks) { cursor in
                var result = ReadResult()
                var taskKey = MDB_val()
                var value = MDB_val()
                var code = mdb_cursor_get(cursor, &taskKey, &value, MDB_FIRST)
                while code == 0 {
                    guard let record = value.mv_data, value.mv_size >= 20 else {
                        throw RawLMDBError(code: EILSEQ, operation: "a task record")
                    }
                    let checksum = try checkedFold(0, value)
                    if memcmp(record + (value.mv_size - 20), key, 16) == 0 {
                        result.found += 1
                        result.checksum = result.checksum &* 31 &+ checksum
                    }
                    code = mdb_cursor_get(cursor, &taskKey, &value, MDB_NEXT)
                }
                if code != MDB_NOTFOUND { try check(code, "mdb_cursor_get") }
                return result
            }
        }
    }

    /// Counts the tasks of one project, whose ID is `key`, in a read transaction of its own: the raw form of a count
    /// on the indexed attribute, `mdb_cursor_count` on the project's key.
    func countTasksOfProject(key: UnsafeRawPointer) throws -> Int {
        try read { txn in
            try withCursor(txn, index) { cursor in
                try withIndexKey(ofProject: mdbValue(key, offset: 0, count: 16)) { indexKey in
                    var data = MDB_val()
                    let code = mdb_cursor_get(cursor, &indexKey, &data, MDB_SET_KEY)
                    if code == MDB_NOTFOUND { return 0 }
                    try check(code, "mdb_cursor_get")
                    var count = 0
                    try check(mdb_cursor_count(cursor, &count), "mdb_cursor_count")
                    return count
                }
            }
        }
    }

    /// Calls `body` with each task ID stored under `project` in the index, reading the IDs a page at a time.
    ///
    /// A key with a single value has no duplicate page: LMDB then answers `MDB_GET_MULTIPLE` with success and leaves
    /// `data` as `MDB_SET_KEY` set it, the one value, which the loop reads as a page of one.
    ///
    /// - Warning: The IDs are LMDB's memory: valid until the transaction writes or ends.
    @inline(__always)
    func forEachTaskID(_ cursor: OpaquePointer, of project: MDB_val, _ body: (MDB_val) throws -> Void) throws {
        try withIndexKey(ofProject: project) { key in try forEachID(cursor, under: &key, body) }
    }

    @inline(__always)
    private func get(_ txn: OpaquePointer, _ key: inout MDB_val, into result: inout ReadResult) throws {
        var value = MDB_val()
        let code = mdb_get(txn, tasks, &key, &value)
        if code == MDB_NOTFOUND { return }
        try check(code, "mdb_get")
        result.found += 1
        result.checksum = try checkedFold(result.checksum, value)
    }
}

/// Calls `body` with the index key of the project whose 16-byte ID `project` points at, as KVStore's index on the
/// optional `projectID` stores it: a presence byte (1), then the ID.
@inline(__always)
func withIndexKey<R>(ofProject project: MDB_val, _ body: (inout MDB_val) throws -> R) rethrows -> R {
    var bytes: (UInt8, UInt64, UInt64) = (1, 0, 0)
    return try withUnsafeMutableBytes(of: &bytes) { buffer in
        // The tuple's layout has padding after the first byte: build the key in its first 17 bytes instead.
        buffer[0] = 1
        UnsafeMutableRawBufferPointer(rebasing: buffer[1..<17]).copyMemory(
            from: UnsafeRawBufferPointer(start: project.mv_data, count: 16))
        var key = MDB_val(mv_size: EncodedRecords.indexKeySize, mv_data: buffer.baseAddress)
        return try body(&key)
    }
}
