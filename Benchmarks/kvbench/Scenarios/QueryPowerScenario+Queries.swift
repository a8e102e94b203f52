import Foundation

/// The queries of one query-power run, with what each must find, worked out on the dataset before anything is timed.
struct QueryPowerQueries {
    /// The compound-range queries.
    let ranges: [(query: CompoundRangeQuery, found: Int)]
    /// The thresholds of the OR queries.
    let unions: [(threshold: Int, found: Int)]
    /// The thresholds of the count queries.
    let counts: [(threshold: Int, found: Int)]
    /// Every region, in a random order.
    let regions: [(region: Int, found: Int)]
    /// The sum of every order's total.
    let total: AggregateResult
    /// The sum of the totals of the orders whose status is ``QueryPowerDataset/summedStatus``.
    let statusTotal: AggregateResult
    /// The queries of a run of a scan row: the first ones of its kind.
    let scans: Int

    /// The queries of a run on `dataset`: `ranges` compound ranges, a tenth as many ORs and a fortieth as many counts
    /// (at least one of each), every region, and `scans` queries of each scan row.
    init(_ dataset: QueryPowerDataset, ranges: Int, scans: Int, seed: UInt64) {
        self.ranges = dataset.rangeQueries(ranges, seed: seed)
        unions = dataset.unionQueries(Swift.max(1, ranges / 10), seed: seed &+ 1)
        counts = dataset.countQueries(Swift.max(1, ranges / 40), seed: seed &+ 2)
        regions = dataset.regionQueries(seed: seed &+ 3)
        total = dataset.sumOfTotals()
        statusTotal = dataset.sumOfTotals(status: QueryPowerDataset.summedStatus)
        self.scans = Swift.min(scans, ranges, unions.count, counts.count)
    }

    /// Runs every query once on the three sides and checks that each finds what the dataset holds, and that
    /// KVStore and SQLite decode the same orders, untimed.
    ///
    /// - Throws: ``QueryPowerMismatch`` naming the first query a side answers otherwise than the dataset holds,
    ///   ``CrossCheckError`` for the first whose orders KVStore and SQLite decode differently.
    func verify(_ subject: QueryPowerSubject, _ raw: RawOrderStore, _ sqlite: RawSQLiteOrders) throws {
        for (position, (query, found)) in ranges.enumerated() {
            let label = "compound range \(position) (customer \(query.customer), \(query.start)..<\(query.end))"
            try Self.expect(
                found, label,
                subject: subject.orders(of: query.customer, placedFrom: query.start, before: query.end),
                raw: raw.orders(of: query.customer, placedFrom: query.start, before: query.end).found,
                sqlite: Self.digest {
                    try sqlite.orders(of: query.customer, placedFrom: query.start, before: query.end, $0)
                })
        }
        for (position, (threshold, found)) in unions.enumerated() {
            let refunded = QueryPowerDataset.refunded
            try Self.expect(
                found, "or \(position) (status == \(refunded) || total > \(threshold))",
                subject: subject.orders(withStatus: refunded, orTotalAbove: threshold),
                raw: raw.orders(withStatus: refunded, orTotalAbove: threshold).found,
                sqlite: Self.digest { try sqlite.orders(withStatus: refunded, orTotalAbove: threshold, $0) })
        }
        for (position, (threshold, found)) in counts.enumerated() {
            try Self.expect(
                found, "count \(position) (total > \(threshold))",
                subject: subject.countOrders(totalAbove: threshold), raw: raw.countOrders(totalAbove: threshold),
                sqlite: sqlite.countOrders(totalAbove: threshold))
        }
        for (region, found) in regions {
            try Self.expect(
                found, "related (region \(region))", subject: subject.orders(inRegion: region),
                raw: raw.orders(inRegion: region).found, sqlite: Self.digest { try sqlite.orders(inRegion: region, $0) }
            )
        }
        try Self.expect(
            total.sum, "sum", subject: subject.sumOfTotals(), raw: raw.sumOfTotals().sum, sqlite: sqlite.sumOfTotals())
        try Self.expect(
            total.found, "orders of the sum", subject: total.found, raw: raw.sumOfTotals().found, sqlite: total.found)
        let status = QueryPowerDataset.summedStatus
        try Self.expect(
            statusTotal.sum, "sum where status == \(status)", subject: subject.sumOfTotals(status: status),
            raw: raw.sumOfTotals(status: status).sum, sqlite: sqlite.sumOfTotals(status: status))
        try Self.expect(
            statusTotal.found, "orders of the sum where status == \(status)", subject: statusTotal.found,
            raw: raw.sumOfTotals(status: status).found, sqlite: statusTotal.found)
    }

    /// The digest of the orders a SQLite query hands to its body.
    private static func digest(_ query: ((Order) throws -> Void) throws -> Void) rethrows -> RecordDigest {
        var digest = RecordDigest()
        try query { digest.add($0) }
        return digest
    }

    /// Checks that the orders KVStore and SQLite found are the dataset's number of them, and that the two sides
    /// decoded the same orders.
    private static func expect(
        _ expected: Int, _ query: String, subject: [Order], raw: Int, sqlite: RecordDigest
    ) throws {
        try expect(expected, query, subject: subject.count, raw: raw, sqlite: sqlite.records)
        var digest = RecordDigest()
        for order in subject { digest.add(order) }
        guard digest == sqlite else {
            throw CrossCheckError(
                description: "query-power: \(query): \(QueryPowerSubject.name) and \(RawSQLite.name) disagree: "
                    + "\(QueryPowerSubject.name) decoded \(digest.records) orders with checksum \(digest.checksum), "
                    + "\(RawSQLite.name) \(sqlite.records) with checksum \(sqlite.checksum)")
        }
    }

    private static func expect(_ expected: Int, _ query: String, subject: Int, raw: Int, sqlite: Int) throws {
        guard subject == expected && raw == expected && sqlite == expected else {
            throw QueryPowerMismatch(
                description: "query-power: \(query): \(QueryPowerSubject.name) found \(subject), \(RawLMDB.name) "
                    + "\(raw), \(RawSQLite.name) \(sqlite), the dataset holds \(expected)")
        }
    }
}

extension AggregateResult {
    /// The number of orders this result adds up, when `result`, what `side` computed, is the same.
    ///
    /// - Throws: ``QueryPowerMismatch`` when it is not.
    func checked(_ result: AggregateResult, by side: String) throws -> Int {
        guard result == self else {
            throw QueryPowerMismatch(
                description: "query-power: \(side) summed \(result.sum) over \(result.found) orders instead of "
                    + "\(sum) over \(found)")
        }
        return found
    }
}

/// A query-power query for which a side found another result than the dataset holds.
struct QueryPowerMismatch: Error, CustomStringConvertible {
    /// Which query, and what each side found.
    var description: String
}
