import Foundation
import KVStore

/// An order of the query-power scenario: a customer's purchase, with the indexes the scenario's queries use.
///
/// `customerID` is a to-one relationship with its index; `status` and `total` have indexes of their own; the compound
/// index on `customerID` and `placedAt` answers "a customer's orders in a time window" with one key range.
struct Order: Model {
    var id: UUID
    /// The customer who placed the order.
    var customerID: UUID?
    /// 0 to 3 for almost every order; ``QueryPowerDataset/refunded`` for about one in 500.
    var status: Int
    /// The amount in cents.
    var total: Int
    var placedAt: Date

    /// Indexed on the status, the total, and the customer with the date; the customer is a to-one relationship.
    static let entity = Entity<Order>(
        name: "Order", indexes: [.index(\.status), .index(\.total), .index(\.customerID, \.placedAt)],
        relationships: [.toOne("customer", \.customerID, to: Customer.self)])
}

/// A customer of the query-power scenario, indexed on the region it belongs to.
struct Customer: Model {
    var id: UUID
    var name: String
    /// One of ``QueryPowerDataset/regionCount`` regions.
    var region: Int

    /// Indexed on the region.
    static let entity = Entity<Customer>(name: "Customer", indexes: [.index(\.region)])
}

extension Order: FieldCodable {
    /// Reads an order's fields directly.
    init(fields: borrowing FieldReader) throws {
        self.init(
            id: try fields.decode(UUID.self, forKey: "id"),
            customerID: try fields.decodeIfPresent(UUID.self, forKey: "customerID"),
            status: try fields.decode(Int.self, forKey: "status"),
            total: try fields.decode(Int.self, forKey: "total"),
            placedAt: try fields.decode(Date.self, forKey: "placedAt"))
    }

    /// Writes an order's fields directly, in the order of its coding keys.
    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encodeIfPresent(customerID, forKey: "customerID")
        try fields.encode(status, forKey: "status")
        try fields.encode(total, forKey: "total")
        try fields.encode(placedAt, forKey: "placedAt")
    }
}

extension Customer: FieldCodable {
    /// Reads a customer's fields directly.
    init(fields: borrowing FieldReader) throws {
        self.init(
            id: try fields.decode(UUID.self, forKey: "id"), name: try fields.decode(String.self, forKey: "name"),
            region: try fields.decode(Int.self, forKey: "region"))
    }

    /// Writes a customer's fields directly, in the order of its coding keys.
    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(name, forKey: "name")
        try fields.encode(region, forKey: "region")
    }
}
