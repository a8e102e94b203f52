import CLMDB
import Foundation

/// The query-power scenario's queries on the baseline, each in one read transaction: the index walk of KVStore's
/// plan for the same query, then a read of each record found.
extension RawOrderStore {
    /// The orders of `customer` placed in `start..<end`: one range of the `customerID+placedAt` index, a read per
    /// order.
    func orders(of customer: UUID, placedFrom start: Date, before end: Date) throws -> RawLMDB.ReadResult {
        let lower = (customer.uuid, RawOrderLayout.key(start))
        let upper = (customer.uuid, RawOrderLayout.key(end))
        return try read { txn in
            try withCursor(txn, byCustomerAndDate) { cursor in
                try withUnsafeBytes(of: lower) { lower in
                    try withUnsafeBytes(of: upper) { upper in
                        var result = RawLMDB.ReadResult()
                        try forEachID(cursor, from: lower, below: upper) { id in
                            try get(txn, order: id, into: &result)
                        }
                        return result
                    }
                }
            }
        }
    }

    /// The orders whose status is `status` or whose total is above `threshold`: the IDs under one key of the
    /// `status` index and in a range of the `total` index, sorted without duplicates, then a read per order.
    func orders(withStatus status: Int, orTotalAbove threshold: Int) throws -> RawLMDB.ReadResult {
        let statusKey = RawOrderLayout.key(status)
        let totalKey = RawOrderLayout.key(threshold + 1)
        return try read { txn in
            var ids: [RawID] = []
            try withCursor(txn, byStatus) { cursor in
                try withUnsafeBytes(of: statusKey) { key in
                    try forEachID(cursor, under: key) { ids.append(RawID($0)) }
                }
            }
            try withCursor(txn, byTotal) { cursor in
                try withUnsafeBytes(of: totalKey) { key in
                    try forEachID(cursor, from: key, below: nil) { ids.append(RawID($0)) }
                }
            }
            ids.sort()
            var result = RawLMDB.ReadResult()
            var previous: RawID?
            for id in ids where id != previous {
                previous = id
                try withUnsafeBytes(of: id.bytes) { id in
                    let key = MDB_val(mv_size: 16, mv_data: UnsafeMutableRawPointer(mutating: id.baseAddress))
                    try get(txn, order: key, into: &result)
                }
            }
            return result
        }
    }

    /// The number of orders whose total is above `threshold`: the entries of each key of a range of the `total`
    /// index, counted by `mdb_cursor_count`. As KVStore counts a range: when the totals, taken as spread evenly
    /// between the first and the last, put most orders in the range, the orders at or below the threshold are
    /// counted and taken from the index's number of entries, unless they turn out to be more than half.
    func countOrders(totalAbove threshold: Int) throws -> Int {
        let lowerKey = RawOrderLayout.key(threshold + 1)
        return try read { txn in
            var statistics = MDB_stat()
            try check(mdb_stat(txn, byTotal, &statistics), "mdb_stat")
            let entries = statistics.ms_entries
            return try withCursor(txn, byTotal) { cursor in
                try withUnsafeBytes(of: lowerKey) { lower in
                    if let (first, last) = try totalsAtEnds(cursor), first < last,
                        Double(last - threshold) / Double(last - first) > 0.5
                    {
                        var below = 0
                        try forEachKey(cursor, from: nil) { key, count in
                            guard RawOrderLayout.integer(atKey: key) <= threshold else { return false }
                            below += count
                            return below <= entries / 2
                        }
                        if below <= entries / 2 { return entries - below }
                    }
                    var count = 0
                    try forEachKey(cursor, from: lower) { _, entries in
                        count += entries
                        return true
                    }
                    return count
                }
            }
        }
    }

    /// The first and last totals of the `total` index, or `nil` when it is empty.
    private func totalsAtEnds(_ cursor: OpaquePointer) throws -> (first: Int, last: Int)? {
        var key = MDB_val()
        var data = MDB_val()
        func total(_ operation: MDB_cursor_op) throws -> Int? {
            let code = mdb_cursor_get(cursor, &key, &data, operation)
            if code == MDB_NOTFOUND { return nil }
            try check(code, "mdb_cursor_get")
            guard key.mv_size == 8, let bytes = key.mv_data else {
                throw RawLMDBError(code: MDB_CORRUPTED, operation: "mdb_cursor_get")
            }
            return RawOrderLayout.integer(atKey: bytes)
        }
        guard let first = try total(MDB_FIRST), let last = try total(MDB_LAST) else { return nil }
        return (first, last)
    }

    /// The sum of every order's total: each key of the `total` index times its number of entries.
    func sumOfTotals() throws -> AggregateResult {
        try read { txn in
            try withCursor(txn, byTotal) { cursor in
                var result = AggregateResult()
                try forEachKey(cursor, from: nil) { key, entries in
                    result.found += entries
                    result.sum += RawOrderLayout.integer(atKey: key) * entries
                    return true
                }
                return result
            }
        }
    }

    /// The sum of the totals of the orders whose status is `status`: the IDs under one key of the `status` index,
    /// and the total read from each order's record.
    func sumOfTotals(status: Int) throws -> AggregateResult {
        let statusKey = RawOrderLayout.key(status)
        return try read { txn in
            try withCursor(txn, byStatus) { cursor in
                try withUnsafeBytes(of: statusKey) { key in
                    var result = AggregateResult()
                    try forEachID(cursor, under: key) { id in
                        var id = id
                        var record = MDB_val()
                        try check(mdb_get(txn, orders, &id, &record), "mdb_get")
                        guard let bytes = record.mv_data, record.mv_size >= RawOrderLayout.totalOffset + 8 else {
                            throw RawLMDBError(code: MDB_CORRUPTED, operation: "mdb_get")
                        }
                        result.found += 1
                        let total = bytes.loadUnaligned(fromByteOffset: RawOrderLayout.totalOffset, as: Int64.self)
                        result.sum += Int(Int64(littleEndian: total))
                    }
                    return result
                }
            }
        }
    }

    /// The orders of the customers in `region`: the customer IDs under one key of the `region` index, for each the
    /// order IDs under its key of the `customerID` index, and a read per order.
    func orders(inRegion region: Int) throws -> RawLMDB.ReadResult {
        let regionKey = RawOrderLayout.key(region)
        return try read { txn in
            try withCursor(txn, byRegion) { customerCursor in
                try withCursor(txn, byCustomer) { orderCursor in
                    try withUnsafeBytes(of: regionKey) { key in
                        var result = RawLMDB.ReadResult()
                        try forEachID(customerCursor, under: key) { customer in
                            try forEachID(
                                orderCursor,
                                under: UnsafeRawBufferPointer(start: customer.mv_data, count: customer.mv_size)
                            ) { id in
                                try get(txn, order: id, into: &result)
                            }
                        }
                        return result
                    }
                }
            }
        }
    }

    // MARK: - Walks

    /// Reads the order whose ID is `id` and folds it into `result`.
    @inline(__always)
    private func get(_ txn: OpaquePointer, order id: MDB_val, into result: inout RawLMDB.ReadResult) throws {
        var key = id
        var value = MDB_val()
        try check(mdb_get(txn, orders, &key, &value), "mdb_get")
        result.found += 1
        result.checksum = fold(result.checksum, value)
    }

    /// Calls `body` with each ID stored under `key` (``RawStore/forEachID(_:under:_:)``).
    ///
    /// - Warning: The IDs are LMDB's memory: valid until the transaction ends.
    @inline(__always)
    private func forEachID(
        _ cursor: OpaquePointer, under key: UnsafeRawBufferPointer, _ body: (MDB_val) throws -> Void
    ) throws {
        var key = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        try forEachID(cursor, under: &key, body)
    }

    /// Calls `body` with each ID stored under the keys from `lower` to before `upper` (to the end when `upper` is
    /// `nil`), in key order; the keys of the cursor's table all have the size of `lower`.
    ///
    /// - Warning: The IDs are LMDB's memory: valid until the transaction ends.
    @inline(__always)
    private func forEachID(
        _ cursor: OpaquePointer, from lower: UnsafeRawBufferPointer, below upper: UnsafeRawBufferPointer?,
        _ body: (MDB_val) throws -> Void
    ) throws {
        var key = MDB_val(mv_size: lower.count, mv_data: UnsafeMutableRawPointer(mutating: lower.baseAddress))
        var data = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
        while code == 0 {
            if let upper, let bound = upper.baseAddress, let current = key.mv_data,
                memcmp(current, bound, upper.count) >= 0
            {
                return
            }
            try body(data)
            code = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { throw RawLMDBError(code: code, operation: "mdb_cursor_get") }
    }

    /// Calls `body` with each key from `lower` (from the first key when `nil`) to the end, and its number of
    /// entries, until it returns `false`.
    ///
    /// - Warning: The key is LMDB's memory: valid until the transaction ends.
    @inline(__always)
    private func forEachKey(
        _ cursor: OpaquePointer, from lower: UnsafeRawBufferPointer?, _ body: (UnsafeRawPointer, Int) throws -> Bool
    ) throws {
        var key = MDB_val(mv_size: lower?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: lower?.baseAddress))
        var data = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &data, lower == nil ? MDB_FIRST : MDB_SET_RANGE)
        while code == 0 {
            guard let bytes = key.mv_data else { throw RawLMDBError(code: MDB_CORRUPTED, operation: "mdb_cursor_get") }
            var entries = 0
            try check(mdb_cursor_count(cursor, &entries), "mdb_cursor_count")
            guard try body(UnsafeRawPointer(bytes), entries) else { return }
            code = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_NODUP)
        }
        if code != MDB_NOTFOUND { throw RawLMDBError(code: code, operation: "mdb_cursor_get") }
    }
}

/// A record ID as two integers that sort as its bytes do, for merging the IDs of two index walks.
struct RawID: Comparable {
    private let high: UInt64
    private let low: UInt64

    /// The ID whose 16 bytes `value` points at.
    @inline(__always)
    init(_ value: MDB_val) {
        let bytes = UnsafeRawPointer(value.mv_data)
        high = UInt64(bigEndian: bytes?.loadUnaligned(as: UInt64.self) ?? 0)
        low = UInt64(bigEndian: bytes?.loadUnaligned(fromByteOffset: 8, as: UInt64.self) ?? 0)
    }

    /// The ID's 16 bytes, as a value in memory.
    var bytes: (UInt64, UInt64) {
        (high.bigEndian, low.bigEndian)
    }

    static func < (lhs: RawID, rhs: RawID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
