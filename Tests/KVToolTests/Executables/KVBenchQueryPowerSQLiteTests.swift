import Foundation
import Testing

@testable import kvbench

/// The query-power scenario's SQLite side finds, counts and sums what the dataset holds, decoding every field of the
/// orders it finds as they were generated; its plans use the intended indexes, or opening it throws.
@Suite struct KVBenchQueryPowerSQLiteTests {
    @Test func everyQueryFindsWhatTheDatasetHolds() throws {
        let dataset = QueryPowerDataset(orderCount: 2_000, seed: 7)
        let workspace = try Workspace()
        let settings = StoreSettings(mapSize: 1 << 30, durability: .noSync, coding: .fields)
        try workspace.withSQLite(settings: settings) { connection in
            try RawSQLiteOrders.with(connection) { sqlite in
                try sqlite.fill(dataset, chunkSize: 500)
                #expect(sqlite.plans.map(\.row) == ["compound range", "or", "count", "sum", "sum where", "related"])
                func digest(_ orders: some Sequence<Order>) -> RecordDigest {
                    var digest = RecordDigest()
                    for order in orders { digest.add(order) }
                    return digest
                }
                func digest(_ query: ((Order) throws -> Void) throws -> Void) rethrows -> RecordDigest {
                    var digest = RecordDigest()
                    try query { digest.add($0) }
                    return digest
                }
                for (query, found) in dataset.rangeQueries(20, seed: 1) {
                    let read = try digest {
                        try sqlite.orders(of: query.customer, placedFrom: query.start, before: query.end, $0)
                    }
                    let expected = dataset.orders.filter {
                        $0.customerID == query.customer && $0.placedAt >= query.start && $0.placedAt < query.end
                    }
                    #expect(read.records == found)
                    #expect(read == digest(expected))
                }
                let refunded = QueryPowerDataset.refunded
                for (threshold, _) in dataset.unionQueries(5, seed: 2) {
                    let read = try digest { try sqlite.orders(withStatus: refunded, orTotalAbove: threshold, $0) }
                    #expect(read == digest(dataset.orders.filter { $0.status == refunded || $0.total > threshold }))
                }
                for (threshold, found) in dataset.countQueries(5, seed: 3) {
                    #expect(try sqlite.countOrders(totalAbove: threshold) == found)
                }
                for (region, found) in dataset.regionQueries(seed: 4) {
                    let customers = Set(dataset.customers.filter { $0.region == region }.map(\.id))
                    let read = try digest { try sqlite.orders(inRegion: region, $0) }
                    #expect(read.records == found)
                    #expect(read == digest(dataset.orders.filter { $0.customerID.map(customers.contains) == true }))
                }
                #expect(try sqlite.sumOfTotals() == dataset.sumOfTotals().sum)
                let status = QueryPowerDataset.summedStatus
                #expect(try sqlite.sumOfTotals(status: status) == dataset.sumOfTotals(status: status).sum)
                #expect(try sqlite.sumOfTotals(status: 99) == 0)
            }
        }
    }
}
