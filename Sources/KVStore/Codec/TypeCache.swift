/// A small direct-mapped cache from a type to a value, for facts the codec
/// learns about a type once and needs on every record.
///
/// Indexed by bits of the type's metadata address, it costs a load and a
/// compare, where a `Dictionary` would hash and a dynamic cast or conformance
/// check would search the runtime's tables. A collision just evicts.
struct TypeCache<Value> {
    /// The number of slots; a power of two.
    private static var slotCount: Int { 32 }

    /// The type in each slot, nil when empty.
    private var types: [ObjectIdentifier?]
    /// The value in each slot.
    private var values: [Value]

    /// Creates an empty cache whose slots hold `placeholder` until filled.
    init(placeholder: Value) {
        types = Array(repeating: nil, count: Self.slotCount)
        values = Array(repeating: placeholder, count: Self.slotCount)
    }

    /// Returns the value cached for `type`, or nil.
    @inline(__always)
    func value(for type: Any.Type) -> Value? {
        let identifier = ObjectIdentifier(type)
        let slot = Self.slot(identifier)
        return types[slot] == identifier ? values[slot] : nil
    }

    /// Caches `value` for `type`.
    @inline(__always)
    mutating func set(_ value: Value, for type: Any.Type) {
        let identifier = ObjectIdentifier(type)
        let slot = Self.slot(identifier)
        types[slot] = identifier
        values[slot] = value
    }

    /// The slot of a type: metadata is at least 8-byte aligned, so skip the low bits.
    @inline(__always)
    private static func slot(_ identifier: ObjectIdentifier) -> Int {
        Int(truncatingIfNeeded: UInt(bitPattern: identifier) >> 4) & (slotCount - 1)
    }
}
