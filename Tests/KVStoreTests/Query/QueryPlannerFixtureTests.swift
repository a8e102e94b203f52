import Foundation
import Testing

@testable import KVStore

/// A model for the query planner tests, with one attribute for each kind of index the planner meets.
struct PlannerItem {
    /// Indexed (non-unique) string.
    var title: String
    /// Unique string.
    var email: String
    /// Indexed integer.
    var count: Int
    /// Another indexed integer, to make a conjunction choose.
    var priority: Int
    /// Indexed optional reference.
    var projectID: UUID?
    /// Multi-entry index: one entry per tag.
    var tags: [String]
    /// First attribute of the compound index `lastName+firstName`.
    var lastName: String
    /// Second attribute of the compound index `lastName+firstName`.
    var firstName: String
    /// Indexed Boolean.
    var isDone: Bool
    /// Not indexed.
    var note: String
    /// Not indexed, optional, for optional chaining.
    var nickname: String?
    /// Nested value whose `city` is indexed.
    var address: PlannerAddress
}

/// A nested value of `PlannerItem`.
struct PlannerAddress {
    /// Indexed through `\PlannerItem.address.city`.
    var city: String
}

/// A test-only order-preserving key encoding, small enough to check by eye: Int big-endian with the sign bit
/// flipped, String as UTF-8, UUID raw, Bool one byte, Optional a presence byte (0 for nil, 1 then the value).
enum PlannerKey {
    /// Encodes an integer so that byte order is numeric order.
    static func int(_ value: Int) -> [UInt8] {
        withUnsafeBytes(of: (UInt64(bitPattern: Int64(value)) ^ (1 << 63)).bigEndian) { Array($0) }
    }

    /// Encodes a string as its UTF-8 bytes.
    static func string(_ value: String) -> [UInt8] { Array(value.utf8) }

    /// Encodes an optional UUID: a presence byte, then the 16 raw bytes.
    static func uuid(_ value: UUID?) -> [UInt8] {
        guard let value else { return [0] }
        return [1] + withUnsafeBytes(of: value.uuid) { Array($0) }
    }

    /// The `encodeComponent` of an `Int` attribute.
    static func encodeInt(_ value: Any) -> [UInt8]? { (value as? Int).map(int) }

    /// The `encodeComponent` of a `String` attribute (or of one element of a `[String]`).
    static func encodeString(_ value: Any) -> [UInt8]? { (value as? String).map(string) }

    /// The `encodeComponent` of a `Bool` attribute.
    static func encodeBool(_ value: Any) -> [UInt8]? { (value as? Bool).map { [$0 ? 1 : 0] } }

    /// The `encodeComponent` of a `UUID?` attribute: takes a `UUID`, an `Optional<UUID>` or `nil`, boxed.
    static func encodeOptionalUUID(_ value: Any) -> [UInt8]? {
        if let wrapped = value as? UUID { return uuid(wrapped) }
        if let optional = value as? UUID?, optional == nil { return uuid(nil) }
        return nil
    }
}

/// Indexes and a shorthand for planning `PlannerItem` fetches.
enum PlannerFixture {
    /// Every index of `PlannerItem`, in declaration order.
    static var indexes: [PlannerIndex] {
        [
            index("title", \.title, encode: PlannerKey.encodeString),
            index("email", \.email, isUnique: true, encode: PlannerKey.encodeString),
            index("count", \.count, encode: PlannerKey.encodeInt),
            index("priority", \.priority, encode: PlannerKey.encodeInt),
            index("projectID", \.projectID, encode: PlannerKey.encodeOptionalUUID),
            index("tags", \.tags, isMultiEntry: true, encode: PlannerKey.encodeString),
            PlannerIndex(
                name: "lastName+firstName",
                keyPaths: [\PlannerItem.lastName, \PlannerItem.firstName],
                isUnique: false,
                isMultiEntry: false,
                encodeComponent: PlannerKey.encodeString
            ),
            index("isDone", \.isDone, encode: PlannerKey.encodeBool),
            index("city", \.address.city, encode: PlannerKey.encodeString),
        ]
    }

    /// Builds a single-attribute index.
    static func index(
        _ name: String,
        _ keyPath: PartialKeyPath<PlannerItem>,
        isUnique: Bool = false,
        isMultiEntry: Bool = false,
        encode: @escaping @Sendable (Any) -> [UInt8]?
    ) -> PlannerIndex {
        PlannerIndex(
            name: name,
            keyPaths: [keyPath],
            isUnique: isUnique,
            isMultiEntry: isMultiEntry,
            encodeComponent: encode
        )
    }

    /// Plans a fetch of `PlannerItem` on the fixture's indexes (or on others).
    static func plan(
        _ predicate: Predicate<PlannerItem>?,
        sortBy: [SortDescriptor<PlannerItem>] = [],
        limit: Int? = nil,
        indexes: [PlannerIndex] = indexes
    ) -> PlannedQuery {
        QueryPlanner.plan(predicate: predicate, sortBy: sortBy, fetchLimit: limit, fetchOffset: 0, indexes: indexes)
    }
}

/// A named predicate and the plan it should get, as a test argument.
struct PlannerCase: Sendable, CustomTestStringConvertible {
    /// The predicate's source, shown in test results.
    var testDescription: String
    /// The predicate to plan.
    var predicate: Predicate<PlannerItem>
    /// The plan expected.
    var expected: QueryPlan

    /// Creates a case.
    init(_ source: String, _ predicate: Predicate<PlannerItem>, _ expected: QueryPlan) {
        self.testDescription = source
        self.predicate = predicate
        self.expected = expected
    }
}

/// The planner tests' expectations are only as good as the fixture's encoding: check that it preserves order.
@Suite struct QueryPlannerFixtureTests {
    /// Integer keys sort in numeric order, negatives first.
    @Test func intKeysSortNumerically() {
        let values = [Int.min, -300, -1, 0, 1, 5, 300, Int.max]
        let keys = values.map(PlannerKey.int)
        #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(PlannerKey.int(5) == [0x80, 0, 0, 0, 0, 0, 0, 5])
    }

    /// `nil` sorts before every UUID, and a UUID encodes whether it comes boxed optional or not.
    @Test func optionalUUIDKeysPutNilFirst() {
        let id = UUID()
        #expect(PlannerKey.encodeOptionalUUID(UUID?.none as Any) == [0])
        #expect(PlannerKey.encodeOptionalUUID(id) == PlannerKey.uuid(id))
        #expect(PlannerKey.encodeOptionalUUID(UUID?.some(id) as Any) == PlannerKey.uuid(id))
        #expect(PlannerKey.uuid(id).count == 17)
    }

    /// A value of the wrong type does not encode, which the planner treats as not plannable.
    @Test func encodersRejectOtherTypes() {
        #expect(PlannerKey.encodeInt("5") == nil)
        #expect(PlannerKey.encodeString(5) == nil)
        #expect(PlannerKey.encodeOptionalUUID("id") == nil)
    }
}
