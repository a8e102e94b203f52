import CLMDB
import Foundation
import KVStore

/// The baseline: the scenarios' storage work done directly through the LMDB C API.
///
/// It uses the same layout as the subjects (a `Task` table keyed by 16-byte IDs, a `Project` table, and a
/// `Task.projectID` index table with `MDB_DUPSORT | MDB_DUPFIXED` from project ID to task IDs) and stores bytes
/// prepared before the timed regions (``EncodedRecords``), so it measures LMDB itself and what the store promises on
/// every read: no encoding, no decoding, and each record read checked against its CRC-32C, as the store checks it
/// (``checkedFold(_:_:)``). Reads fold what they read into a checksum for the ``BlackHole``.
///
/// The map cannot grow: ``StoreSettings/mapSize`` must hold the whole scenario.
final class RawLMDB: RawStore {
    /// The baseline's name in reports.
    static let name = "raw C API"

    /// The `MDB_env` handle.
    let environment: OpaquePointer
    /// The `Task` table: task ID → encoded task.
    let tasks: MDB_dbi
    /// The `Project` table: project ID → encoded project.
    let projects: MDB_dbi
    /// The `Task.projectID` index: project ID → task IDs.
    let index: MDB_dbi

    /// Creates an environment in `directory` with the three tables.
    ///
    /// - Throws: ``RawLMDBError`` when LMDB fails.
    init(directory: String, settings: StoreSettings) throws {
        let (environment, handles) = try Self.openEnvironment(
            directory: directory, settings: settings,
            tables: [
                ("Task", MDB_CREATE), ("Project", MDB_CREATE),
                ("Task.projectID", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED),
            ])
        self.environment = environment
        (tasks, projects, index) = (handles[0], handles[1], handles[2])
    }

    /// Opens an environment in `directory` with the settings' map size and durability, and opens (creating them) the
    /// named tables with their flags in one write transaction: the set-up of every raw store of kvbench.
    ///
    /// - Returns: The environment and the tables' handles, in the order of `tables`.
    /// - Throws: ``RawLMDBError`` when LMDB fails; the environment is closed then.
    static func openEnvironment(
        directory: String, settings: StoreSettings, tables: [(name: String, flags: Int32)]
    ) throws -> (OpaquePointer, [MDB_dbi]) {
        var created: OpaquePointer?
        try check(mdb_env_create(&created), "mdb_env_create")
        guard let environment = created else { throw RawLMDBError(code: ENOMEM, operation: "mdb_env_create") }
        do {
            try check(mdb_env_set_mapsize(environment, settings.mapSize), "mdb_env_set_mapsize")
            try check(mdb_env_set_maxdbs(environment, MDB_dbi(tables.count + 1)), "mdb_env_set_maxdbs")
            let flags = UInt32(MDB_NOTLS) | settings.durability.environmentFlags
            try check(mdb_env_open(environment, directory, flags, 0o600), "mdb_env_open")
            var handles = [MDB_dbi](repeating: 0, count: tables.count)
            var txn: OpaquePointer?
            try check(mdb_txn_begin(environment, nil, 0, &txn), "mdb_txn_begin")
            for (position, table) in tables.enumerated() {
                let code = mdb_dbi_open(txn, table.name, UInt32(table.flags), &handles[position])
                if code != 0 {
                    mdb_txn_abort(txn)
                    throw RawLMDBError(code: code, operation: "mdb_dbi_open")
                }
            }
            try check(mdb_txn_commit(txn), "mdb_txn_commit")
            return (environment, handles)
        } catch {
            mdb_env_close(environment)
            throw error
        }
    }

    /// Closes the environment.
    func close() {
        mdb_env_close(environment)
    }

    // MARK: - Transactions

    /// Runs `body` in a write transaction and commits it, or aborts it when `body` throws.
    @inline(__always)
    func write<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        var begun: OpaquePointer?
        try check(mdb_txn_begin(environment, nil, 0, &begun), "mdb_txn_begin")
        guard let txn = begun else { throw RawLMDBError(code: ENOMEM, operation: "mdb_txn_begin") }
        let result: R
        do {
            result = try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        // lmdb.h: the commit frees the transaction even when it fails, so there is nothing to abort then.
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
        return result
    }

    // MARK: - Inserting

    /// Puts records `range` of `records` in one write transaction; for tasks, also their index entries.
    ///
    /// - Parameters:
    ///   - records: Encoded tasks or projects.
    ///   - range: The records to put.
    ///   - table: ``tasks`` or ``projects``; index entries are put when `records` has index keys.
    func insert(_ records: EncodedRecords, range: Range<Int>, into table: MDB_dbi) throws {
        try write { txn in
            try records.withUnsafeBuffers { buffers in
                var appending = true
                for position in range {
                    var key = buffers.key(position)
                    var value = buffers.value(position)
                    try putRecord(txn, table, &key, &value, appending: &appending)
                    if buffers.hasIndexKeys {
                        var indexKey = buffers.indexKey(position)
                        var taskID = buffers.key(position)
                        try check(mdb_put(txn, index, &indexKey, &taskID, 0), "mdb_put")
                    }
                }
            }
        }
    }
}

/// A failed LMDB call of the baseline.
struct RawLMDBError: Error, CustomStringConvertible {
    /// The return code.
    var code: Int32
    /// The LMDB function that returned it.
    var operation: String

    /// The function and LMDB's message for the code.
    var description: String {
        "\(operation) failed: \(String(cString: mdb_strerror(code))) (\(code))"
    }
}

/// Throws ``RawLMDBError`` for a non-zero return code.
@inline(__always)
func check(_ code: Int32, _ operation: StaticString) throws {
    if code != 0 { throw RawLMDBError(code: code, operation: "\(operation)") }
}

/// Puts a record, appending it (`MDB_APPEND`) while this transaction's keys come after the table's last key, as a C
/// program loading keys in ascending order does and as KVStore does: LMDB then goes to the last leaf without
/// searching the pages on the way. The first key that is not after the last turns `appending` off for the rest of
/// the transaction, as in KVStore.
@inline(__always)
func putRecord(
    _ txn: OpaquePointer, _ table: MDB_dbi, _ key: inout MDB_val, _ value: inout MDB_val, appending: inout Bool
) throws {
    if appending {
        let code = mdb_put(txn, table, &key, &value, UInt32(MDB_APPEND))
        if code != MDB_KEYEXIST { return try check(code, "mdb_put") }
        appending = false
    }
    try check(mdb_put(txn, table, &key, &value, 0), "mdb_put")
}

/// Folds a value LMDB returned into a checksum, touching its first byte so that the read cannot be skipped.
@inline(__always)
func fold(_ checksum: UInt64, _ value: MDB_val) -> UInt64 {
    let first = value.mv_data.map { UInt64($0.load(as: UInt8.self)) } ?? 0
    return checksum &* 31 &+ UInt64(value.mv_size) &+ first
}

/// Checks a record LMDB returned as the store checks every record it reads (its last 4 bytes are the little-endian
/// CRC-32C of the bytes before them), then folds it into `checksum`.
///
/// - Throws: ``RawLMDBError`` (`EILSEQ`) when the record's checksum does not match.
@inline(__always)
func checkedFold(_ checksum: UInt64, _ value: MDB_val) throws -> UInt64 {
    let bytes = unsafe UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
    guard bytes.count >= 4,
        unsafe Checksum.crc32c(BorrowedBytes(unsafe: UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)])))
            == UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
    else { throw RawLMDBError(code: EILSEQ, operation: "checksum of a record") }
    return fold(checksum, value)
}

/// A raw store of kvbench: an LMDB environment read through the C API, with the helpers its reads share.
protocol RawStore {
    /// The `MDB_env` handle.
    var environment: OpaquePointer { get }
}

extension RawStore {
    /// Runs `body` in a read transaction, then ends it.
    @inline(__always)
    func read<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        var begun: OpaquePointer?
        try check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &begun), "mdb_txn_begin")
        guard let txn = begun else { throw RawLMDBError(code: ENOMEM, operation: "mdb_txn_begin") }
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }

    /// Runs `body` with a cursor on `dbi`, closed when `body` returns.
    @inline(__always)
    func withCursor<R>(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ body: (OpaquePointer) throws -> R) throws -> R {
        var opened: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &opened), "mdb_cursor_open")
        guard let cursor = opened else { throw RawLMDBError(code: ENOMEM, operation: "mdb_cursor_open") }
        defer { mdb_cursor_close(cursor) }
        return try body(cursor)
    }

    /// Calls `body` with each 16-byte ID stored under `key` in a `MDB_DUPFIXED` index, reading them a page at a
    /// time.
    ///
    /// A key with a single value has no duplicate page: LMDB then answers `MDB_GET_MULTIPLE` with success and leaves
    /// `data` as `MDB_SET_KEY` set it, the one value, which the loop reads as a page of one.
    ///
    /// - Warning: The IDs are LMDB's memory: valid until the transaction ends.
    @inline(__always)
    func forEachID(_ cursor: OpaquePointer, under key: inout MDB_val, _ body: (MDB_val) throws -> Void) throws {
        var data = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &data, MDB_SET_KEY)
        if code == MDB_NOTFOUND { return }
        try check(code, "mdb_cursor_get")
        code = mdb_cursor_get(cursor, &key, &data, MDB_GET_MULTIPLE)
        while code == 0 {
            for offset in stride(from: 0, to: data.mv_size, by: 16) {
                try body(mdbValue(data.mv_data, offset: offset, count: 16))
            }
            code = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_MULTIPLE)
        }
        if code != MDB_NOTFOUND { throw RawLMDBError(code: code, operation: "mdb_cursor_get") }
    }
}
