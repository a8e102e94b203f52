import Foundation
import TestSupport

/// The customers and orders of the query-power scenario, generated before anything is timed.
///
/// A customer for every hundred orders, in one of ``regionCount`` regions; each order goes to a random customer. An
/// order is placed at a whole second of the two years from 2025 (``placedSpan``), totals 1 to ``maximumTotal`` cents,
/// uniformly, and has the status 0 to 3, uniformly, but for one order in 500, which is ``refunded``. IDs are
/// time-ordered, in creation order.
struct QueryPowerDataset {
    /// The orders per customer, on average.
    static let ordersPerCustomer = 100
    /// The regions customers are in.
    static let regionCount = 20
    /// The rare status, which the OR query asks for.
    static let refunded = 4
    /// The status whose orders the filtered sum adds up, about a quarter of them.
    static let summedStatus = 2
    /// The largest total, in cents.
    static let maximumTotal = 99_999
    /// When the first order may be placed: 2025-01-01T00:00:00Z.
    static let firstDate = Date(timeIntervalSinceReferenceDate: 757_382_400)
    /// The seconds over which orders are placed.
    static let placedSpan = 2 * 365 * 86_400

    /// The customers, in creation order.
    let customers: [Customer]
    /// The orders, in creation order.
    let orders: [Order]
    /// The index in ``customers`` of each order's customer.
    private let customerOfOrder: [Int32]

    /// Generates `orderCount` orders and their customers.
    ///
    /// - Parameters:
    ///   - orderCount: The number of orders; at least ``ordersPerCustomer``.
    ///   - seed: The seed; equal seeds give equal datasets.
    init(orderCount: Int, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var customerIDs = IDGenerator(order: .timeOrdered, seed: seed &+ 1)
        var orderIDs = IDGenerator(order: .timeOrdered, seed: seed &+ 2)
        let customerCount = Swift.max(1, orderCount / Self.ordersPerCustomer)
        customers = (0..<customerCount).map { number in
            Customer(
                id: customerIDs.next(), name: "Customer \(number)",
                region: Int(random.next() % UInt64(Self.regionCount)))
        }
        var orders: [Order] = []
        var owners: [Int32] = []
        orders.reserveCapacity(orderCount)
        owners.reserveCapacity(orderCount)
        for _ in 0..<orderCount {
            let owner = Int(random.next() % UInt64(customerCount))
            let rare = random.next() % 500 == 0
            orders.append(
                Order(
                    id: orderIDs.next(), customerID: customers[owner].id,
                    status: rare ? Self.refunded : Int(random.next() % 4),
                    total: 1 + Int(random.next() % UInt64(Self.maximumTotal)),
                    placedAt: Self.firstDate.addingTimeInterval(Double(random.next() % UInt64(Self.placedSpan)))))
            owners.append(Int32(owner))
        }
        self.orders = orders
        customerOfOrder = owners
    }

    /// `count` windows of a fifth of ``placedSpan`` at random customers, each holding about 20 of the customer's
    /// orders, with the number each holds.
    func rangeQueries(_ count: Int, seed: UInt64) -> [(query: CompoundRangeQuery, found: Int)] {
        var random = SplitMix64(seed: seed)
        var datesByCustomer = [[Date]](repeating: [], count: customers.count)
        for (order, owner) in zip(orders, customerOfOrder) { datesByCustomer[Int(owner)].append(order.placedAt) }
        let window = Self.placedSpan / 5
        return (0..<count).map { _ in
            let customer = Int(random.next() % UInt64(customers.count))
            let start = Self.firstDate.addingTimeInterval(Double(random.next() % UInt64(Self.placedSpan - window)))
            let end = start.addingTimeInterval(Double(window))
            let found = datesByCustomer[customer].count { $0 >= start && $0 < end }
            return (CompoundRangeQuery(customer: customers[customer].id, start: start, end: end), found)
        }
    }

    /// `count` thresholds `t` of `status == refunded || total > t` that hold 0.1 to 0.5% of the orders, with the
    /// number of orders each query finds: a few hundred of 100,000.
    func unionQueries(_ count: Int, seed: UInt64) -> [(threshold: Int, found: Int)] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let threshold = Self.maximumTotal - Self.maximumTotal / 1_000 * (1 + Int(random.next() % 5))
            return (threshold, orders.count { $0.status == Self.refunded || $0.total > threshold })
        }
    }

    /// `count` random thresholds `t` of `total > t`, with the number of orders above each: half of them on average.
    func countQueries(_ count: Int, seed: UInt64) -> [(threshold: Int, found: Int)] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let threshold = Int(random.next() % UInt64(Self.maximumTotal))
            return (threshold, orders.count { $0.total > threshold })
        }
    }

    /// Every region in a random order, with the number of orders of its customers.
    func regionQueries(seed: UInt64) -> [(region: Int, found: Int)] {
        var ordersByRegion = [Int](repeating: 0, count: Self.regionCount)
        for owner in customerOfOrder { ordersByRegion[customers[Int(owner)].region] += 1 }
        return Dataset.sample(Self.regionCount, below: Self.regionCount, seed: seed).map { ($0, ordersByRegion[$0]) }
    }

    /// The sum of the totals of the orders whose status is `status`, or of all orders, and how many orders it adds.
    func sumOfTotals(status: Int? = nil) -> AggregateResult {
        orders.reduce(into: AggregateResult()) { result, order in
            guard status.map({ $0 == order.status }) ?? true else { return }
            result.found += 1
            result.sum += order.total
        }
    }
}

/// A customer's orders placed in a window: `customerID == customer && placedAt >= start && placedAt < end`.
struct CompoundRangeQuery {
    /// The customer's ID.
    var customer: UUID
    /// The first date in the window.
    var start: Date
    /// The first date after the window.
    var end: Date
}

/// A sum of totals and the number of orders it adds up.
struct AggregateResult: Equatable {
    /// The orders added up.
    var found = 0
    /// Their totals' sum, in cents.
    var sum = 0
}
