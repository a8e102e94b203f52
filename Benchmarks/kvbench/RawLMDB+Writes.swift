import CLMDB
import Foundation

/// The baseline's updates and deletes.
extension RawLMDB {
    /// Replaces tasks with new versions in one write transaction: gets each task, puts its new bytes, and moves its
    /// index entry when the project ID differs.
    ///
    /// - Parameters:
    ///   - records: The new versions, encoded (their index keys are the new project IDs).
    ///   - range: The records to write.
    /// - Returns: The number of tasks updated.
    /// - Throws: ``RawLMDBError``, or `MDB_NOTFOUND` for a task that is not stored.
    func update(_ records: EncodedRecords, range: Range<Int>) throws -> Int {
        try write { txn in
            try records.withUnsafeBuffers { buffers in
                var updated = 0
                for position in range {
                    var key = buffers.key(position)
                    var old = MDB_val()
                    try check(mdb_get(txn, tasks, &key, &old), "mdb_get")
                    // `projectID` is a task's last field, a UUID: the 16 bytes before the record's 4-byte checksum.
                    guard old.mv_size >= 21, let oldBytes = old.mv_data else {
                        throw RawLMDBError(code: MDB_CORRUPTED, operation: "mdb_get")
                    }
                    // The put below may move the page the old record is on: copy its project ID first.
                    var oldProject = (UInt64(0), UInt64(0))
                    withUnsafeMutableBytes(of: &oldProject) { copy in
                        copy.copyMemory(
                            from: UnsafeRawBufferPointer(start: oldBytes.advanced(by: old.mv_size - 20), count: 16))
                    }
                    var value = buffers.value(position)
                    try check(mdb_put(txn, tasks, &key, &value, 0), "mdb_put")
                    var newProject = buffers.indexKey(position)
                    guard let newBytes = newProject.mv_data else {
                        throw RawLMDBError(code: EINVAL, operation: "mdb_put")
                    }
                    // The index key is a presence byte, then the project ID.
                    let moved =
                        oldProject.0 != newBytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self)
                        || oldProject.1 != newBytes.loadUnaligned(fromByteOffset: 9, as: UInt64.self)
                    if moved {
                        try withUnsafeBytes(of: &oldProject) { oldProject in
                            try withIndexKey(ofProject: mdbValue(oldProject.baseAddress, offset: 0, count: 16)) {
                                oldKey in
                                var taskID = key
                                try check(mdb_del(txn, index, &oldKey, &taskID), "mdb_del")
                            }
                        }
                        var taskID = key
                        try check(mdb_put(txn, index, &newProject, &taskID, 0), "mdb_put")
                    }
                    updated += 1
                }
                return updated
            }
        }
    }

    /// Deletes projects with their tasks and index entries in one write transaction.
    ///
    /// The task IDs are read from the index first, with the cursor closed before any delete (Debian's LMDB 0.9.24
    /// mishandles deletes during a walk of a `MDB_DUPSORT` table); then each task, its index entry and the project
    /// are deleted with `mdb_del`.
    ///
    /// - Parameter keys: The project IDs, 16 bytes each.
    /// - Returns: The number of records deleted, projects and tasks.
    func deleteProjects(keys: [UInt8]) throws -> Int {
        try write { txn in
            try keys.withUnsafeBytes { keys in
                let projectCount = keys.count / 16
                var children: [UInt8] = []
                var childCounts: [Int] = []
                children.reserveCapacity(projectCount * Dataset.tasksPerProject * 16)
                childCounts.reserveCapacity(projectCount)
                try withCursor(txn, index) { cursor in
                    for position in 0..<projectCount {
                        let before = children.count
                        let project = mdbValue(keys.baseAddress, offset: position &* 16, count: 16)
                        try forEachTaskID(cursor, of: project) { taskID in
                            children.append(
                                contentsOf: UnsafeRawBufferPointer(start: taskID.mv_data, count: taskID.mv_size))
                        }
                        childCounts.append((children.count - before) / 16)
                    }
                }
                var deleted = 0
                try children.withUnsafeBytes { children in
                    var child = 0
                    for position in 0..<projectCount {
                        var project = mdbValue(keys.baseAddress, offset: position &* 16, count: 16)
                        try withIndexKey(ofProject: project) { indexKey in
                            for _ in 0..<childCounts[position] {
                                var taskID = mdbValue(children.baseAddress, offset: child &* 16, count: 16)
                                try check(mdb_del(txn, tasks, &taskID, nil), "mdb_del")
                                try check(mdb_del(txn, index, &indexKey, &taskID), "mdb_del")
                                child += 1
                                deleted += 1
                            }
                        }
                        try check(mdb_del(txn, projects, &project, nil), "mdb_del")
                        deleted += 1
                    }
                }
                return deleted
            }
        }
    }
}
