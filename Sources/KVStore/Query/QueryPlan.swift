import Foundation

/// What the query planner needs to know of an index to choose it, whatever names its attributes: key paths from a
/// model for a fetch (``PlannerIndex``), stored fields' names for a query over records (``CatalogPlannerIndex``).
///
/// Both kinds go through the same index choice (``QueryPlanner/bestCandidate(for:indexes:)``), so a fetch and a
/// query by field name pick the same index and the same keys for the same equalities.
protocol PlannableIndex {
    /// What names an indexed attribute, compared with the attributes of the query's terms.
    associatedtype Attribute: Equatable

    /// The index's name in the catalog, such as `projectID` or `lastName+firstName`.
    var name: String { get }
    /// The indexed attributes, in key order. A compound index has several.
    var attributes: [Attribute] { get }
    /// Whether every key holds at most one record.
    var isUnique: Bool { get }
    /// Whether the indexed attribute is an array with one index entry per element.
    var isMultiEntry: Bool { get }
    /// One encoder per attribute: it encodes a value the query compares with, boxed, as the attribute's
    /// order-preserving key component, or returns `nil` when the value does not fit the attribute.
    var encodeComponents: [KeyComponentEncoder] { get }

    /// Whether a term's attribute is the index's attribute `attribute`.
    func matches(_ term: Attribute, _ attribute: Attribute) -> Bool
}

extension PlannableIndex {
    /// Whether a term's attribute is the index's attribute `attribute`: whether they are equal.
    func matches(_ term: Attribute, _ attribute: Attribute) -> Bool {
        term == attribute
    }

    /// The encoder of the first attribute, the only one of a single-attribute index.
    var encodeComponent: @Sendable (Any) -> [UInt8]? {
        guard let first = encodeComponents.first else { return { _ in nil } }
        return first.encode
    }
}

/// An index the query planner may use for a fetch, described independently of how the store keeps it.
///
/// Not generic over the model: the planner's code over indexes and terms is then specialized for this one type, where
/// code generic over the model asked the runtime for the metadata of its terms and candidates at every step of every
/// plan (a third of the planning of a compound range).
struct PlannerIndex: PlannableIndex {
    /// The index's name in the catalog, such as `projectID` or `lastName+firstName`.
    var name: String
    /// The key paths of the indexed attributes, from the model, in key order. A compound index has several.
    let keyPaths: [AnyKeyPath]
    /// Whether every key holds at most one record.
    var isUnique: Bool
    /// Whether the indexed attribute is an array with one index entry per element (`array.contains(value)` and
    /// equality on one element use it; ranges do not).
    var isMultiEntry: Bool
    /// One encoder per key path: it encodes an attribute value (the value a predicate compares with, boxed) as
    /// that attribute's order-preserving key component, or returns `nil` when the value's type does not fit the
    /// attribute. For an optional attribute the value may be `nil` (boxed as `Optional<Wrapped>.none`) or the
    /// wrapped value.
    var encodeComponents: [KeyComponentEncoder]

    /// For the record key (``QueryPlan/recordKey``), whether a key path is the model's `id`; `nil` for the others.
    private var isIDKeyPath: (@Sendable (AnyKeyPath) -> Bool)?

    /// Whether the index is the record key (``QueryPlan/recordKey``), whose attribute is the model's `id`.
    var isRecordKey: Bool { isIDKeyPath != nil }

    /// Whether the models under a key are exactly those whose attribute equals the value the key encodes (or, for a
    /// multi-entry index, whose array contains it): an equality it answers needs no evaluation
    /// (``ModelIndex/hasExactEquality``).
    var hasExactEquality = false

    /// Whether the models in a range of keys are exactly those whose attribute lies in the range of values: comparisons
    /// it answers need no evaluation (``ModelIndex/hasExactOrder``).
    var hasExactOrder = false

    /// Whether the models in a range of keys with an upper bound are exactly those whose attribute lies in the range
    /// of values (``ModelIndex/hasExactOrderBelowNaN``).
    var hasExactOrderBelowNaN = false

    /// For a compound index, the traits of each attribute's key components (``ModelIndex/componentTraits``); empty
    /// for the others.
    var componentTraits: [KeyComponentTraits] = []

    /// The key paths, as the planner compares them with the predicate's: ``keyPaths``.
    var attributes: [AnyKeyPath] { keyPaths }

    /// The record key of `Root`, for the planner: a unique index on `id`, whose keys are the IDs' 16 bytes.
    static func recordKey<Root>(of _: Root.Type) -> PlannerIndex {
        var index = PlannerIndex(
            name: QueryPlan.recordKey, keyPaths: [\Root.self], isUnique: true, isMultiEntry: false,
            encodeComponent: { value in
                // A `UUID` (the constant of `$0.id == id`) is taken out of its box by comparing types; `as?`, which
                // also unwraps an optional, costs several times more.
                func exactly<T>(_ value: T) -> UUID? { T.self == UUID.self ? knownTypeCast(value, to: UUID.self) : nil }
                guard let id = exactly(value) ?? value as? UUID else { return nil }
                return withBorrowedBytes(of: id.uuid) { Array($0) }
            })
        index.isIDKeyPath = { keyPath in RecordKeyPaths.isID(keyPath, of: Root.self) }
        index.hasExactEquality = true
        return index
    }

    /// Whether a term's attribute is the index's attribute `attribute`. For the record key it is when the term's key
    /// path is the model's `id` itself (``RecordKeyPaths``).
    func matches(_ term: AnyKeyPath, _ attribute: AnyKeyPath) -> Bool {
        guard let isIDKeyPath else { return term == attribute }
        return isIDKeyPath(term)
    }

    /// An index whose attributes all encode with `encodeComponent`.
    init(
        name: String,
        keyPaths: [AnyKeyPath],
        isUnique: Bool,
        isMultiEntry: Bool,
        encodeComponent: @escaping @Sendable (Any) -> [UInt8]?
    ) {
        self.init(
            name: name, keyPaths: keyPaths, isUnique: isUnique, isMultiEntry: isMultiEntry,
            encodeComponents: Array(repeating: KeyComponentEncoder(encodeComponent), count: keyPaths.count))
    }

    /// An index with one encoder per attribute.
    init(
        name: String,
        keyPaths: [AnyKeyPath],
        isUnique: Bool,
        isMultiEntry: Bool,
        encodeComponents: [KeyComponentEncoder]
    ) {
        self.name = name
        self.keyPaths = keyPaths
        self.isUnique = isUnique
        self.isMultiEntry = isMultiEntry
        self.encodeComponents = encodeComponents
    }
}

// An entity store keeps its planner indexes for every fetch. Key paths are immutable objects (a pattern and, for the
// key paths an entity declares, which ModelIndex keeps as `PartialKeyPath & Sendable`, no captured state), and the
// other members are values and `@Sendable` closures.
extension PlannerIndex: @unchecked Sendable {}

/// How a fetch reads candidate records. The fetch always evaluates the whole predicate on every candidate, so a plan
/// only has to guarantee that no matching record is left out.
enum QueryPlan: Equatable, Sendable {
    /// The name under which the record key takes part in index choice, as a unique index on `id` whose keys are
    /// the IDs' 16 bytes: `.keys(index: recordKey, keys:)` reads the records of those IDs directly. No declared
    /// index has this name, which is not a coding key Swift synthesizes.
    static let recordKey = "#id"

    /// Read every record of the entity.
    case scan
    /// Read the records under these exact index keys (an equality, or `array.contains($0.field)`), in key order.
    case keys(index: String, keys: [[UInt8]])
    /// Read the records whose index key lies in a range; `nil` bounds are open. A `reverse` read goes from the upper
    /// end, the models of one key still in ID order.
    case range(index: String, lower: Bound?, upper: Bound?, reverse: Bool = false)
    /// Read the whole index in key order (or reversed), because the first sort descriptor is on the indexed
    /// attribute and the fetch has a limit: the fetch stops once it has enough matches.
    case ordered(index: String, reverse: Bool)
    /// Read the records of each plan, each record once, for `||` across indexes: the plans in order, each in its own.
    indirect case union([QueryPlan])
    /// Read the IDs each plan finds (keys or ranges of indexes), keep those every plan finds, then read their records
    /// in ID order: for `&&` across indexes, when the store's counts say that reading the ID lists costs less than
    /// reading the first plan's records (``EntityStore/refined(_:descriptor:in:)``).
    indirect case intersection([QueryPlan])

    /// The index a plan of one index reads; `nil` for the others.
    var indexName: String? {
        switch self {
        case .keys(let name, _), .range(let name, _, _, _), .ordered(let name, _): name
        case .scan, .union, .intersection: nil
        }
    }

    /// One end of a key range.
    struct Bound: Equatable, Sendable {
        var key: [UInt8]
        var isInclusive: Bool
    }
}

/// A plan with the facts the fetch needs to run it and to explain it.
struct PlannedQuery: Equatable, Sendable {
    /// How candidates are read.
    var plan: QueryPlan
    /// Whether candidates come out already in the order of the sort descriptors, so the fetch can skip sorting and
    /// stop early at `offset + limit`.
    var isSorted: Bool
    /// The unique indexes among those the plan reads, for ``description``: empty in the common case.
    var uniqueIndexes: [String] = []
    /// Whether the plan yields exactly the models the predicate matches, so that the fetch need not evaluate it on
    /// them, and a count or a list of IDs need not read them (``QueryPlanner/isExact(_:predicate:terms:indexes:)``).
    var isExact = false
    /// Whether the store's counts could choose another plan (``QueryPlanner/mayCount(_:plan:)``); when not, a fetch
    /// counts nothing.
    var mayCount = false
    /// When ``mayCount``, the candidates the planner ranked, best first, which the store weighs by its counts
    /// (``EntityStore/refined(_:descriptor:in:)``) without walking the predicate again; `nil` when it must (a plan
    /// from a template).
    var candidates: [QueryPlanner.Candidate]?

    /// A one-line human description, such as `index projectID: 1 key` or `scan`, for `explain`; made when asked for,
    /// not by every fetch.
    var description: String {
        QueryPlanner.describe(plan, uniqueIndexes: uniqueIndexes)
    }
}
