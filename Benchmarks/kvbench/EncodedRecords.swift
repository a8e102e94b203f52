import CLMDB
import Foundation
import KVStore

/// Records encoded back to back with their keys, ready for the LMDB C API.
///
/// The baseline puts exactly these bytes, prepared before its timed region, so that it does the storage work of a
/// subject without the subject's encoding: the records are KVStore's own record format (``RecordBytesEncoder``), and a
/// task's index key is the one KVStore's `projectID` index stores (a presence byte, then the project's 16 bytes).
struct EncodedRecords {
    /// The 16-byte keys, back to back.
    private(set) var keys: [UInt8] = []
    /// The encoded records, back to back.
    private(set) var values: [UInt8] = []
    /// Where each record starts in ``values``, plus the end of the last one.
    private(set) var offsets: [Int] = [0]
    /// For tasks, the index key of each record's project, ``indexKeySize`` bytes each; empty for projects.
    private(set) var indexKeys: [UInt8] = []

    /// The number of records.
    var count: Int {
        offsets.count - 1
    }

    /// The total size of the encoded records in bytes.
    var byteCount: Int {
        values.count
    }

    /// The size of a task's index key: the presence byte of the optional `projectID`, then its 16 bytes.
    static let indexKeySize = 17

    /// Encodes tasks.
    init(tasks: ArraySlice<TaskRecord>) throws {
        reserve(tasks.count)
        indexKeys.reserveCapacity(tasks.count * Self.indexKeySize)
        var encoder = RecordBytesEncoder()
        for task in tasks {
            task.id.appendBytes(to: &keys)
            Optional(task.project).appendIndexKey(to: &indexKeys)
            try encoder.append(task, to: &values)
            offsets.append(values.count)
        }
    }

    /// Encodes projects.
    init(projects: ArraySlice<ProjectRecord>) throws {
        reserve(projects.count)
        var encoder = RecordBytesEncoder()
        for project in projects {
            project.id.appendBytes(to: &keys)
            try encoder.append(project, to: &values)
            offsets.append(values.count)
        }
    }

    /// Calls `body` with pointers to the records, for building `MDB_val`s without copies.
    func withUnsafeBuffers<R>(_ body: (RecordBuffers) throws -> R) rethrows -> R {
        try keys.withUnsafeBytes { keys in
            try values.withUnsafeBytes { values in
                try indexKeys.withUnsafeBytes { indexKeys in
                    try offsets.withUnsafeBufferPointer { offsets in
                        try body(
                            RecordBuffers(
                                keys: keys.baseAddress, values: values.baseAddress, offsets: offsets,
                                indexKeys: indexKeys.isEmpty ? nil : indexKeys.baseAddress))
                    }
                }
            }
        }
    }

    private mutating func reserve(_ count: Int) {
        keys.reserveCapacity(count * 16)
        values.reserveCapacity(count * 100)
        offsets.reserveCapacity(count + 1)
    }
}

/// Pointers into an ``EncodedRecords``, valid inside ``EncodedRecords/withUnsafeBuffers(_:)``.
struct RecordBuffers {
    /// The keys, 16 bytes each.
    let keys: UnsafeRawPointer?
    /// The encoded records.
    let values: UnsafeRawPointer?
    /// Where each record starts, plus the end of the last one.
    let offsets: UnsafeBufferPointer<Int>
    /// The index keys, ``EncodedRecords/indexKeySize`` bytes each, or `nil` when the records have none.
    let indexKeys: UnsafeRawPointer?

    /// Whether the records have index entries.
    var hasIndexKeys: Bool {
        indexKeys != nil
    }

    /// The key of record `position`.
    @inline(__always)
    func key(_ position: Int) -> MDB_val {
        mdbValue(keys, offset: position &* 16, count: 16)
    }

    /// The bytes of record `position`.
    @inline(__always)
    func value(_ position: Int) -> MDB_val {
        mdbValue(values, offset: offsets[position], count: offsets[position + 1] &- offsets[position])
    }

    /// The index key of record `position`.
    @inline(__always)
    func indexKey(_ position: Int) -> MDB_val {
        mdbValue(indexKeys, offset: position &* EncodedRecords.indexKeySize, count: EncodedRecords.indexKeySize)
    }
}

/// An `MDB_val` for `count` bytes at `offset` from `base`.
@inline(__always)
func mdbValue(_ base: UnsafeRawPointer?, offset: Int, count: Int) -> MDB_val {
    MDB_val(mv_size: count, mv_data: UnsafeMutableRawPointer(mutating: base?.advanced(by: offset)))
}

/// The 16-byte keys of `ids`, back to back, for the baseline's lookups.
func flatKeys<IDs: Sequence<UUID>>(_ ids: IDs) -> [UInt8] {
    var keys: [UInt8] = []
    keys.reserveCapacity(ids.underestimatedCount * 16)
    for id in ids {
        id.appendBytes(to: &keys)
    }
    return keys
}
