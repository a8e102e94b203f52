import CSQLite
import Foundation

/// The query-power scenario through the SQLite C API: its customers and orders in tables of their own on the
/// connection of a ``RawSQLite`` (WAL, `synchronous` matched to the durability, foreign keys on), with indexes like
/// KVStore's, and each of the scenario's queries as one statement prepared once and reused. Schema:
///
/// ```sql
/// CREATE TABLE customer(id BLOB PRIMARY KEY NOT NULL, name TEXT NOT NULL, region INTEGER NOT NULL) WITHOUT ROWID;
/// CREATE TABLE "order"(id BLOB PRIMARY KEY NOT NULL, customerID BLOB REFERENCES customer(id),
///     status INTEGER NOT NULL, total INTEGER NOT NULL, placedAt REAL NOT NULL) WITHOUT ROWID;
/// CREATE INDEX order_status ON "order"(status);
/// CREATE INDEX order_total ON "order"(total);
/// CREATE INDEX order_customerID_placedAt ON "order"(customerID, placedAt);
/// CREATE INDEX customer_region ON customer(region);
/// ```
///
/// The compound index also serves the foreign key and the related query, as KVStore's relationship index does. Each
/// query runs alone, in autocommit mode: a read transaction of its own, as the KVStore side's. Queries that find
/// orders decode every column of each row into an ``Order``, the fields the KVStore side decodes, and hand it to the
/// caller. ``init(on:)`` checks each query's plan (``plans``).
final class RawSQLiteOrders {
    /// The connection, with the task scenarios' tables too, unused here.
    let sqlite: RawSQLite
    /// The prepared statements, finalized by ``close()``.
    private let statements: Statements
    /// What `EXPLAIN QUERY PLAN` says of each query, beside the variant of the report's row.
    let plans: [(row: String, plan: String)]

    /// The columns every order read selects, in the order ``decodeOrder(_:)`` reads them.
    static let orderColumns = "id, customerID, status, total, placedAt"

    /// The statements of the scenario, each prepared once.
    private struct Statements {
        /// `INSERT INTO customer`: every column.
        let insertCustomer: OpaquePointer
        /// `INSERT INTO "order"`: every column.
        let insertOrder: OpaquePointer
        /// A customer's orders in a time window, one range of the compound index.
        let ordersInRange: OpaquePointer
        /// The orders of a status or above a total, through the union of two indexes.
        let ordersOfStatusOrAboveTotal: OpaquePointer
        /// The number of orders above a total, counted in the `total` index.
        let countAboveTotal: OpaquePointer
        /// The sum of every order's total, from the `total` index.
        let sumOfTotals: OpaquePointer
        /// The sum of the totals of the orders of a status, each row the `status` index finds read for its total.
        let sumOfTotalsOfStatus: OpaquePointer
        /// The orders of the customers in a region: the `region` index, then the compound index.
        let ordersInRegion: OpaquePointer

        /// Every statement, for finalizing.
        var all: [OpaquePointer] {
            [
                insertCustomer, insertOrder, ordersInRange, ordersOfStatusOrAboveTotal, countAboveTotal, sumOfTotals,
                sumOfTotalsOfStatus, ordersInRegion,
            ]
        }
    }

    /// Each query's SQL, the row of the report it measures, and what its plan must say: the index it must use, and
    /// for the related query, that it walks the customers of the region first.
    private static let queries: [(row: String, sql: String, expected: String)] = [
        (
            "compound range",
            "SELECT \(orderColumns) FROM \"order\" WHERE customerID = ?1 AND placedAt >= ?2 AND placedAt < ?3",
            "SEARCH order USING INDEX order_customerID_placedAt (customerID=? AND placedAt>? AND placedAt<?)"
        ),
        (
            "or", "SELECT \(orderColumns) FROM \"order\" WHERE status = ?1 OR total > ?2",
            "MULTI-INDEX OR; INDEX 1; SEARCH order USING INDEX order_status (status=?); INDEX 2; "
                + "SEARCH order USING INDEX order_total (total>?)"
        ),
        (
            "count", "SELECT count(*) FROM \"order\" WHERE total > ?1",
            "SEARCH order USING COVERING INDEX order_total (total>?)"
        ),
        ("sum", "SELECT sum(total) FROM \"order\"", "SCAN order USING COVERING INDEX order_total"),
        (
            "sum where", "SELECT sum(total) FROM \"order\" WHERE status = ?1",
            "SEARCH order USING INDEX order_status (status=?)"
        ),
        (
            "related",
            "SELECT o.id, o.customerID, o.status, o.total, o.placedAt FROM customer AS c "
                + "JOIN \"order\" AS o ON o.customerID = c.id WHERE c.region = ?1",
            "SEARCH c USING COVERING INDEX customer_region (region=?); "
                + "SEARCH o USING INDEX order_customerID_placedAt (customerID=?)"
        ),
    ]

    /// Creates the tables and indexes on `sqlite`'s connection, checks the plan of each query and prepares the
    /// statements.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails or plans a query otherwise; nothing stays prepared then.
    init(on sqlite: RawSQLite) throws {
        self.sqlite = sqlite
        let database = sqlite.database
        try RawSQLite.execute(
            """
            CREATE TABLE customer(id BLOB PRIMARY KEY NOT NULL, name TEXT NOT NULL, region INTEGER NOT NULL)
                WITHOUT ROWID;
            CREATE TABLE "order"(
                id BLOB PRIMARY KEY NOT NULL, customerID BLOB REFERENCES customer(id), status INTEGER NOT NULL,
                total INTEGER NOT NULL, placedAt REAL NOT NULL) WITHOUT ROWID;
            CREATE INDEX order_status ON "order"(status);
            CREATE INDEX order_total ON "order"(total);
            CREATE INDEX order_customerID_placedAt ON "order"(customerID, placedAt);
            CREATE INDEX customer_region ON customer(region);
            """, in: database, operation: "create the query-power schema")
        plans = try Self.queries.map { query in
            (query.row, try RawSQLite.requirePlan(of: query.sql, in: database, toContain: query.expected))
        }
        var prepared: [OpaquePointer] = []
        do {
            func prepare(_ sql: String) throws -> OpaquePointer {
                let statement = try RawSQLite.prepare(sql, in: database)
                prepared.append(statement)
                return statement
            }
            let queries = Self.queries.map(\.sql)
            statements = Statements(
                insertCustomer: try prepare("INSERT INTO customer(id, name, region) VALUES (?1, ?2, ?3)"),
                insertOrder: try prepare(
                    "INSERT INTO \"order\"(\(Self.orderColumns)) VALUES (?1, ?2, ?3, ?4, ?5)"),
                ordersInRange: try prepare(queries[0]),
                ordersOfStatusOrAboveTotal: try prepare(queries[1]),
                countAboveTotal: try prepare(queries[2]),
                sumOfTotals: try prepare(queries[3]),
                sumOfTotalsOfStatus: try prepare(queries[4]),
                ordersInRegion: try prepare(queries[5]))
        } catch {
            for statement in prepared { sqlite3_finalize(statement) }
            throw error
        }
    }

    /// Finalizes the statements; the connection stays open, for its ``RawSQLite`` to close.
    func close() {
        for statement in statements.all { sqlite3_finalize(statement) }
    }

    /// Creates the tables on `sqlite`'s connection, runs `body` with them, then finalizes the statements, which
    /// `sqlite` must be rid of before it can close.
    static func with<R>(_ sqlite: RawSQLite, _ body: (RawSQLiteOrders) throws -> R) throws -> R {
        let orders = try RawSQLiteOrders(on: sqlite)
        defer { orders.close() }
        return try body(orders)
    }

    /// Inserts the customers, then the orders, one write transaction per chunk; the foreign key checks each order's
    /// customer.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails.
    func fill(_ dataset: QueryPowerDataset, chunkSize: Int) throws {
        for chunk in Dataset.chunks(of: dataset.customers.count, size: chunkSize) {
            try sqlite.write {
                for customer in dataset.customers[chunk] { try insert(customer) }
            }
        }
        for chunk in Dataset.chunks(of: dataset.orders.count, size: chunkSize) {
            try sqlite.write {
                for order in dataset.orders[chunk] { try insert(order) }
            }
        }
    }

    // MARK: - Queries

    /// Calls `body` with each order of `customer` placed in `start..<end`: one range of the compound index, and the
    /// row of each order found.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not an order, and
    ///   what `body` throws.
    @inline(__always)
    func orders(
        of customer: UUID, placedFrom start: Date, before end: Date, _ body: (Order) throws -> Void
    ) throws {
        let statement = statements.ordersInRange
        try withUnsafeBytes(of: customer.uuid) { customer in
            try sqlite.bindID(statement, 1, customer.baseAddress)
            try bindDate(statement, 2, start)
            try bindDate(statement, 3, end)
            try forEachOrder(statement, "query a customer's orders in a window", body)
        }
    }

    /// Calls `body` with each order whose status is `status` or whose total is above `threshold`: SQLite's
    /// multi-index OR, the rows of both index searches without duplicates.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not an order, and
    ///   what `body` throws.
    @inline(__always)
    func orders(withStatus status: Int, orTotalAbove threshold: Int, _ body: (Order) throws -> Void) throws {
        let statement = statements.ordersOfStatusOrAboveTotal
        try bindInteger(statement, 1, status)
        try bindInteger(statement, 2, threshold)
        try forEachOrder(statement, "query the orders of a status or above a total", body)
    }

    /// The number of orders whose total is above `threshold`, counted in the `total` index.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails.
    func countOrders(totalAbove threshold: Int) throws -> Int {
        let statement = statements.countAboveTotal
        try bindInteger(statement, 1, threshold)
        return try integerResult(statement, "count the orders above a total")
    }

    /// The sum of every order's total, from the `total` index; 0 when there are no orders.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, or when the sum overflows a 64-bit integer, as KVStore's
    ///   throws then.
    func sumOfTotals() throws -> Int {
        try integerResult(statements.sumOfTotals, "sum the totals")
    }

    /// The sum of the totals of the orders whose status is `status`: the rows the `status` index finds, each read
    /// for its total; 0 when there are none, as KVStore's sum.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, or when the sum overflows a 64-bit integer, as KVStore's
    ///   throws then.
    func sumOfTotals(status: Int) throws -> Int {
        let statement = statements.sumOfTotalsOfStatus
        try bindInteger(statement, 1, status)
        return try integerResult(statement, "sum the totals of a status")
    }

    /// Calls `body` with each order of the customers in `region`: the customers through the `region` index, then
    /// the orders of each through the compound index, one join.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not an order, and
    ///   what `body` throws.
    @inline(__always)
    func orders(inRegion region: Int, _ body: (Order) throws -> Void) throws {
        let statement = statements.ordersInRegion
        try bindInteger(statement, 1, region)
        try forEachOrder(statement, "query the orders of a region", body)
    }

    // MARK: - Rows

    /// Steps `statement`, which selects ``orderColumns``, and calls `body` with the order of each row.
    @inline(__always)
    private func forEachOrder(
        _ statement: OpaquePointer, _ operation: StaticString, _ body: (Order) throws -> Void
    ) throws {
        try sqlite.forEachRow(statement, operation) { row in try body(try decodeOrder(row)) }
    }

    /// Decodes the order of the current row of a statement that selects ``orderColumns``.
    ///
    /// - Throws: ``RecordDecodingError`` when a column does not hold what an order stores.
    @inline(__always)
    private func decodeOrder(_ row: OpaquePointer) throws -> Order {
        let id = try sqlite.uuid(row, 0)
        let customerID = sqlite3_column_type(row, 1) == SQLITE_NULL ? nil : try sqlite.uuid(row, 1)
        return Order(
            id: id, customerID: customerID, status: Int(sqlite3_column_int64(row, 2)),
            total: Int(sqlite3_column_int64(row, 3)),
            placedAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(row, 4)))
    }

    /// Steps `statement`, which returns one row of one integer or `NULL` (the sum of no rows), and returns it, 0 for
    /// `NULL`.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails or the result is not an integer.
    private func integerResult(_ statement: OpaquePointer, _ operation: StaticString) throws -> Int {
        var result: Int?
        try sqlite.forEachRow(statement, operation) { row in
            switch sqlite3_column_type(row, 0) {
            case SQLITE_INTEGER: result = Int(sqlite3_column_int64(row, 0))
            case SQLITE_NULL: result = 0
            default:
                throw RawSQLiteError(code: SQLITE_MISMATCH, operation: "\(operation)", message: "not an integer")
            }
        }
        guard let result else {
            throw RawSQLiteError(code: SQLITE_MISMATCH, operation: "\(operation)", message: "no result row")
        }
        return result
    }

    // MARK: - Inserting

    @inline(__always)
    private func insert(_ customer: Customer) throws {
        let statement = statements.insertCustomer
        var name = customer.name
        try withUnsafeBytes(of: customer.id.uuid) { id in
            try name.withUTF8 { name in
                try sqlite.bindID(statement, 1, id.baseAddress)
                try sqlite.bindText(statement, 2, name)
                try bindInteger(statement, 3, customer.region)
                try sqlite.run(statement, "insert a customer")
            }
        }
    }

    @inline(__always)
    private func insert(_ order: Order) throws {
        let statement = statements.insertOrder
        try withUnsafeBytes(of: order.id.uuid) { id in
            try sqlite.bindID(statement, 1, id.baseAddress)
            try bindInteger(statement, 3, order.status)
            try bindInteger(statement, 4, order.total)
            try bindDate(statement, 5, order.placedAt)
            // The bound bytes are the closures' memory: the step runs inside them.
            if let customerID = order.customerID {
                try withUnsafeBytes(of: customerID.uuid) { customer in
                    try sqlite.bindID(statement, 2, customer.baseAddress)
                    try sqlite.run(statement, "insert an order")
                }
            } else {
                try sqlite.check(sqlite3_bind_null(statement, 2), "bind customerID")
                try sqlite.run(statement, "insert an order")
            }
        }
    }

    // MARK: - Binding

    @inline(__always)
    private func bindInteger(_ statement: OpaquePointer, _ index: Int32, _ value: Int) throws {
        try sqlite.check(sqlite3_bind_int64(statement, index, sqlite3_int64(value)), "bind an integer")
    }

    /// Binds a date as its `timeIntervalSinceReferenceDate`, as it is stored, so that it reads back bit for bit.
    @inline(__always)
    private func bindDate(_ statement: OpaquePointer, _ index: Int32, _ date: Date) throws {
        try sqlite.check(sqlite3_bind_double(statement, index, date.timeIntervalSinceReferenceDate), "bind a date")
    }
}
