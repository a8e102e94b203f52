import Foundation
import KVStore

/// Aggregates of the records a query finds, record by record, in memory bounded by the number of groups and
/// distinct values rather than of records: `kvtool count --sum`, `--average`, `--min`, `--max`, `--distinct` and
/// `--group-by`.
///
/// A field's values are its value, or for an array, each of its elements; `null` and absent values are left out of
/// sums, averages, minimums and maximums. Then:
/// - A sum of integers is exact (in 128 bits as it goes), and must fit in 64 bits at the end: an `Int64`, or a
///   `UInt64` when the values include unsigned ones; otherwise ``add(_:id:)``'s caller gets an ``AggregationError``
///   from ``groups()``. A sum with a floating-point value is a `Double`. The sum of no values is 0.
/// - An average is a `Double`: the exact sum divided by the count of values; `null` when there are none. A sum or an
///   average that is NaN (a NaN value, or infinities of both signs) is the one quiet NaN.
/// - Minimum and maximum follow ``RecordOrder`` (loosely: numbers of every kind together; NaN above every number),
///   and are the first such value in the order records come; `null` when there are none.
/// - Distinct counts the different values, equal as index keys are (so `-0.0` and `0.0` are one), `null` (an absent,
///   null or empty array value) being one of them.
/// - A group holds the records whose field has its value: `null` for absent, null and empty-array values, and each
///   element's group for an array (a record counts once in each). Groups come in the index order of their values.
///
/// ```swift
/// var aggregation = RecordAggregation(requests: [.init(.sum, of: "pages")], groupBy: "shelf")
/// try aggregation.add(record, id: id)
/// for group in try aggregation.groups() { print(group.value, group.count, group.results) }
/// ```
package struct RecordAggregation {
    /// What is computed of a field.
    package enum Function: String, CaseIterable, Sendable {
        /// The sum of the numbers.
        case sum
        /// Their average, a `Double`.
        case average
        /// The smallest value.
        case min
        /// The largest value.
        case max
        /// The number of distinct values.
        case distinct
    }

    /// One aggregate to compute: a function of a field.
    package struct Request: Equatable, Sendable {
        /// The function.
        package let function: Function
        /// The field, possibly dotted into nested objects.
        package let field: String

        /// Creates a request.
        ///
        /// - Parameters:
        ///   - function: The function.
        ///   - field: The field, possibly dotted into nested objects.
        package init(_ function: Function, of field: String) {
            self.function = function
            self.field = field
        }

        /// The request as a column title: `sum(pages)`.
        package var title: String {
            "\(function.rawValue)(\(field))"
        }
    }

    /// The results of a group, or of every record without `groupBy`.
    package struct Group: Equatable, Sendable {
        /// The group's value of the `groupBy` field (`null` for absent values); `nil` without `groupBy`.
        package let value: RecordValue?
        /// How many records the group holds.
        package let count: Int
        /// Each request's result, in the order of the requests: `null` where there is no value.
        package let results: [RecordValue]

        /// Creates a group's results.
        ///
        /// - Parameters:
        ///   - value: The group's value of the `groupBy` field; `nil` without `groupBy`.
        ///   - count: How many records the group holds.
        ///   - results: Each request's result, in the order of the requests.
        package init(value: RecordValue?, count: Int, results: [RecordValue]) {
            self.value = value
            self.count = count
            self.results = results
        }
    }

    /// The aggregates to compute.
    package let requests: [Request]
    /// The field whose values group the records, or `nil` for one group of every record.
    package let groupBy: String?
    /// How many records were added.
    package private(set) var recordCount = 0
    private var states: [[UInt8]: State] = [:]

    /// Creates an empty aggregation.
    ///
    /// - Parameters:
    ///   - requests: The aggregates to compute.
    ///   - groupBy: The field whose values group the records, or `nil` for one group.
    package init(requests: [Request], groupBy: String?) {
        self.requests = requests
        self.groupBy = groupBy
    }

    /// Adds a record to its groups.
    ///
    /// - Parameters:
    ///   - record: The record.
    ///   - id: Its ID, for messages.
    /// - Throws: ``AggregationError`` when a sum or an average meets a value that is not a number, or a minimum or a
    ///   maximum values without an order between them (a Boolean, a number and a string).
    package mutating func add(_ record: RecordValue, id: UUID) throws(AggregationError) {
        recordCount += 1
        guard let groupBy else { return try add(record, id: id, toGroup: [], value: nil) }
        var seen = Set<[UInt8]>()
        for value in Self.values(RecordIndexKeys.value(of: groupBy, in: record), keepingNull: true) {
            let key = Self.key(of: value)
            if seen.insert(key).inserted { try add(record, id: id, toGroup: key, value: value) }
        }
    }

    /// The results, group by group in the index order of their values (one group without `groupBy`, even when no
    /// record was added).
    ///
    /// - Throws: ``AggregationError`` when an integer sum does not fit in 64 bits.
    package func groups() throws(AggregationError) -> [Group] {
        if groupBy == nil && states.isEmpty {
            return [Group(value: nil, count: 0, results: try State(requests.count).results(of: requests, in: nil))]
        }
        var groups: [Group] = []
        for (_, state) in states.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let value = groupBy == nil ? nil : state.value
            let name = groupBy.map { "\($0)=\(RecordJSON.json(for: state.value, kind: state.value.kind).serialized())" }
            groups.append(
                Group(value: value, count: state.count, results: try state.results(of: requests, in: name)))
        }
        return groups
    }

    private mutating func add(
        _ record: RecordValue, id: UUID, toGroup key: [UInt8], value: RecordValue?
    ) throws(AggregationError) {
        var state = states.removeValue(forKey: key) ?? State(requests.count, value: value ?? .null)
        defer { states[key] = state }
        state.count += 1
        for (position, request) in requests.enumerated() {
            let field = RecordIndexKeys.value(of: request.field, in: record)
            let keepsNull = request.function == .distinct
            for value in Self.values(field, keepingNull: keepsNull) {
                try state.accumulators[position].add(value, for: request, id: id)
            }
        }
    }

    /// A field's values: its elements for an array, none for `null` (or `null` itself, and for an empty array, when
    /// `keepingNull`).
    private static func values(_ field: RecordValue, keepingNull: Bool) -> [RecordValue] {
        switch field {
        case .null: keepingNull ? [.null] : []
        case .array(let elements):
            keepingNull && elements.isEmpty ? [.null] : elements.filter { keepingNull || $0 != .null }
        default: [field]
        }
    }

    /// The bytes that tell values apart and order groups: the index key (a JSON text for values no key holds), then
    /// the kind, since keys of different kinds may share bytes.
    fileprivate static func key(of value: RecordValue) -> [UInt8] {
        IndexEntries.sortKey(value) + [value.kind.isBool ? ValueKind.true.rawValue : value.kind.rawValue]
    }

    /// A group's count and accumulators.
    private struct State {
        var value: RecordValue
        var count = 0
        var accumulators: [Accumulator]

        init(_ requests: Int, value: RecordValue = .null) {
            self.value = value
            accumulators = Array(repeating: Accumulator(), count: requests)
        }

        func results(of requests: [Request], in group: String?) throws(AggregationError) -> [RecordValue] {
            var results: [RecordValue] = []
            for (request, accumulator) in zip(requests, accumulators) {
                results.append(try accumulator.result(of: request, in: group))
            }
            return results
        }
    }

    /// What one request has gathered of one group.
    private struct Accumulator {
        var integers: Int128 = 0
        var hasUnsigned = false
        var doubles = 0.0
        var hasDouble = false
        var numbers = 0
        var extreme: RecordValue?
        var distinct: Set<[UInt8]> = []

        mutating func add(_ value: RecordValue, for request: Request, id: UUID) throws(AggregationError) {
            switch request.function {
            case .sum, .average:
                switch value {
                case .int(let number): try addInteger(Int128(number), for: request)
                case .uint(let number):
                    hasUnsigned = true
                    try addInteger(Int128(number), for: request)
                case .double(let number):
                    hasDouble = true
                    doubles += number
                case .float(let number):
                    hasDouble = true
                    doubles += Double(number)
                default:
                    throw AggregationError(
                        "--\(request.function.rawValue) \(request.field) needs numbers, and the record \(id) holds "
                            + "the \(value.kind.typeName) \(Self.text(value)) there; choose a number field")
                }
                numbers += 1
            case .min, .max:
                guard let extreme else {
                    guard RecordOrder.isOrdered(value.kind) else { throw unordered(value, request, id) }
                    extreme = value
                    return
                }
                guard let order = RecordOrder.compare(value, extreme, loose: true) else {
                    throw unordered(value, request, id, other: extreme)
                }
                if request.function == .min ? order < 0 : order > 0 { self.extreme = value }
            case .distinct:
                distinct.insert(RecordAggregation.key(of: value))
            }
        }

        private mutating func addInteger(_ number: Int128, for request: Request) throws(AggregationError) {
            let (sum, overflow) = integers.addingReportingOverflow(number)
            // 2^63 records of the largest values would be needed: reported rather than trapped all the same.
            guard !overflow else { throw AggregationError("The sum of \(request.field) overflows 128 bits") }
            integers = sum
        }

        private func unordered(
            _ value: RecordValue, _ request: Request, _ id: UUID, other: RecordValue? = nil
        ) -> AggregationError {
            let values =
                other.map {
                    "the \($0.kind.typeName) \(Self.text($0)) and the \(value.kind.typeName) \(Self.text(value))"
                }
                ?? "\(value.kind.typeName) values like \(Self.text(value))"
            return AggregationError(
                "--\(request.function.rawValue) \(request.field) needs values with an order, and the record \(id) "
                    + "brings \(values), which have none together; choose a field of numbers, strings, UUIDs or dates")
        }

        func result(of request: Request, in group: String?) throws(AggregationError) -> RecordValue {
            switch request.function {
            case .sum:
                if hasDouble { return Self.canonical(Double(integers) + doubles) }
                if let value = Int64(exactly: integers) { return .int(value) }
                if hasUnsigned, let value = UInt64(exactly: integers) { return .uint(value) }
                throw AggregationError(
                    "The sum of \(request.field)\(group.map { " in the group \($0)" } ?? "") is \(integers), which "
                        + "does not fit in a 64-bit integer (\(hasUnsigned ? "UInt64" : "Int64")); use --average, or "
                        + "narrow the --where conditions")
            case .average:
                guard numbers > 0 else { return .null }
                return Self.canonical((Double(integers) + doubles) / Double(numbers))
            case .min, .max:
                return extreme ?? .null
            case .distinct:
                return .int(Int64(distinct.count))
            }
        }

        /// A double result, NaN as the one quiet NaN (`nan`), whatever sign and payload the arithmetic gave it.
        private static func canonical(_ number: Double) -> RecordValue {
            .double(number.isNaN ? .nan : number)
        }

        private static func text(_ value: RecordValue) -> String {
            RecordJSON.json(for: value, kind: value.kind).serialized()
        }
    }
}

/// An aggregate that cannot be computed over the records found: a sum of text, a maximum of Booleans, an integer sum
/// too large for 64 bits. The message says which field and record, and what to do.
package struct AggregationError: Error, Equatable, CustomStringConvertible {
    /// What happened and what to do.
    package let message: String

    /// Creates an error.
    ///
    /// - Parameter message: What happened and what to do.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String {
        message
    }
}
