import Foundation

/// A value computed over the models a predicate matches, without building them where the store can help: how many
/// there are, or the sum, minimum, maximum, average or distinct values of one of their attributes.
///
/// Ask a context or a transaction for one, alone or grouped by another attribute:
///
/// ```swift
/// let open = #Predicate<Task> { !$0.isDone }
/// let tasks = try context.aggregate(.count, matching: open)
/// let hours = try context.aggregate(.sum(\.estimate), matching: open)
/// let latest = try context.aggregate(.maximum(\.dueDate))
/// let hoursByProject = try context.aggregate(.sum(\.estimate), matching: open, groupedBy: \.projectID)
/// ```
///
/// What each computes:
/// - ``count``: the number of models.
/// - `sum`: the exact sum of an integer attribute, in its own type; it throws
///   ``KVStoreError/overflow`` when the sum does not fit that type (whatever the order of the models: partial sums
///   are kept wider). Floating-point attributes add up as `Double` or `Float` do, in an unspecified order.
/// - `minimum` and `maximum`: the least and greatest
///   value by `<`, `nil` when there are no values.
/// - `average`: the exact sum divided by the number of values, as a `Double`, `nil`
///   when there are none.
/// - ``distinct(_:)``: the set of values, `nil` included for an optional attribute.
///
/// On an optional attribute, `sum`, `minimum`, `maximum` and `average` pass over `nil` values, as SQL passes over
/// `NULL`s: the average of `[2, nil, 4]` is 3.
///
/// How the store computes it, from the cheapest: an aggregate of an attribute that a non-unique single-attribute
/// index holds exactly (integers, `Bool`, `UUID`, `String`, optionals of them; for `minimum` and `maximum`, integers
/// and dates), with no predicate or one that index answers exactly, reads only the index: one entry for a minimum or
/// a maximum, one key and its count of entries for each distinct value otherwise. Another exact plan reads only the
/// candidates' records and decodes the one attribute from each. Only a predicate that must be evaluated makes the
/// store decode the models. ``ModelContext/explain(_:matching:)`` says which it is.
public struct Aggregate<M: StoredModel, Result>: Sendable, CustomStringConvertible {
    /// What the aggregate computes, such as `sum(estimate)`.
    public let description: String
    /// What it computes, for the store's choice of how.
    let operation: Operation
    /// The attribute it reads; `nil` for ``count``.
    let keyPath: (PartialKeyPath<M> & Sendable)?
    /// A fresh state, one per group.
    let makeState: @Sendable () -> AggregateState<M, Result>

    /// What an aggregate computes.
    enum Operation: Sendable {
        case count, sum, minimum, maximum, average, distinct
    }

    private init<V, A: Accumulator<V, Result>>(
        _ operation: Operation, _ keyPath: KeyPath<M, V> & Sendable, _ makeAccumulator: @escaping @Sendable () -> A
    ) {
        self.operation = operation
        self.keyPath = keyPath
        description = "\(operation)(\(ModelIndex<M>.fieldName(of: keyPath)))"
        makeState = { FieldAggregateState(keyPath: keyPath, accumulator: makeAccumulator()) }
    }

    private init(
        operation: Operation, keyPath: (PartialKeyPath<M> & Sendable)?, description: String,
        makeState: @escaping @Sendable () -> AggregateState<M, Result>
    ) {
        self.operation = operation
        self.keyPath = keyPath
        self.description = description
        self.makeState = makeState
    }
}

extension Aggregate {
    /// The number of models.
    public static var count: Aggregate<M, Int> {
        Aggregate<M, Int>(operation: .count, keyPath: nil, description: "count") { CountState<M>() }
    }

    /// The sum of an integer attribute, in its type.
    ///
    /// The sum is exact: ``ModelContext/aggregate(_:matching:)-tanr`` throws ``KVStoreError/overflow`` when it does
    /// not fit the attribute's type, whatever the order the models are read in.
    public static func sum<V: FixedWidthInteger & Sendable>(_ keyPath: KeyPath<M, V> & Sendable) -> Aggregate<M, V> {
        .init(.sum, keyPath) { IntegerSum<V>() }
    }

    /// The sum of an optional integer attribute's values, passing over `nil`s; 0 when there are none.
    public static func sum<V: FixedWidthInteger & Sendable>(_ keyPath: KeyPath<M, V?> & Sendable) -> Aggregate<M, V> {
        .init(.sum, keyPath) { SkippingNil(IntegerSum<V>()) }
    }

    /// The sum of a floating-point attribute, added up in an unspecified order.
    public static func sum<V: BinaryFloatingPoint & Sendable>(_ keyPath: KeyPath<M, V> & Sendable) -> Aggregate<M, V> {
        .init(.sum, keyPath) { FloatingSum<V>() }
    }

    /// The sum of an optional floating-point attribute's values, passing over `nil`s.
    public static func sum<V: BinaryFloatingPoint & Sendable>(
        _ keyPath: KeyPath<M, V?> & Sendable
    ) -> Aggregate<M, V> {
        .init(.sum, keyPath) { SkippingNil(FloatingSum<V>()) }
    }

    /// The least value of an attribute, `nil` when no model matches.
    public static func minimum<V: Comparable & Sendable>(_ keyPath: KeyPath<M, V> & Sendable) -> Aggregate<M, V?> {
        .init(.minimum, keyPath) { Extreme<V>(keepsGreatest: false) }
    }

    /// The least value of an optional attribute, passing over `nil`s; `nil` when there are none.
    public static func minimum<V: Comparable & Sendable>(_ keyPath: KeyPath<M, V?> & Sendable) -> Aggregate<M, V?> {
        .init(.minimum, keyPath) { SkippingNil(Extreme<V>(keepsGreatest: false)) }
    }

    /// The greatest value of an attribute, `nil` when no model matches.
    public static func maximum<V: Comparable & Sendable>(_ keyPath: KeyPath<M, V> & Sendable) -> Aggregate<M, V?> {
        .init(.maximum, keyPath) { Extreme<V>(keepsGreatest: true) }
    }

    /// The greatest value of an optional attribute, passing over `nil`s; `nil` when there are none.
    public static func maximum<V: Comparable & Sendable>(_ keyPath: KeyPath<M, V?> & Sendable) -> Aggregate<M, V?> {
        .init(.maximum, keyPath) { SkippingNil(Extreme<V>(keepsGreatest: true)) }
    }

    /// The average of an integer attribute: its exact sum divided by the number of models, `nil` when none matches.
    public static func average<V: FixedWidthInteger & Sendable>(
        _ keyPath: KeyPath<M, V> & Sendable
    ) -> Aggregate<M, Double?> {
        .init(.average, keyPath) { IntegerAverage<V>() }
    }

    /// The average of an optional integer attribute's values, passing over `nil`s; `nil` when there are none.
    public static func average<V: FixedWidthInteger & Sendable>(
        _ keyPath: KeyPath<M, V?> & Sendable
    ) -> Aggregate<M, Double?> {
        .init(.average, keyPath) { SkippingNil(IntegerAverage<V>()) }
    }

    /// The average of a floating-point attribute, `nil` when no model matches.
    public static func average<V: BinaryFloatingPoint & Sendable>(
        _ keyPath: KeyPath<M, V> & Sendable
    ) -> Aggregate<M, Double?> {
        .init(.average, keyPath) { FloatingAverage<V>() }
    }

    /// The average of an optional floating-point attribute's values, passing over `nil`s; `nil` when there are none.
    public static func average<V: BinaryFloatingPoint & Sendable>(
        _ keyPath: KeyPath<M, V?> & Sendable
    ) -> Aggregate<M, Double?> {
        .init(.average, keyPath) { SkippingNil(FloatingAverage<V>()) }
    }

    /// The distinct values of an attribute; for an optional attribute, `nil` is one of them when a model holds it.
    public static func distinct<V: Hashable & Sendable>(_ keyPath: KeyPath<M, V> & Sendable) -> Aggregate<M, Set<V>> {
        .init(.distinct, keyPath) { Distinct<V>() }
    }
}

// MARK: - States

/// The running state of one aggregate over one group: the models, records and index keys the store meets go in,
/// ``result()`` comes out.
class AggregateState<M: StoredModel, Result> {
    /// Adds a model's value.
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum no longer fits.
    func add(_ model: M) throws {}

    /// Adds `count` models whose attribute holds the value a record stores under the field `name`, read with
    /// `fields`. Returns `false`, adding nothing, when the record has no value of the attribute's type there: the
    /// caller decodes the model then.
    ///
    /// - Throws: ``KVStoreError/overflow``; what reading the record throws for damaged bytes.
    func add(from fields: borrowing FieldReader, name: String, count: Int) throws -> Bool { true }

    /// Adds `count` models whose attribute holds the value the whole index key `bytes` encodes. Returns `false`,
    /// adding nothing, when the bytes are not a key of the attribute's type.
    ///
    /// - Throws: ``KVStoreError/overflow``.
    func add(key bytes: BorrowedBytes, count: Int) throws -> Bool { true }

    /// Runs `body`, which adds the values of an index's keys with `addKey` (as ``add(key:count:)`` does) and models
    /// with `addModel` (as ``add(_:)`` does). A state with a running value keeps it in a local variable meanwhile,
    /// so that adding a key costs no run-time exclusivity check on its stored property (a sum over an index of
    /// distinct values adds a key at a time); everything `body` adds must go through the two functions.
    ///
    /// - Throws: What `body` throws.
    func addingIndexValues(
        _ body: (_ addKey: (BorrowedBytes, Int) throws -> Bool, _ addModel: (M) throws -> Void) throws -> Void
    ) throws {
        try body({ try self.add(key: $0, count: $1) }, { try self.add($0) })
    }

    /// Whether a record read for its field `name` with `fields` gives the same value as the decoded `model`.
    ///
    /// - Throws: What reading the record throws.
    func readsSameValue(from fields: borrowing FieldReader, name: String, as model: M) throws -> Bool { true }

    /// The aggregate's value.
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum does not fit its type.
    func result() throws -> Result {
        // Every state is one of the subclasses below, which override this.
        throw KVStoreError(.invalidModel, message: "An aggregate's state has no result of its own")
    }
}

/// The state of ``Aggregate/count``.
final class CountState<M: StoredModel>: AggregateState<M, Int> {
    private var count = 0

    override func add(_ model: M) throws { count += 1 }

    override func add(from fields: borrowing FieldReader, name: String, count: Int) throws -> Bool {
        self.count += count
        return true
    }

    override func add(key bytes: BorrowedBytes, count: Int) throws -> Bool {
        self.count += count
        return true
    }

    /// Adds `count` models counted without reading them.
    func add(counted count: Int) { self.count += count }

    override func result() throws -> Int { count }
}

/// The state of an aggregate of the attribute at `keyPath`.
final class FieldAggregateState<M: StoredModel, V, A: Accumulator<V, Result>, Result>: AggregateState<M, Result> {
    private let keyPath: KeyPath<M, V>
    private var accumulator: A
    /// How a record's field is read, picked once for `V`.
    private let fieldReader: ((borrowing FieldReader, String) throws -> V?)?
    /// How an index key is read, picked once for `V`.
    private let keyReader: ((BorrowedBytes) -> V?)?

    init(keyPath: KeyPath<M, V>, accumulator: A) {
        self.keyPath = keyPath
        self.accumulator = accumulator
        fieldReader = TypedReaders<V>.fieldReader()
        keyReader = TypedReaders<V>.keyReader()
    }

    override func add(_ model: M) throws {
        try accumulator.add(model[keyPath: keyPath], count: 1)
    }

    override func add(from fields: borrowing FieldReader, name: String, count: Int) throws -> Bool {
        if let added = try accumulator.add(field: fields, name: name, count: count) { return added }
        return try Self.addReading(fields, name: name, count: count, with: fieldReader, to: &accumulator)
    }

    /// Adds the value `fieldReader` reads from the field `name` of `fields` to `accumulator`; `false` when it reads
    /// none. Never inlined into its caller, which adds a record at a time: it would otherwise look up the metadata of
    /// `V?` at every record, even when the accumulator reads the field itself.
    @inline(never)
    private static func addReading(
        _ fields: borrowing FieldReader, name: String, count: Int,
        with fieldReader: ((borrowing FieldReader, String) throws -> V?)?, to accumulator: inout A
    ) throws -> Bool {
        guard let value = try StoredValue.read(fields, name: name, with: fieldReader) else { return false }
        try accumulator.add(value, count: count)
        return true
    }

    override func add(key bytes: BorrowedBytes, count: Int) throws -> Bool {
        if let added = try accumulator.add(indexKey: bytes, count: count) { return added }
        return try Self.addReading(key: bytes, count: count, with: keyReader, to: &accumulator)
    }

    /// Adds the value `keyReader` reads from `bytes` to `accumulator`; `false` when it reads none. Never inlined into
    /// its callers, which add a key at a time: each would otherwise look up the metadata of `V?` the reader returns.
    @inline(never)
    private static func addReading(
        key bytes: BorrowedBytes, count: Int, with keyReader: ((BorrowedBytes) -> V?)?, to accumulator: inout A
    ) throws -> Bool {
        guard let value = keyReader?(bytes) else { return false }
        try accumulator.add(value, count: count)
        return true
    }

    override func addingIndexValues(
        _ body: (_ addKey: (BorrowedBytes, Int) throws -> Bool, _ addModel: (M) throws -> Void) throws -> Void
    ) throws {
        var accumulator = self.accumulator
        defer { self.accumulator = accumulator }
        let (keyPath, keyReader) = (self.keyPath, self.keyReader)
        try body(
            { bytes, count in
                if let added = try accumulator.add(indexKey: bytes, count: count) { return added }
                return try Self.addReading(key: bytes, count: count, with: keyReader, to: &accumulator)
            },
            { model in try accumulator.add(model[keyPath: keyPath], count: 1) })
    }

    override func readsSameValue(from fields: borrowing FieldReader, name: String, as model: M) throws -> Bool {
        guard let value = try StoredValue.read(fields, name: name, with: fieldReader) else { return false }
        return StoredValue.areEqual(value, model[keyPath: keyPath])
    }

    override func result() throws -> Result { try accumulator.result() }
}

/// Reading an attribute's value from a record's top-level field.
enum StoredValue {
    /// The value the record holds under `name`, read with `reader` (``TypedReaders/fieldReader()``), or `nil` when
    /// there is no reader, the record holds nothing there (and the attribute is not optional) or holds a value of
    /// another type: the caller decodes the model then.
    ///
    /// - Throws: What reading the record throws for damaged bytes (``RecordFormatError``).
    static func read<V>(
        _ fields: borrowing FieldReader, name: String, with reader: ((borrowing FieldReader, String) throws -> V?)?
    ) throws -> V? {
        guard let reader else { return nil }
        do {
            return try reader(fields, name)
        } catch let error as RecordFormatError {
            throw error
        } catch {
            return nil
        }
    }

    /// Whether two values are equal, when their type is `Equatable` (every aggregated type is).
    static func areEqual<V>(_ lhs: V, _ rhs: V) -> Bool {
        guard let lhs = lhs as? any Equatable else { return false }
        return lhs.isEqual(to: rhs)
    }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self).map { $0 == self } ?? false
    }
}

// MARK: - Accumulators

/// What an aggregate keeps while values go in.
protocol Accumulator<Value, Result>: SendableMetatype {
    associatedtype Value
    associatedtype Result
    /// Adds `value`, held by `count` models.
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum no longer fits even the wide type it is kept in.
    mutating func add(_ value: Value, count: Int) throws
    /// Adds the value the whole index key `bytes` encodes, held by `count` models, read by the accumulator itself:
    /// `true`, `false` when the bytes are not a key of the value's type, or `nil` when the accumulator reads no keys
    /// (the state reads the value, then calls ``add(_:count:)``).
    ///
    /// An index aggregate adds a key at a time, in code generic over the value's type: an accumulator that reads
    /// keys of its own (the integer sums) spares each key the generic reading and arithmetic, which cost more than
    /// the rest of the key's work.
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum no longer fits even the wide type it is kept in.
    mutating func add(indexKey bytes: BorrowedBytes, count: Int) throws -> Bool?
    /// Adds the value a record stores under the field `name`, read with `fields`, held by `count` models, read by
    /// the accumulator itself: `true`, `false` when the record holds no value of the type there (the caller decodes
    /// the model then), or `nil` when the accumulator reads no fields (the state reads the value, then calls
    /// ``add(_:count:)``). For the same reason as ``add(indexKey:count:)``: an aggregate of records adds one at a time.
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum no longer fits even the wide type it is kept in;
    ///   ``RecordFormatError`` for damaged bytes.
    mutating func add(field fields: borrowing FieldReader, name: String, count: Int) throws -> Bool?
    /// The aggregate's value.
    ///
    /// - Throws: ``KVStoreError/overflow`` when an integer sum does not fit its type.
    func result() throws -> Result
}

extension Accumulator {
    /// Reads no keys of its own.
    mutating func add(indexKey bytes: BorrowedBytes, count: Int) throws -> Bool? { nil }

    /// Reads no fields of its own.
    mutating func add(field fields: borrowing FieldReader, name: String, count: Int) throws -> Bool? { nil }
}

/// An accumulator of an optional attribute that passes over `nil`s.
struct SkippingNil<Base: Accumulator>: Accumulator {
    var base: Base

    init(_ base: Base) { self.base = base }

    mutating func add(_ value: Base.Value?, count: Int) throws {
        if let value { try base.add(value, count: count) }
    }

    /// The key of `nil` adds nothing; the others are the base's.
    mutating func add(indexKey bytes: BorrowedBytes, count: Int) throws -> Bool? {
        if bytes.count == 1, bytes[0] == IndexKey.absent { return true }
        return try base.add(indexKey: bytes, count: count)
    }

    func result() throws -> Base.Result { try base.result() }
}

/// An exact sum of integers, kept as a 128-bit integer for types of up to 64 bits (so that partial sums never
/// overflow before the total does) and in the type itself for wider ones.
struct IntegerSum<V: FixedWidthInteger>: Accumulator {
    private var total: Int128 = 0
    /// `V`'s range, for the keys read in place, and whether it is signed; kept here so that reading a key makes no
    /// generic call (the fields of fixed size come before the one of type `V`).
    private let minimum: Int128
    private let maximum: Int128
    private let isSigned: Bool
    /// Whether `V` has at most 64 bits, so that its sum is kept in ``total`` and its keys are read here.
    private let isNarrow: Bool
    private var wideTotal: V = 0

    init() {
        isNarrow = V.bitWidth <= 64
        isSigned = V.isSigned
        minimum = V.bitWidth <= 64 ? Int128(V.min) : 0
        maximum = V.bitWidth <= 64 ? Int128(V.max) : 0
    }

    mutating func add(_ value: V, count: Int) throws {
        if isNarrow {
            // Through a 64-bit integer of `V`'s signedness: a conversion that makes one generic call, where
            // `Int128(value)` makes several.
            let wide = isSigned ? Int128(Int64(truncatingIfNeeded: value)) : Int128(UInt64(truncatingIfNeeded: value))
            try add(wide: wide, count: count)
        } else {
            guard let count = V(exactly: count) else { throw Self.overflow }
            let (product, productOverflow) = value.multipliedReportingOverflow(by: count)
            let (sum, sumOverflow) = wideTotal.addingReportingOverflow(product)
            guard !productOverflow, !sumOverflow else { throw Self.overflow }
            wideTotal = sum
        }
    }

    /// Adds `value`, a value of `V` of at most 64 bits, `count` times.
    @inline(__always)
    private mutating func add(wide value: Int128, count: Int) throws {
        // One entry, as most keys of an index of distinct values hold: no 128-bit multiplication.
        let (product, productOverflow) =
            count == 1 ? (value, false) : value.multipliedReportingOverflow(by: Int128(count))
        let (sum, sumOverflow) = total.addingReportingOverflow(product)
        guard !productOverflow, !sumOverflow else { throw Self.overflow }
        total = sum
    }

    /// Reads the key of an integer of at most 64 bits in place (``IndexKeyReadable``'s reading of integers, to
    /// `Int128`), for `V` of at most 64 bits; wider types go through the state's reader.
    mutating func add(indexKey bytes: BorrowedBytes, count: Int) throws -> Bool? {
        guard isNarrow else { return nil }
        guard bytes.count == 9, bytes[0] == IndexKey.present else { return false }
        let bits = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
        let value = isSigned ? Int128(Int64(bitPattern: bits ^ (1 << 63))) : Int128(bits)
        guard value >= minimum, value <= maximum else { return false }
        try add(wide: value, count: count)
        return true
    }

    /// Reads an integer field of at most 64 bits as a 64-bit integer of `V`'s signedness, checked against `V`'s
    /// range, for `V` of at most 64 bits; wider types go through the state's reader.
    mutating func add(field fields: borrowing FieldReader, name: String, count: Int) throws -> Bool? {
        guard isNarrow else { return nil }
        let value: Int128
        do {
            if isSigned {
                guard let read = try fields.decodeIfPresent(Int64.self, forKey: name) else { return false }
                value = Int128(read)
            } else {
                guard let read = try fields.decodeIfPresent(UInt64.self, forKey: name) else { return false }
                value = Int128(read)
            }
        } catch let error as RecordFormatError {
            throw error
        } catch {
            // A value of another type: the model is decoded, and its decoding says what is wrong.
            return false
        }
        guard value >= minimum, value <= maximum else { return false }
        try add(wide: value, count: count)
        return true
    }

    func result() throws -> V {
        guard V.bitWidth <= 64 else { return wideTotal }
        guard let result = V(exactly: total) else { throw Self.overflow }
        return result
    }

    /// The exact total, for an average.
    var exactTotal: Double { V.bitWidth <= 64 ? Double(total) : Double(wideTotal) }

    static var overflow: KVStoreError {
        KVStoreError(
            .overflow,
            message: "The sum does not fit \(V.self): aggregate an attribute of a wider type, such as a computed "
                + "property that converts it to Int64 or Double")
    }
}

/// A floating-point sum.
struct FloatingSum<V: BinaryFloatingPoint>: Accumulator {
    private var total: V = 0

    mutating func add(_ value: V, count: Int) throws {
        total += count == 1 ? value : value * V(count)
    }

    func result() throws -> V { total }
}

/// The least or the greatest value.
struct Extreme<V: Comparable>: Accumulator {
    let keepsGreatest: Bool
    private var current: V?

    init(keepsGreatest: Bool) { self.keepsGreatest = keepsGreatest }

    mutating func add(_ value: V, count: Int) throws {
        guard let current else {
            self.current = value
            return
        }
        if keepsGreatest ? current < value : value < current { self.current = value }
    }

    func result() throws -> V? { current }
}

/// The average of integers: their exact sum over their count.
struct IntegerAverage<V: FixedWidthInteger>: Accumulator {
    private var sum = IntegerSum<V>()
    private var count = 0

    mutating func add(_ value: V, count: Int) throws {
        try sum.add(value, count: count)
        self.count += count
    }

    /// The sum's reading of the key.
    mutating func add(indexKey bytes: BorrowedBytes, count: Int) throws -> Bool? {
        guard let added = try sum.add(indexKey: bytes, count: count) else { return nil }
        if added { self.count += count }
        return added
    }

    func result() throws -> Double? { count == 0 ? nil : sum.exactTotal / Double(count) }
}

/// The average of floating-point numbers, added up as `Double`s.
struct FloatingAverage<V: BinaryFloatingPoint>: Accumulator {
    private var total = 0.0
    private var count = 0

    mutating func add(_ value: V, count: Int) throws {
        total += Double(value) * Double(count)
        self.count += count
    }

    func result() throws -> Double? { count == 0 ? nil : total / Double(count) }
}

/// The distinct values.
struct Distinct<V: Hashable>: Accumulator {
    private var values: Set<V> = []

    mutating func add(_ value: V, count: Int) throws { values.insert(value) }

    func result() throws -> Set<V> { values }
}
