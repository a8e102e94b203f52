import Foundation

/// The queries issue 22 gave the planner, on a store of orders and customers (100,000 orders of 1,000 customers at
/// the default size; ``QueryPowerDataset``), each query in a read transaction of its own:
///
/// - compound range: a customer's orders in a time window, about 20, through the `customerID+placedAt` index;
/// - or: `status == refunded || total > t`, a few hundred orders, through the union of two indexes;
/// - count: `total > t`, half of the orders on average, counted in the `total` index;
/// - sum: the sum of every order's total, from the `total` index's keys; sum where: of the orders of one status, a
///   quarter of them, from their records, each read for its total alone;
/// - related: the orders of the customers in a region, about 5,000, through the `region` index, then the
///   relationship's index.
///
/// The baseline of each row is the same index walk and the same record reads through the C API, on tables of its own
/// (``RawOrderStore``). SQLite runs each query but the scans as one prepared statement, alone (a read transaction
/// each), through the indexes that match KVStore's (``RawSQLiteOrders``), decoding every column of the orders it
/// finds. The scan rows measure what a program did before: fetch every order and work the query out in Swift, a few
/// queries a run; they have no SQLite side. Throughput counts the orders found, counted or summed; latency is per
/// query. Every query's result is checked against the dataset once, on the three sides, and the orders KVStore and
/// SQLite decode against each other, before anything is timed.
struct QueryPowerScenario: Scenario {
    /// The sums of a run, of each kind.
    static let sumQueries = 10

    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let dataset = QueryPowerDataset(orderCount: sizes.queryPowerOrderCount, seed: ScenarioContext.seed &+ 200)
        let queries = QueryPowerQueries(
            dataset, ranges: sizes.queryPowerQueries, scans: sizes.queryPowerScanQueries,
            seed: ScenarioContext.seed &+ 210)
        context.announce(
            "query-power: \(dataset.orders.count) orders of \(dataset.customers.count) customers; "
                + "\(queries.ranges.count) compound ranges, \(queries.unions.count) ORs, \(queries.counts.count) "
                + "counts, \(Self.sumQueries) sums of each kind, \(queries.regions.count) regions a run; scan rows: "
                + "\(queries.scans) queries a run, each decoding every order")
        let settings = context.settings(records: dataset.orders.count)
        return try Self.withSubject(dataset, settings: settings, in: context) { subject in
            try Self.withBaseline(dataset, settings: settings, in: context) { raw in
                try context.workspace.withSQLite(settings: settings) { connection in
                    try RawSQLiteOrders.with(connection) { sqlite in
                        try sqlite.fill(dataset, chunkSize: sizes.chunkSize)
                        let plans = try subject.plans(
                            range: queries.ranges[0].query, unionThreshold: queries.unions[0].threshold,
                            countThreshold: queries.counts[0].threshold, region: queries.regions[0].region)
                        for (row, plan) in plans { context.announce("query-power plan (\(row)): \(plan)") }
                        for (row, plan) in sqlite.plans {
                            context.announce("query-power \(RawSQLite.name) plan (\(row)): \(plan)")
                        }
                        try queries.verify(subject, raw, sqlite)
                        return try measure(queries, subject, raw, sqlite, in: context, records: dataset.orders.count)
                    }
                }
            }
        }
    }

    /// Measures every row.
    private func measure(
        _ queries: QueryPowerQueries, _ subject: QueryPowerSubject, _ raw: RawOrderStore, _ sqlite: RawSQLiteOrders,
        in context: ScenarioContext, records: Int
    ) throws -> [ScenarioResult] {
        let (name, rawName, sqliteName) = (QueryPowerSubject.name, RawLMDB.name, RawSQLite.name)
        let scanName = "\(name) (scan)"
        let ranges = queries.ranges
        let range = try context.measure(
            Self.workload(name, found: ranges.map(\.found)) { position in
                let query = ranges[position].query
                return try consume(subject.orders(of: query.customer, placedFrom: query.start, before: query.end))
            },
            Self.workload(scanName, found: ranges.prefix(queries.scans).map(\.found)) { position in
                let query = ranges[position].query
                return try consume(
                    subject.allOrders().filter {
                        $0.customerID == query.customer && $0.placedAt >= query.start && $0.placedAt < query.end
                    })
            },
            Self.workload(rawName, found: ranges.map(\.found)) { position in
                let query = ranges[position].query
                return try consume(raw.orders(of: query.customer, placedFrom: query.start, before: query.end))
            },
            Self.workload(sqliteName, found: ranges.map(\.found)) { position in
                let query = ranges[position].query
                return try consume {
                    try sqlite.orders(of: query.customer, placedFrom: query.start, before: query.end, $0)
                }
            })
        let unions = queries.unions
        let refunded = QueryPowerDataset.refunded
        let union = try context.measure(
            Self.workload(name, found: unions.map(\.found)) { position in
                try consume(subject.orders(withStatus: refunded, orTotalAbove: unions[position].threshold))
            },
            Self.workload(rawName, found: unions.map(\.found)) { position in
                try consume(raw.orders(withStatus: refunded, orTotalAbove: unions[position].threshold))
            },
            Self.workload(sqliteName, found: unions.map(\.found)) { position in
                try consume { try sqlite.orders(withStatus: refunded, orTotalAbove: unions[position].threshold, $0) }
            })
        let counts = queries.counts
        let count = try context.measure(
            Self.workload(name, found: counts.map(\.found)) { position in
                try subject.countOrders(totalAbove: counts[position].threshold)
            },
            Self.workload(scanName, found: counts.prefix(queries.scans).map(\.found)) { position in
                let threshold = counts[position].threshold
                return try subject.allOrders().count { $0.total > threshold }
            },
            Self.workload(rawName, found: counts.map(\.found)) { position in
                try raw.countOrders(totalAbove: counts[position].threshold)
            },
            Self.workload(sqliteName, found: counts.map(\.found)) { position in
                try sqlite.countOrders(totalAbove: counts[position].threshold)
            })
        let total = queries.total
        let sum = try context.measure(
            Self.workload(name, found: Array(repeating: total.found, count: Self.sumQueries)) { _ in
                try total.checked(AggregateResult(found: total.found, sum: subject.sumOfTotals()), by: name)
            },
            Self.workload(scanName, found: Array(repeating: total.found, count: queries.scans)) { _ in
                let sum = try subject.allOrders().reduce(0) { $0 + $1.total }
                return try total.checked(AggregateResult(found: total.found, sum: sum), by: scanName)
            },
            Self.workload(rawName, found: Array(repeating: total.found, count: Self.sumQueries)) { _ in
                try total.checked(raw.sumOfTotals(), by: rawName)
            },
            Self.workload(sqliteName, found: Array(repeating: total.found, count: Self.sumQueries)) { _ in
                try total.checked(AggregateResult(found: total.found, sum: sqlite.sumOfTotals()), by: sqliteName)
            })
        let statusTotal = queries.statusTotal
        let status = QueryPowerDataset.summedStatus
        let sumWhere = try context.measure(
            Self.workload(name, found: Array(repeating: statusTotal.found, count: Self.sumQueries)) { _ in
                let sum = try subject.sumOfTotals(status: status)
                return try statusTotal.checked(AggregateResult(found: statusTotal.found, sum: sum), by: name)
            },
            Self.workload(rawName, found: Array(repeating: statusTotal.found, count: Self.sumQueries)) { _ in
                try statusTotal.checked(raw.sumOfTotals(status: status), by: rawName)
            },
            Self.workload(sqliteName, found: Array(repeating: statusTotal.found, count: Self.sumQueries)) { _ in
                let sum = try sqlite.sumOfTotals(status: status)
                return try statusTotal.checked(AggregateResult(found: statusTotal.found, sum: sum), by: sqliteName)
            })
        let regions = queries.regions
        let related = try context.measure(
            Self.workload(name, found: regions.map(\.found)) { position in
                try consume(subject.orders(inRegion: regions[position].region))
            },
            Self.workload(rawName, found: regions.map(\.found)) { position in
                try consume(raw.orders(inRegion: regions[position].region))
            },
            Self.workload(sqliteName, found: regions.map(\.found)) { position in
                try consume { try sqlite.orders(inRegion: regions[position].region, $0) }
            })
        context.announce(
            "query-power: speedup over fetching every order and working the query out in Swift: "
                + "compound range \(Self.speedup(range[0], range[1])), count \(Self.speedup(count[0], count[1])), "
                + "sum \(Self.speedup(sum[0], sum[1]))")
        func row(_ variant: String, _ subject: Measurement, _ baseline: Measurement) -> ScenarioResult {
            context.result(.queryPower, variant: variant, records: records, subject: subject, baseline: baseline)
        }
        func row(
            _ variant: String, _ subject: Measurement, _ baseline: Measurement, sqlite: Measurement
        ) throws -> ScenarioResult {
            try context.result(
                .queryPower, variant: variant, records: records, subject: subject, baseline: baseline, sqlite: sqlite)
        }
        return [
            try row("compound range", range[0], range[2], sqlite: range[3]),
            row("compound range, scan", range[1], range[2]),
            try row("or", union[0], union[1], sqlite: union[2]),
            try row("count", count[0], count[2], sqlite: count[3]), row("count, scan", count[1], count[2]),
            try row("sum", sum[0], sum[2], sqlite: sum[3]), row("sum, scan", sum[1], sum[2]),
            try row("sum where", sumWhere[0], sumWhere[1], sqlite: sumWhere[2]),
            try row("related", related[0], related[1], sqlite: related[2]),
        ]
    }

    /// One query per element of `found`, which holds the number of objects each finds; the run returns their sum.
    private static func workload(_ name: String, found: [Int], _ query: @escaping (Int) throws -> Int) -> Workload {
        Workload(
            name: name, latencyUnit: "query", objectsPerRun: found.reduce(0, +), operationsPerRun: found.count
        ) { recorder in
            try recorder.timed {
                var objects = 0
                for position in found.indices { objects += try recorder.operation { try query(position) } }
                return objects
            }
        }
    }

    /// `indexed`'s throughput over `scan`'s, as `×12.3`.
    private static func speedup(_ indexed: Measurement, _ scan: Measurement) -> String {
        guard scan.objectsPerSecond > 0 else { return "n/a" }
        return String(format: "×%.1f", indexed.objectsPerSecond / scan.objectsPerSecond)
    }

    // MARK: - Stores

    /// Opens the KVStore side on a new directory filled with `dataset`, runs `body` with it, then closes it and
    /// removes the directory.
    private static func withSubject<R>(
        _ dataset: QueryPowerDataset, settings: StoreSettings, in context: ScenarioContext,
        _ body: (QueryPowerSubject) throws -> R
    ) throws -> R {
        let workspace = context.workspace
        let directory = try workspace.makeDirectory("query-power-subject")
        let result: R
        do {
            let subject = try QueryPowerSubject(
                directory: directory, settings: settings, filledWith: dataset, chunkSize: context.sizes.chunkSize)
            do {
                result = try body(subject)
            } catch {
                try? subject.close()
                throw error
            }
            try subject.close()
        } catch {
            try? workspace.remove(directory)
            throw error
        }
        try workspace.remove(directory)
        return result
    }

    /// Opens the baseline on a new directory filled with `dataset`, runs `body` with it, then closes it and removes
    /// the directory.
    private static func withBaseline<R>(
        _ dataset: QueryPowerDataset, settings: StoreSettings, in context: ScenarioContext,
        _ body: (RawOrderStore) throws -> R
    ) throws -> R {
        let workspace = context.workspace
        let directory = try workspace.makeDirectory("query-power-baseline")
        let raw = try RawOrderStore(directory: directory, settings: settings)
        defer {
            raw.close()
            try? workspace.remove(directory)
        }
        try raw.fill(dataset, chunkSize: context.sizes.chunkSize)
        return try body(raw)
    }
}

/// Consumes the orders a query found and returns how many there are.
private func consume(_ orders: [Order]) -> Int {
    var checksum: UInt64 = 0
    for order in orders {
        checksum = checksum &* 31 &+ UInt64(truncatingIfNeeded: order.total) &+ UInt64(truncatingIfNeeded: order.status)
    }
    BlackHole.consume(checksum)
    return orders.count
}

/// Consumes the orders a SQLite query hands over as it decodes them, as ``consume(_:)`` does the orders KVStore found,
/// and returns how many there are.
private func consume(_ query: ((Order) throws -> Void) throws -> Void) rethrows -> Int {
    var checksum: UInt64 = 0
    var found = 0
    try query { order in
        found += 1
        checksum = checksum &* 31 &+ UInt64(truncatingIfNeeded: order.total) &+ UInt64(truncatingIfNeeded: order.status)
    }
    BlackHole.consume(checksum)
    return found
}

/// Consumes what a raw query read and returns the number of orders it found.
private func consume(_ result: RawLMDB.ReadResult) -> Int {
    BlackHole.consume(result.checksum)
    return result.found
}
