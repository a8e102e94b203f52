import Foundation

/// The order-preserving byte encoding of secondary index keys.
///
/// Index keys compare with `memcmp` (a shorter prefix first), so every
/// component's encoding sorts like its value, and range predicates and sorts
/// on an indexed attribute become cursor ranges. A key is the concatenation
/// of its components, each starting with a presence byte; see
/// ``IndexKeyEncodable`` for the typed entry point. ``append(_:to:)`` gives the
/// same bytes from a ``RecordValue``, and ``decodeComponents(_:kinds:)`` reads
/// a key back.
///
/// LMDB limits keys, and the values of DUPSORT tables, to 511 bytes: call
/// ``finalize(_:)`` on every complete key before storing or seeking it.
package enum IndexKey {
    /// The longest key ``finalize(_:)`` leaves, comfortably under LMDB's 511 bytes.
    package static let maximumLength = 480

    /// The presence byte of a nil component.
    static let absent: UInt8 = 0x00
    /// The presence byte of a component with a value.
    static let present: UInt8 = 0x01
    /// The byte after an escaped `0x00` inside a string.
    static let escapedZero: UInt8 = 0xFF
    /// The byte after `0x00` that ends a string.
    static let stringTerminator: UInt8 = 0x01
    /// The byte that follows the kept prefix of a truncated key.
    static let truncationMarker: UInt8 = 0xFF

    /// The bit that is flipped or set to order signed integers and doubles.
    private static let signBit: UInt64 = 1 << 63

    // MARK: Components

    /// Appends a signed integer: big-endian with the sign bit flipped, so negatives sort first.
    static func appendSigned(_ value: Int64, to bytes: inout [UInt8]) {
        bytes.append(present)
        appendBigEndian(UInt64(bitPattern: value) ^ signBit, to: &bytes)
    }

    /// Appends an unsigned integer, big-endian.
    static func appendUnsigned(_ value: UInt64, to bytes: inout [UInt8]) {
        bytes.append(present)
        appendBigEndian(value, to: &bytes)
    }

    /// Appends a double: the bit pattern big-endian, all bits inverted for a
    /// negative number and the sign bit set otherwise.
    ///
    /// `-0.0` is normalized to `0.0` and every NaN to the one quiet NaN, which
    /// sorts after infinity.
    static func appendDouble(_ value: Double, to bytes: inout [UInt8]) {
        bytes.append(present)
        appendBigEndian(orderedBits(value), to: &bytes)
    }

    /// Appends a Boolean: false before true.
    static func appendBool(_ value: Bool, to bytes: inout [UInt8]) {
        bytes.append(present)
        bytes.append(value ? 1 : 0)
    }

    /// Appends a UUID's 16 bytes.
    static func appendUUID(_ value: UUID, to bytes: inout [UInt8]) {
        bytes.append(present)
        bytes.appendBytes(of: value.uuid)
    }

    /// Appends a string: its NFC form's UTF-8 with `0x00` escaped as
    /// `0x00 0xFF`, then `0x00 0x01`, so that `"" < "a" < "ab" < "b"`.
    ///
    /// Canonically equivalent strings, which Swift considers equal, get the
    /// same key; pure-ASCII strings, the common case, skip normalization.
    static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(present)
        var text = value
        if !text.utf8.allSatisfy({ $0 < 0x80 }) { text = text.precomposedStringWithCanonicalMapping }
        for byte in text.utf8 {
            bytes.append(byte)
            if byte == 0 { bytes.append(escapedZero) }
        }
        bytes.append(0)
        bytes.append(stringTerminator)
    }

    /// Appends the encoding of a ``RecordValue``: the same bytes the typed
    /// path gives for the same value (`.int` from signed fields, `.uint` from
    /// unsigned ones, `.float` as a Double, `.null` as nil).
    ///
    /// - Throws: ``IndexKeyError/notIndexable(_:)`` for data, URL, decimal and
    ///   container values.
    package static func append(_ value: RecordValue, to bytes: inout [UInt8]) throws {
        switch value {
        case .null: bytes.append(absent)
        case .bool(let value): appendBool(value, to: &bytes)
        case .int(let value): appendSigned(value, to: &bytes)
        case .uint(let value): appendUnsigned(value, to: &bytes)
        case .float(let value): appendDouble(Double(value), to: &bytes)
        case .double(let value): appendDouble(value, to: &bytes)
        case .date(let value): appendDouble(value.timeIntervalSinceReferenceDate, to: &bytes)
        case .uuid(let value): appendUUID(value, to: &bytes)
        case .string(let value): appendString(value, to: &bytes)
        case .data, .url, .decimal, .array, .object, .stringMap, .intMap:
            throw IndexKeyError.notIndexable(value.kind)
        }
    }

    // MARK: Length

    /// The longest key component of a type whose components are bounded (``hasBoundedIndexKey(_:)``): a presence
    /// byte and a UUID's 16 bytes.
    static let largestBoundedComponent = 17

    /// The bytes of a long key kept before the truncation marker and the hash.
    static let keptPrefix = maximumLength - 9

    /// Makes `key` fit LMDB: a key longer than ``maximumLength`` is cut to a
    /// prefix of ``keptPrefix`` bytes followed by `0xFF` and the 8-byte
    /// big-endian hash of the whole key.
    ///
    /// Keys sharing no prefix of that length keep their order. A cut key no
    /// longer says the whole value, and two values may share one (the hash is
    /// not collision-free): every match through such a key is confirmed
    /// against the record, and a unique index stores a second value under the
    /// same cut key with a sequence number appended (see ``isGrouped(_:)``).
    ///
    /// - Returns: Whether the key was truncated.
    @discardableResult
    package static func finalize(_ key: inout [UInt8], hash: LongKeyHash = .standard) -> Bool {
        finalize(&key, from: 0, hash: hash)
    }

    /// ``finalize(_:hash:)`` for the key that starts at `start` and runs to the end of `bytes`.
    ///
    /// - Returns: Whether the key was truncated.
    @discardableResult
    static func finalize(_ bytes: inout [UInt8], from start: Int, hash: LongKeyHash = .standard) -> Bool {
        guard bytes.count - start > maximumLength else { return false }
        let digest = hash.digest(bytes[start...])
        bytes.removeSubrange((start + keptPrefix)...)
        bytes.append(truncationMarker)
        appendBigEndian(digest, to: &bytes)
        return true
    }

    /// Whether a stored key may stand for several values: it has the shape of a cut key (``maximumLength`` bytes,
    /// the truncation marker after ``keptPrefix`` bytes), or is one with a sequence number.
    ///
    /// A key of that shape that was not cut (a value whose key is exactly that long) is treated the same, so the
    /// rule depends on the bytes alone and every writer agrees on it. Other keys are exact: equal keys, equal values.
    package static func isGrouped(_ key: BorrowedBytes) -> Bool {
        (key.count == maximumLength || key.count == maximumLength + 2) && key[keptPrefix] == truncationMarker
    }

    /// ``isGrouped(_:)`` for a key in an array.
    package static func isGrouped(_ key: [UInt8]) -> Bool {
        key.withBorrowedBytes { isGrouped($0) }
    }

    /// The key of the `sequence`th value (from 1) that shares the cut key `key` in a unique index.
    static func sequenced(_ key: BorrowedBytes, _ sequence: UInt16) -> [UInt8] {
        var bytes = Array(key.prefix(maximumLength))
        bytes.appendBytes(of: sequence.bigEndian)
        return bytes
    }

    /// The stored keys a grouped key's group spans: the key itself and its sequenced keys.
    static func group(of key: [UInt8]) -> KeyRangeBounds {
        let base = Array(key.prefix(maximumLength))
        return KeyRangeBounds(lower: base, upper: base + [0xFF, 0xFF])
    }

    /// The stored keys of every value whose cut key has the same prefix as `key`, whatever their hash: where a
    /// range bound that was cut must start or end, since cut keys sharing a prefix sort by hash, not by value.
    static func prefixGroup(of key: [UInt8]) -> KeyRangeBounds {
        let prefix = Array(key.prefix(keptPrefix + 1))
        return KeyRangeBounds(lower: prefix, upper: prefix + Array(repeating: 0xFF, count: 10))
    }

    /// The 64-bit FNV-1a hash of `bytes`.
    static func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    // MARK: Helpers

    /// The bits of `value` that sort like the value, after normalizing zero and NaN.
    static func orderedBits(_ value: Double) -> UInt64 {
        let normalized = value.isNaN ? Double.nan : (value == 0 ? 0 : value)
        let bits = normalized.bitPattern
        return bits & signBit != 0 ? ~bits : bits | signBit
    }

    /// Reverses ``orderedBits(_:)``.
    static func double(fromOrderedBits bits: UInt64) -> Double {
        Double(bitPattern: bits & signBit != 0 ? bits & ~signBit : ~bits)
    }

    /// Appends `value` most significant byte first.
    static func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        bytes.appendBytes(of: value.bigEndian)
    }
}

extension IndexKey {
    /// A copy of `key`, finalized as ``finalize(_:hash:)`` does.
    package static func finalized(_ key: [UInt8], hash: LongKeyHash = .standard) -> [UInt8] {
        var key = key
        finalize(&key, hash: hash)
        return key
    }
}

/// Inclusive bounds of stored index keys.
struct KeyRangeBounds: Equatable {
    let lower: [UInt8]
    let upper: [UInt8]
}

/// The hash that completes a cut index key: a property of the store, recorded in its catalog's format entry, so
/// every process computes the same keys.
///
/// Nothing depends on the hash being free of collisions: values that share a cut key are told apart by their
/// records. A store can be made with a hash that collides on purpose, to test that.
package enum LongKeyHash: String, Codable, Sendable {
    /// FNV-1a, 64 bits.
    case standard = "fnv1a64"
    /// Every key hashes to 0, so every long value with the same prefix collides: for tests only.
    case collidingForTests = "colliding"

    /// The hash of `bytes`.
    func digest(_ bytes: some Sequence<UInt8>) -> UInt64 {
        switch self {
        case .standard: IndexKey.fnv1a64(bytes)
        case .collidingForTests: 0
        }
    }
}
