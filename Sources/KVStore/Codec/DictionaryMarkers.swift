/// Marks `[String: V]` so the record encoder writes it as a ``ValueKind/stringMap``.
///
/// Swift's own `Dictionary.encode(to:)` would ask for a keyed container, and
/// the encoder would intern every key as a field name. Dictionary keys are
/// data, so the encoder checks for this marker first (swift-foundation's
/// JSONEncoder does the same with `_JSONStringDictionaryEncodableMarker`).
/// Decoding needs no marker: `Dictionary.init(from:)` asks for a keyed
/// container, which reads a string map's inline keys.
protocol StringKeyedDictionaryEncodable {
    /// Writes the dictionary's entries, sorted by key so equal dictionaries
    /// give equal bytes.
    func encodeEntries(to encoding: RecordEncoding) throws
}

/// Marks dictionaries keyed by other `CodingKeyRepresentable` types (enums
/// with raw values, for instance) so the record encoder writes them as a
/// ``ValueKind/stringMap`` of their keys' `stringValue`s instead of interning
/// the keys as field names.
///
/// `Dictionary.init(from:)` reads them back through a keyed container, which
/// makes each key from its `stringValue` (an `Int`-based key parses it).
protocol CodingKeyDictionaryEncodable {
    /// Writes the dictionary's entries, sorted by key text so equal
    /// dictionaries give equal bytes.
    func encodeEntries(to encoding: RecordEncoding) throws
}

/// Marks `[Int: V]` so the record encoder writes it as a ``ValueKind/intMap``.
///
/// See ``StringKeyedDictionaryEncodable`` for why a marker is needed.
protocol IntKeyedDictionaryEncodable {
    /// Writes the dictionary's entries, sorted by key so equal dictionaries
    /// give equal bytes.
    func encodeEntries(to encoding: RecordEncoding) throws
}

extension Dictionary: StringKeyedDictionaryEncodable where Key == String, Value: Encodable {
    func encodeEntries(to encoding: RecordEncoding) throws {
        let entries = sorted { $0.key < $1.key }
        encoding.bytes.appendTagged(.stringMap, varint: UInt64(entries.count))
        for (key, value) in entries {
            encoding.bytes.appendVarint(UInt64(key.utf8.count))
            encoding.bytes.append(contentsOf: key.utf8)
            try encoding.encodeValue(value, at: RecordCodingKey(stringValue: key))
        }
    }
}

extension Dictionary: IntKeyedDictionaryEncodable where Key == Int, Value: Encodable {
    func encodeEntries(to encoding: RecordEncoding) throws {
        let entries = sorted { $0.key < $1.key }
        encoding.bytes.appendTagged(.intMap, varint: UInt64(entries.count))
        for (key, value) in entries {
            encoding.bytes.appendVarint(RecordFormat.zigzag(Int64(key)))
            try encoding.encodeValue(value, at: RecordCodingKey(intValue: key))
        }
    }
}

extension Dictionary: CodingKeyDictionaryEncodable where Key: CodingKeyRepresentable, Value: Encodable {
    func encodeEntries(to encoding: RecordEncoding) throws {
        let entries = map { (key: $0.key.codingKey.stringValue, value: $0.value) }.sorted { $0.key < $1.key }
        encoding.bytes.appendTagged(.stringMap, varint: UInt64(entries.count))
        for (key, value) in entries {
            encoding.bytes.appendVarint(UInt64(key.utf8.count))
            encoding.bytes.append(contentsOf: key.utf8)
            try encoding.encodeValue(value, at: RecordCodingKey(stringValue: key))
        }
    }
}
