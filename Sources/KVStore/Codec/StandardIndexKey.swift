import Foundation

/// The types whose index keys ``RecordIndexKeys`` derives exactly from their stored values: KVStore encodes both.
protocol StandardIndexKey {}

extension Int: StandardIndexKey {}
extension Int8: StandardIndexKey {}
extension Int16: StandardIndexKey {}
extension Int32: StandardIndexKey {}
extension Int64: StandardIndexKey {}
extension UInt: StandardIndexKey {}
extension UInt8: StandardIndexKey {}
extension UInt16: StandardIndexKey {}
extension UInt32: StandardIndexKey {}
extension UInt64: StandardIndexKey {}
extension Float: StandardIndexKey {}
extension Double: StandardIndexKey {}
extension Bool: StandardIndexKey {}
extension String: StandardIndexKey {}
extension UUID: StandardIndexKey {}
extension Date: StandardIndexKey {}

/// Whether the index keys of `type` are the standard encoding of its stored values: a ``StandardIndexKey``, an
/// optional of one, or a raw-value type over one (which encodes its raw value, in its record and in its keys, unless
/// it gives its own ``IndexKeyEncodable`` encoding: ``SchemaLoader`` compares both on stored records).
func hasStandardIndexKey(_ type: Any.Type) -> Bool {
    if type is any StandardIndexKey.Type { return true }
    if let optional = type as? any AnyOptional.Type { return hasStandardIndexKey(optional.wrappedType) }
    if let raw = type as? any RawRepresentable.Type { return rawValueHasStandardIndexKey(raw) }
    return false
}

private func rawValueHasStandardIndexKey<R: RawRepresentable>(_: R.Type) -> Bool {
    hasStandardIndexKey(R.RawValue.self)
}

/// Whether two values of `type` have equal index keys exactly when `==` says they are equal, so that the models under
/// a key of an equality are exactly those the equality matches: integers, `Bool`, `UUID` and `String` (whose keys
/// hold the NFC form, as `==` compares canonically equivalent strings equal), and optionals of them. Not floating-point
/// numbers or dates (the keys put every NaN under one key, which `==` never matches), raw-value types (whose
/// encoding may be their own) or custom encodings.
func hasExactEqualityKey(_ type: Any.Type) -> Bool {
    if let optional = type as? any AnyOptional.Type { return hasExactEqualityKey(optional.wrappedType) }
    return type is any StandardIndexKey.Type && type != Float.self && type != Double.self && type != Date.self
}

/// Whether the index keys of `type` sort exactly as `<` orders its values, every value with a key of its own, so that
/// a range of keys holds exactly the models whose attribute lies in the range: the integer types. Not strings (the
/// keys sort by NFC bytes, `<` does not), floating-point numbers or dates (NaN), or optionals.
func hasExactOrderKey(_ type: Any.Type) -> Bool {
    type is any FixedWidthInteger.Type && type is any StandardIndexKey.Type
}

/// Whether the index keys of `type` sort exactly as `<` orders its values but for NaN, whose one key sorts after every
/// other (after infinity): `Float`, `Double` and `Date`, whose keys normalize `-0.0` to `0.0` (which `==` holds
/// equal) and every NaN to one. A range with an upper bound that is not NaN then holds exactly the models whose
/// attribute lies in the range of values: NaN lies in no such range, and its key lies past the bound. Not optionals.
func hasExactOrderBelowNaNKey(_ type: Any.Type) -> Bool {
    type == Double.self || type == Float.self || type == Date.self
}

/// Whether every index key component of `type` is at most ``IndexKey/largestBoundedComponent`` bytes long: the
/// standard types but `String` (integers, `Bool`, floating-point numbers, `Date`, `UUID`), and optionals of them, so
/// that a compound index of a few such attributes never has a key cut (``IndexKey/finalize(_:hash:)``).
func hasBoundedIndexKey(_ type: Any.Type) -> Bool {
    if let optional = type as? any AnyOptional.Type { return hasBoundedIndexKey(optional.wrappedType) }
    return type is any StandardIndexKey.Type && type != String.self
}

/// What the index key components of one attribute's type promise the planner, for each attribute of a compound index:
/// the single-attribute index's facts (``hasExactEqualityKey(_:)``, ``hasExactOrderKey(_:)``,
/// ``hasExactOrderBelowNaNKey(_:)``) and whether the component's length is bounded (``hasBoundedIndexKey(_:)``).
struct KeyComponentTraits: Equatable, Sendable {
    /// Whether the keys whose component encodes a value are exactly those of the attribute values `==` it.
    var hasExactEquality: Bool
    /// Whether the components sort exactly as `<` orders the values.
    var hasExactOrder: Bool
    /// Whether the components sort exactly as `<` orders the values but for NaN, whose one component sorts last.
    var hasExactOrderBelowNaN: Bool
    /// Whether every component is at most ``IndexKey/largestBoundedComponent`` bytes long.
    var isBounded: Bool

    /// The traits of the key components of `type`.
    init(_ type: Any.Type) {
        hasExactEquality = hasExactEqualityKey(type)
        hasExactOrder = hasExactOrderKey(type)
        hasExactOrderBelowNaN = hasExactOrderBelowNaNKey(type)
        isBounded = hasBoundedIndexKey(type)
    }
}

/// Whether `value`, a constant a predicate compares an attribute with, is a NaN `Double`, `Float` or `Date`.
func isNaNConstant(_ value: Any) -> Bool {
    // The constant's type, compared rather than cast to (three casts cost more than the rest of an exact plan's check).
    func isNaN<T>(_ value: T) -> Bool {
        if T.self == Double.self { return knownTypeCast(value, to: Double.self).isNaN }
        if T.self == Float.self { return knownTypeCast(value, to: Float.self).isNaN }
        if T.self == Date.self { return knownTypeCast(value, to: Date.self).timeIntervalSinceReferenceDate.isNaN }
        return false
    }
    return isNaN(value)
}

/// How the planner encodes a value a query compares an attribute with, boxed, as the attribute's order-preserving key
/// component: `nil` when the value does not fit the attribute.
///
/// A struct around the closure, so that an array of encoders (one per attribute of an index) holds each at its own
/// abstraction: an array of bare closures holds them at the most general one, and every call of one taken out went
/// through a thunk that looked up the metadata of `Optional<[UInt8]>`, about 800 instructions.
struct KeyComponentEncoder: Sendable {
    /// The encoding.
    let encode: @Sendable (Any) -> [UInt8]?

    /// An encoder of `encode`.
    init(_ encode: @escaping @Sendable (Any) -> [UInt8]?) {
        self.encode = encode
    }

    /// The key component of `value`, or `nil` when it does not fit the attribute.
    func callAsFunction(_ value: Any) -> [UInt8]? {
        encode(value)
    }
}
