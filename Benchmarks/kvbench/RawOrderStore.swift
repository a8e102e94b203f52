import CLMDB
import Foundation

/// The baseline of the query-power scenario: its orders and customers in tables of their own through the LMDB C API,
/// with index tables like KVStore's, and each of the scenario's queries as the index walk KVStore's plan does.
///
/// Records have a fixed layout (``RawOrderLayout``). Index keys sort as KVStore's do, without KVStore's presence
/// byte: an integer big-endian with the sign bit flipped, a date as its `Double`'s ordered bits, an ID as its 16
/// bytes, a compound key as the concatenation of its parts; each key holds the IDs of its records, sorted
/// (`MDB_DUPSORT | MDB_DUPFIXED`). Reads fold what they read into a checksum for the ``BlackHole``, as ``RawLMDB``'s
/// do; the queries are in `RawOrderStore+Queries.swift`.
///
/// The map cannot grow: ``StoreSettings/mapSize`` must hold the whole dataset.
final class RawOrderStore: RawStore {
    /// The `MDB_env` handle.
    let environment: OpaquePointer
    /// The `Order` table: order ID → order record.
    let orders: MDB_dbi
    /// The `Customer` table: customer ID → customer record.
    let customers: MDB_dbi
    /// The `Order.customerID` index: customer ID → order IDs.
    let byCustomer: MDB_dbi
    /// The `Order.status` index: status → order IDs.
    let byStatus: MDB_dbi
    /// The `Order.total` index: total → order IDs.
    let byTotal: MDB_dbi
    /// The `Order.customerID+placedAt` index: customer ID and date → order IDs.
    let byCustomerAndDate: MDB_dbi
    /// The `Customer.region` index: region → customer IDs.
    let byRegion: MDB_dbi

    /// Creates an environment in `directory` with the seven tables.
    ///
    /// - Throws: ``RawLMDBError`` when LMDB fails.
    init(directory: String, settings: StoreSettings) throws {
        let index = MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED
        let (environment, handles) = try RawLMDB.openEnvironment(
            directory: directory, settings: settings,
            tables: [
                ("Order", MDB_CREATE), ("Customer", MDB_CREATE), ("Order.customerID", index), ("Order.status", index),
                ("Order.total", index), ("Order.customerID+placedAt", index), ("Customer.region", index),
            ])
        self.environment = environment
        (orders, customers, byCustomer, byStatus) = (handles[0], handles[1], handles[2], handles[3])
        (byTotal, byCustomerAndDate, byRegion) = (handles[4], handles[5], handles[6])
    }

    /// Closes the environment.
    func close() {
        mdb_env_close(environment)
    }

    /// Puts the customers, then the orders, with their index entries, one write transaction per chunk.
    func fill(_ dataset: QueryPowerDataset, chunkSize: Int) throws {
        for chunk in Dataset.chunks(of: dataset.customers.count, size: chunkSize) {
            try write { txn in
                for customer in dataset.customers[chunk] {
                    try put(txn, customers, key: customer.id.uuid, value: Int64(customer.region))
                    try put(txn, byRegion, key: RawOrderLayout.key(customer.region), value: customer.id.uuid)
                }
            }
        }
        for chunk in Dataset.chunks(of: dataset.orders.count, size: chunkSize) {
            try write { txn in
                var appending = true
                for order in dataset.orders[chunk] {
                    guard let customer = order.customerID?.uuid else {
                        throw QueryPowerMismatch(description: "Order \(order.id) has no customer")
                    }
                    let id = order.id.uuid
                    try put(
                        txn, orders, key: id, value: RawOrderLayout.record(of: order, customer: customer),
                        appending: &appending)
                    try put(txn, byCustomer, key: customer, value: id)
                    try put(txn, byStatus, key: RawOrderLayout.key(order.status), value: id)
                    try put(txn, byTotal, key: RawOrderLayout.key(order.total), value: id)
                    try put(txn, byCustomerAndDate, key: (customer, RawOrderLayout.key(order.placedAt)), value: id)
                }
            }
        }
    }

    // MARK: - Transactions

    /// Runs `body` in a write transaction and commits it, or aborts it when `body` throws.
    private func write(_ body: (OpaquePointer) throws -> Void) throws {
        var begun: OpaquePointer?
        try check(mdb_txn_begin(environment, nil, 0, &begun), "mdb_txn_begin")
        guard let txn = begun else { throw RawLMDBError(code: ENOMEM, operation: "mdb_txn_begin") }
        do {
            try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        // lmdb.h: the commit frees the transaction even when it fails, so there is nothing to abort then.
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// Puts the bytes of `value` under the bytes of `key`: integers, IDs, or tuples of them without padding.
    private func put<Key, Value>(_ txn: OpaquePointer, _ dbi: MDB_dbi, key: Key, value: Value) throws {
        try withValues(key, value) { key, value in try check(mdb_put(txn, dbi, &key, &value, 0), "mdb_put") }
    }

    /// Puts a record as ``put(_:_:key:value:)`` does, appended while the keys ascend
    /// (``putRecord(_:_:_:_:appending:)``).
    private func put<Key, Value>(
        _ txn: OpaquePointer, _ dbi: MDB_dbi, key: Key, value: Value, appending: inout Bool
    ) throws {
        try withValues(key, value) { key, value in try putRecord(txn, dbi, &key, &value, appending: &appending) }
    }

    /// Runs `body` with LMDB's views of the bytes of `key` and `value`.
    private func withValues<Key, Value>(
        _ key: Key, _ value: Value, _ body: (inout MDB_val, inout MDB_val) throws -> Void
    ) throws {
        var key = key
        var value = value
        try withUnsafeMutableBytes(of: &key) { key in
            try withUnsafeMutableBytes(of: &value) { value in
                var keyValue = MDB_val(mv_size: key.count, mv_data: key.baseAddress)
                var dataValue = MDB_val(mv_size: value.count, mv_data: value.baseAddress)
                try body(&keyValue, &dataValue)
            }
        }
    }
}

/// The baseline's record layout and index keys for the query-power scenario.
///
/// An order record is 40 bytes: its customer's ID (16 bytes), then its status and total as 64-bit integers and its
/// date as a `Double` in seconds since 2001, all little-endian. A customer record is its region, a 64-bit integer: no
/// query reads it.
enum RawOrderLayout {
    /// The offset of an order's total in its record.
    static let totalOffset = 24

    /// An order's record, with `customer` for its customer's ID.
    static func record(of order: Order, customer: uuid_t) -> (uuid_t, Int64, Int64, Double) {
        (customer, Int64(order.status), Int64(order.total), order.placedAt.timeIntervalSinceReferenceDate)
    }

    /// The 8 bytes of an integer's key as a value in memory: big-endian with the sign bit flipped.
    @inline(__always)
    static func key(_ value: Int) -> UInt64 {
        (UInt64(bitPattern: Int64(value)) ^ signBit).bigEndian
    }

    /// The 8 bytes of a date's key as a value in memory: its `Double`'s bits big-endian, all inverted for a negative
    /// number and with the sign bit set otherwise.
    @inline(__always)
    static func key(_ date: Date) -> UInt64 {
        let bits = date.timeIntervalSinceReferenceDate.bitPattern
        return (bits & signBit != 0 ? ~bits : bits | signBit).bigEndian
    }

    /// The integer whose key is at `pointer`.
    @inline(__always)
    static func integer(atKey pointer: UnsafeRawPointer) -> Int {
        Int(Int64(bitPattern: UInt64(bigEndian: pointer.loadUnaligned(as: UInt64.self)) ^ signBit))
    }

    private static let signBit: UInt64 = 1 << 63
}
