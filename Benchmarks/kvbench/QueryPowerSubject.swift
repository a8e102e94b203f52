import Foundation
import KVStore

/// The KVStore side of the query-power scenario: ``Order`` and ``Customer`` structs in a `ModelContainer`, each query
/// as a program writes it, in one read transaction of its own; and the way before the planner could answer them,
/// every order fetched and the query worked out in Swift.
///
/// Everything the library does for the query is inside the timed regions: planning the predicate, walking the index,
/// reading and decoding the records, evaluating what the index does not answer.
final class QueryPowerSubject {
    /// The subject's name in reports.
    static let name = StoreSubject.name

    private let container: ModelContainer

    /// Opens a new store in `directory` and writes `dataset` to it, one write transaction per chunk.
    init(directory: String, settings: StoreSettings, filledWith dataset: QueryPowerDataset, chunkSize: Int) throws {
        container = try ModelContainer(
            for: Order.self, Customer.self,
            configuration: ComparisonStore.configuration(directory: directory, settings: settings))
        do {
            for chunk in Dataset.chunks(of: dataset.customers.count, size: chunkSize) {
                try container.write { txn in
                    for customer in dataset.customers[chunk] { try txn.insert(customer) }
                }
            }
            for chunk in Dataset.chunks(of: dataset.orders.count, size: chunkSize) {
                try container.write { txn in
                    for order in dataset.orders[chunk] { try txn.insert(order) }
                }
            }
        } catch {
            try? container.close()
            throw error
        }
    }

    /// Closes the store.
    func close() throws {
        try container.close()
    }

    /// The orders of `customer` placed in `start..<end`, through the compound index on the customer and the date.
    func orders(of customer: UUID, placedFrom start: Date, before end: Date) throws -> [Order] {
        let customer: UUID? = customer
        return try container.read { txn in
            try txn.fetch(
                FetchDescriptor<Order>(
                    predicate: #Predicate { $0.customerID == customer && $0.placedAt >= start && $0.placedAt < end }))
        }
    }

    /// The orders whose status is `status` or whose total is above `threshold`, through both indexes.
    func orders(withStatus status: Int, orTotalAbove threshold: Int) throws -> [Order] {
        try container.read { txn in
            try txn.fetch(
                FetchDescriptor<Order>(predicate: #Predicate { $0.status == status || $0.total > threshold }))
        }
    }

    /// The number of orders whose total is above `threshold`, counted in the `total` index.
    func countOrders(totalAbove threshold: Int) throws -> Int {
        try container.read { txn in
            try txn.fetchCount(FetchDescriptor<Order>(predicate: #Predicate { $0.total > threshold }))
        }
    }

    /// The sum of every order's total, from the keys of the `total` index.
    func sumOfTotals() throws -> Int {
        try container.read { txn in try txn.aggregate(.sum(\Order.total)) }
    }

    /// The sum of the totals of the orders whose status is `status`: the records the `status` index finds, each read
    /// for its total alone.
    func sumOfTotals(status: Int) throws -> Int {
        try container.read { txn in
            try txn.aggregate(.sum(\Order.total), matching: #Predicate { $0.status == status })
        }
    }

    /// The orders of the customers in `region`: the customers through the `region` index, then their orders through
    /// the relationship's index.
    func orders(inRegion region: Int) throws -> [Order] {
        try container.read { txn in try txn.fetch(Self.ordersInRegion(region)) }
    }

    /// Every order, decoded: what a program fetched before the planner could answer its query, to work it out in
    /// Swift.
    func allOrders() throws -> [Order] {
        try container.read { txn in try txn.fetch(FetchDescriptor<Order>()) }
    }

    /// How the store plans each query, as `explain` says it, beside the variant of the report's row.
    ///
    /// The count's is the plan of its fetch: `fetchCount` counts the IDs in the plan's range when it is exact.
    func plans(
        range: CompoundRangeQuery, unionThreshold: Int, countThreshold: Int, region: Int
    ) throws -> [(row: String, plan: String)] {
        let context = ModelContext(container)
        let customer: UUID? = range.customer
        let (start, end, refunded) = (range.start, range.end, QueryPowerDataset.refunded)
        let status = QueryPowerDataset.summedStatus
        return [
            (
                "compound range",
                try context.explain(
                    FetchDescriptor<Order>(
                        predicate: #Predicate { $0.customerID == customer && $0.placedAt >= start && $0.placedAt < end }
                    ))
            ),
            (
                "or",
                try context.explain(
                    FetchDescriptor<Order>(
                        predicate: #Predicate { $0.status == refunded || $0.total > unionThreshold }))
            ),
            ("count", try context.explain(FetchDescriptor<Order>(predicate: #Predicate { $0.total > countThreshold }))),
            ("sum", try context.explain(.sum(\Order.total))),
            ("sum where", try context.explain(.sum(\Order.total), matching: #Predicate { $0.status == status })),
            ("related", try context.explain(Self.ordersInRegion(region))),
        ]
    }

    /// The fetch of the orders of the customers in `region`.
    private static func ordersInRegion(_ region: Int) -> RelatedFetchDescriptor<Order, Customer> {
        RelatedFetchDescriptor(
            FetchDescriptor<Order>(), through: \.customerID,
            parent: FetchDescriptor<Customer>(predicate: #Predicate { $0.region == region }))
    }
}
