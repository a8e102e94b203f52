import Foundation
import KVStore

/// The order of stored values that `kvtool`'s comparisons (`--where 'n<5'`) and its `--min` and `--max` use: the
/// order of the index keys of values of one kind, computed from the values.
///
/// - Numbers compare numerically, exactly (an `Int64` with a `UInt64` or a `Double` without rounding), as their keys
///   do within one kind; `-0.0` equals `0.0`, and NaN equals NaN and is greater than every other number, infinity
///   included, which is where the index puts it. A `Float` compares as the `Double` it converts to.
/// - Strings compare by the UTF-8 bytes of their NFC form: canonically equivalent strings are equal, and the order is
///   the index's (which is not `String`'s `<` for decomposed characters).
/// - UUIDs compare by their 16 bytes (the order of their uppercase text), dates by their time.
/// - Booleans, data, URLs, decimals, containers and `null` have no order here.
///
/// A strict comparison orders two values of the same kind only (a field whose kind the catalog gives, compared with a
/// value parsed as that kind: exactly the index's order). A loose one (a value whose kind was guessed) also orders
/// numbers of different kinds with each other.
///
/// ```swift
/// RecordOrder.compare(.int(3), .double(3.5), loose: true)  // -1
/// RecordOrder.compare(.int(3), .double(3.5), loose: false)  // nil: different kinds
/// ```
package enum RecordOrder {
    /// The order of two values: -1, 0 or 1; `nil` when they have no order with each other (different kinds, or a
    /// kind without order).
    ///
    /// - Parameters:
    ///   - left: A stored value.
    ///   - right: The value to compare it with.
    ///   - loose: Whether numbers of different kinds compare with each other.
    package static func compare(_ left: RecordValue, _ right: RecordValue, loose: Bool) -> Int? {
        if !loose && left.kind != right.kind { return nil }
        switch (left, right) {
        case (.string(let left), .string(let right)):
            return order(of: nfcBytes(left), nfcBytes(right))
        case (.uuid(let left), .uuid(let right)):
            return order(of: RecordKey.bytes(left), RecordKey.bytes(right))
        case (.date(let left), .date(let right)):
            return compareDoubles(left.timeIntervalSinceReferenceDate, right.timeIntervalSinceReferenceDate)
        default:
            guard let left = Number(left), let right = Number(right) else { return nil }
            return left.compare(with: right)
        }
    }

    /// Whether values of `kind` have an order (``compare(_:_:loose:)`` orders two of them).
    package static func isOrdered(_ kind: ValueKind) -> Bool {
        switch kind {
        case .int, .uint, .float, .double, .string, .uuid, .date: true
        case .null, .false, .true, .data, .url, .decimal, .array, .object, .stringMap, .intMap: false
        }
    }

    /// The UTF-8 bytes of a string's NFC form, which its index key holds.
    package static func nfcBytes(_ text: String) -> [UInt8] {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return Array(text.utf8) }
        return Array(text.precomposedStringWithCanonicalMapping.utf8)
    }

    /// The order of two byte strings, a shorter prefix first.
    private static func order(of left: [UInt8], _ right: [UInt8]) -> Int {
        if left == right { return 0 }
        return left.lexicographicallyPrecedes(right) ? -1 : 1
    }

    /// The order of two doubles as the index has it: `-0.0` equals `0.0`, NaN equals NaN and follows everything.
    private static func compareDoubles(_ left: Double, _ right: Double) -> Int {
        switch (left.isNaN, right.isNaN) {
        case (true, true): 0
        case (true, false): 1
        case (false, true): -1
        case (false, false): left < right ? -1 : left > right ? 1 : 0
        }
    }

    /// A number of any stored kind.
    private enum Number {
        case integer(Int128)
        case double(Double)

        init?(_ value: RecordValue) {
            switch value {
            case .int(let number): self = .integer(Int128(number))
            case .uint(let number): self = .integer(Int128(number))
            case .double(let number): self = .double(number)
            case .float(let number): self = .double(Double(number))
            default: return nil
            }
        }

        func compare(with other: Number) -> Int {
            switch (self, other) {
            case (.integer(let left), .integer(let right)): left < right ? -1 : left > right ? 1 : 0
            case (.double(let left), .double(let right)): RecordOrder.compareDoubles(left, right)
            case (.integer(let left), .double(let right)): -Self.compare(right, with: left)
            case (.double(let left), .integer(let right)): Self.compare(left, with: right)
            }
        }

        /// A double compared with an integer, exactly: the integer's conversion to `Double` could round.
        private static func compare(_ double: Double, with integer: Int128) -> Int {
            if double.isNaN { return 1 }
            // Every 64-bit integer lies strictly between these; beyond them the double decides alone.
            if double >= 0x1p65 { return 1 }
            if double <= -0x1p65 { return -1 }
            let whole = double.rounded(.down)
            let truncated = Int128(whole)
            if truncated != integer { return truncated < integer ? -1 : 1 }
            return double > whole ? 1 : 0
        }
    }
}
