import Foundation

/// The keyed container of the record decoder, over an object (keys are field
/// ids named by the ``FieldTable``) or a `String`- or `Int`-keyed dictionary
/// (keys stored inline).
///
/// The container's entries were located once when it was built. A lookup
/// first tries the entry after the last one found, so the usual in-order
/// decoding compares one key per field, without hashing.
struct RecordKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The decoder that owns the entry table.
    let decoding: RecordDecoding
    /// ``ValueKind/object``, ``ValueKind/stringMap`` or ``ValueKind/intMap``.
    let kind: ValueKind
    /// The index of the first entry in the decoder's entry table; the header entry is just before it.
    let start: Int
    /// The number of entries.
    let count: Int
    /// Where the container's coding path comes from.
    let path: RecordDecoding.ContainerPath
    /// How many containers enclose this one.
    let depth: Int
    /// Whether the container is the record's own object or one nested in its values, which name fields apart once
    /// a migration renamed a top-level field.
    let scope: FieldScope

    /// The path of keys to this container.
    var codingPath: [any CodingKey] { decoding.path(path) }

    /// The keys present, in stored order; ids the field table does not name are left out.
    var allKeys: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        for index in start..<(start + count) {
            let entry = decoding.entries[index]
            switch kind {
            case .object:
                if let name = decoding.fields.name(for: UInt32(truncatingIfNeeded: entry.key), in: scope),
                    entry.key <= UInt64(UInt32.max), let key = Key(stringValue: name)
                {
                    keys.append(key)
                }
            case .stringMap:
                let utf8 = decoding.reader.buffer.extracting(Int(entry.key)..<(Int(entry.key) + entry.keyLength))
                // Invalid UTF-8 cannot be a key; decoding its value by another key would not find it either.
                if let name = String(validating: utf8, as: UTF8.self), let key = Key(stringValue: name) {
                    keys.append(key)
                }
            default:
                let value = RecordFormat.unzigzag(entry.key)
                if let key = Int(exactly: value).flatMap(Key.init(intValue:)) ?? Key(stringValue: String(value)) {
                    keys.append(key)
                }
            }
        }
        return keys
    }

    /// Returns whether the container has a value for `key`.
    func contains(_ key: Key) -> Bool {
        find(key) != nil
    }

    /// Returns whether the value for `key` is null or missing.
    func decodeNil(forKey key: Key) throws -> Bool {
        guard let offset = find(key) else { return true }
        return try decoding.isNil(at: offset)
    }

    /// Decodes a Boolean.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        var offset = try require(key)
        return try decoding.decodeBool(at: &offset, path: codingPath + [key])
    }

    /// Decodes a string.
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        var offset = try require(key)
        return try decoding.decodeString(at: &offset, path: codingPath + [key])
    }

    /// Decodes a Double.
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        var offset = try require(key)
        return try decoding.decodeDouble(at: &offset, path: codingPath + [key])
    }

    /// Decodes a Float.
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        var offset = try require(key)
        return try decoding.decodeFloat(at: &offset, path: codingPath + [key])
    }

    /// Decodes an Int.
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decodeInteger(type, forKey: key) }
    /// Decodes an Int8.
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeInteger(type, forKey: key) }
    /// Decodes an Int16.
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decodeInteger(type, forKey: key) }
    /// Decodes an Int32.
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decodeInteger(type, forKey: key) }
    /// Decodes an Int64.
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decodeInteger(type, forKey: key) }
    /// Decodes an Int128.
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try decodeInteger(type, forKey: key) }
    /// Decodes a UInt.
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeInteger(type, forKey: key) }
    /// Decodes a UInt8.
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decodeInteger(type, forKey: key) }
    /// Decodes a UInt16.
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decodeInteger(type, forKey: key) }
    /// Decodes a UInt32.
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decodeInteger(type, forKey: key) }
    /// Decodes a UInt64.
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeInteger(type, forKey: key) }
    /// Decodes a UInt128.
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try decodeInteger(type, forKey: key) }

    /// Decodes a value of any other type.
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let offset = try require(key)
        if decoding.isSpecial(T.self) {
            return try decoding.decodeSpecialValue(T.self, at: offset, path: codingPath + [key])
        }
        return try decoding.decodeChild(T.self, at: offset, key: key, path: path, depth: depth)
    }

    /// Decodes a Boolean, or nil if it is null or missing.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard var offset = try present(key) else { return nil }
        return try decoding.decodeBool(at: &offset, path: codingPath + [key])
    }

    /// Decodes a string, or nil if it is null or missing.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard var offset = try present(key) else { return nil }
        return try decoding.decodeString(at: &offset, path: codingPath + [key])
    }

    /// Decodes a Double, or nil if it is null or missing.
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard var offset = try present(key) else { return nil }
        return try decoding.decodeDouble(at: &offset, path: codingPath + [key])
    }

    /// Decodes a Float, or nil if it is null or missing.
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard var offset = try present(key) else { return nil }
        return try decoding.decodeFloat(at: &offset, path: codingPath + [key])
    }

    /// Decodes an Int, or nil if it is null or missing.
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try decodeIntegerIfPresent(type, key) }
    /// Decodes an Int8, or nil if it is null or missing.
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try decodeIntegerIfPresent(type, key) }
    /// Decodes an Int16, or nil if it is null or missing.
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try decodeIntegerIfPresent(type, key) }
    /// Decodes an Int32, or nil if it is null or missing.
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try decodeIntegerIfPresent(type, key) }
    /// Decodes an Int64, or nil if it is null or missing.
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decodeIntegerIfPresent(type, key) }
    /// Decodes a UInt, or nil if it is null or missing.
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try decodeIntegerIfPresent(type, key) }
    /// Decodes a UInt8, or nil if it is null or missing.
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try decodeIntegerIfPresent(type, key) }
    /// Decodes a UInt16, or nil if it is null or missing.
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try decodeIntegerIfPresent(type, key)
    }
    /// Decodes a UInt32, or nil if it is null or missing.
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try decodeIntegerIfPresent(type, key)
    }
    /// Decodes a UInt64, or nil if it is null or missing.
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try decodeIntegerIfPresent(type, key)
    }

    /// Decodes a value of any other type, or nil if it is null or missing.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let offset = try present(key) else { return nil }
        if decoding.isSpecial(T.self) {
            return try decoding.decodeSpecialValue(T.self, at: offset, path: codingPath + [key])
        }
        return try decoding.decodeChild(T.self, at: offset, key: key, path: path, depth: depth)
    }

    /// Returns a keyed container over the value for `key`.
    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let offset = try require(key)
        return KeyedDecodingContainer(
            try decoding.keyedContainer(
                keyedBy: NestedKey.self, at: offset, path: decoding.explicitPath(codingPath + [key]), depth: depth + 1))
    }

    /// Returns an unkeyed container over the value for `key`.
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let offset = try require(key)
        return try RecordUnkeyedDecodingContainer(
            decoding: decoding, at: offset, path: decoding.explicitPath(codingPath + [key]), depth: depth + 1)
    }

    /// Returns a decoder for the value of the key `super`, which may be missing.
    func superDecoder() throws -> any Decoder {
        let key = RecordCodingKey.super
        let offset = findName(key.stringValue, intValue: nil) ?? -1
        return decoding.superDecoder(at: offset, path: codingPath + [key], depth: depth + 1)
    }

    /// Returns a decoder for the value of `key`, which may be missing.
    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoding.superDecoder(at: find(key) ?? -1, path: codingPath + [key], depth: depth + 1)
    }

    // MARK: Lookup

    /// Decodes an integer of any width.
    func decodeInteger<I: FixedWidthInteger>(_ type: I.Type, forKey key: Key) throws -> I {
        var offset = try require(key)
        return try decoding.decodeInteger(I.self, at: &offset, path: codingPath + [key])
    }

    /// Decodes an integer of any width, or nil if it is null or missing.
    func decodeIntegerIfPresent<I: FixedWidthInteger>(_ type: I.Type, _ key: Key) throws -> I? {
        guard var offset = try present(key) else { return nil }
        return try decoding.decodeInteger(I.self, at: &offset, path: codingPath + [key])
    }

    /// Returns the offset of the value for `key`, or throws `keyNotFound`.
    private func require(_ key: Key) throws -> Int {
        guard let offset = find(key) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "The record has no value for the key \"\(key.stringValue)\"."))
        }
        return offset
    }

    /// Returns the offset of the value for `key`, or nil if it is missing or null.
    @inline(__always)
    private func present(_ key: Key) throws -> Int? {
        guard let offset = find(key), try !decoding.isNil(at: offset) else { return nil }
        return offset
    }

    /// Returns the offset of the value for `key`, or nil if the container has none.
    @inline(__always)
    private func find(_ key: Key) -> Int? {
        // Only Int-keyed dictionaries look at the integer value: skip that witness call for the others.
        findName(key.stringValue, intValue: kind == .intMap ? key.intValue : nil)
    }

    /// Returns the offset of the value of the field `name`, or nil if the container has none; for ``FieldReader``,
    /// which names fields by string.
    @inline(__always)
    func offset(ofField name: String) -> Int? {
        findName(name, intValue: nil)
    }

    /// Returns the offset of the value whose key is `name` (or `intValue`,
    /// in an `Int`-keyed dictionary), trying the entry after the last one found first.
    private func findName(_ name: String, intValue: Int?) -> Int? {
        guard count > 0 else { return nil }
        let hint = decoding.entries[start - 1].value
        if hint < count, matches(decoding.entries[start + hint], name: name, intValue: intValue) {
            decoding.entries[start - 1].value = hint + 1
            return decoding.entries[start + hint].value
        }
        if kind == .object {
            // A miss: hash the name once, then compare ids.
            guard let id = decoding.fields.existingID(for: name, in: scope) else { return nil }
            for index in 0..<count where decoding.entries[start + index].key == UInt64(id) {
                decoding.entries[start - 1].value = index + 1
                return decoding.entries[start + index].value
            }
            return nil
        }
        for index in 0..<count where matches(decoding.entries[start + index], name: name, intValue: intValue) {
            decoding.entries[start - 1].value = index + 1
            return decoding.entries[start + index].value
        }
        return nil
    }

    /// Returns whether `entry` has the key `name` (or `intValue` in an `Int`-keyed dictionary).
    @inline(__always)
    private func matches(_ entry: RecordDecoding.Entry, name: String, intValue: Int?) -> Bool {
        switch kind {
        case .object:
            return decoding.fields.id(entry.key, isNamed: name, in: scope)
        case .stringMap:
            let stored = decoding.reader.buffer.extracting(Int(entry.key)..<(Int(entry.key) + entry.keyLength))
            var name = name
            return name.withBorrowedUTF8 { utf8 in utf8.elementsEqual(stored) }
        default:
            guard let key = intValue ?? Int(name) else { return false }
            return RecordFormat.unzigzag(entry.key) == Int64(key)
        }
    }
}
