import Foundation
import KVStore

/// The index entries of records, computed from their values exactly as the library computes them from models.
///
/// A key is the concatenation of each indexed field's component (`IndexKey.append`), finalized; an absent field is
/// the nil component; a multi-entry index has one entry per distinct element of its array field. Sort keys for
/// `list --sort` use the same order-preserving encoding.
enum IndexEntries {
    /// The value of a field in a record: a top-level member, or a dotted path into nested objects (`address.city`);
    /// `.null` when it is absent.
    static func value(of field: String, in record: RecordValue) -> RecordValue {
        guard case .object(let entries) = record else { return .null }
        if let entry = entries.first(where: { $0.name == field }) { return entry.value }
        guard let dot = field.firstIndex(of: ".") else { return .null }
        let head = String(field[..<dot])
        guard let nested = entries.first(where: { $0.name == head }) else { return .null }
        return value(of: String(field[field.index(after: dot)...]), in: nested.value)
    }

    /// Whether every part of a field name, dotted or not, is in the entity's field table.
    static func fieldExists(_ field: String, in fields: FieldTable) -> Bool {
        if fields.existingID(for: field) != nil { return true }
        let parts = field.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count > 1 && parts.allSatisfy { fields.existingID(for: String($0)) != nil }
    }

    /// The finalized keys of a record in an index, without duplicates, in the library's order.
    ///
    /// - Throws: ``IndexEntryError`` when a field's value cannot be part of a key (data, URL, decimal, containers),
    ///   or a multi-entry field does not hold an array.
    static func keys(of record: RecordValue, in index: IndexCatalog) throws(IndexEntryError) -> [[UInt8]] {
        if index.isMultiEntry, let field = index.fields.first {
            let elements: [RecordValue]
            switch value(of: field, in: record) {
            case .array(let values): elements = values
            case .null: elements = []
            case let other: throw IndexEntryError(field: field, reason: "holds \(other.kind.typeName), not an array")
            }
            var seen = Set<[UInt8]>()
            var keys: [[UInt8]] = []
            for element in elements {
                let key = try key(for: [element], fields: [field])
                if seen.insert(key).inserted { keys.append(key) }
            }
            return keys
        }
        return [try key(for: index.fields.map { value(of: $0, in: record) }, fields: index.fields)]
    }

    /// The finalized key of these component values.
    ///
    /// - Throws: ``IndexEntryError`` when a value cannot be part of a key.
    static func key(for components: [RecordValue], fields: [String]) throws(IndexEntryError) -> [UInt8] {
        var key: [UInt8] = []
        for (component, field) in zip(components, fields) {
            do {
                try IndexKey.append(component, to: &key)
            } catch {
                throw IndexEntryError(
                    field: field, reason: "holds \(component.kind.typeName), which no index key holds")
            }
        }
        IndexKey.finalize(&key)
        return key
    }

    /// Whether a key was cut to LMDB's limit by `IndexKey.finalize`, and so no longer holds the whole value.
    static func isTruncated(_ components: [RecordValue]) -> Bool {
        var key: [UInt8] = []
        for component in components { try? IndexKey.append(component, to: &key) }
        return IndexKey.finalize(&key)
    }

    /// Bytes that sort like a value: its index-key encoding, or for values no key holds, their JSON after every
    /// indexable value.
    static func sortKey(_ value: RecordValue) -> [UInt8] {
        var key: [UInt8] = []
        if (try? IndexKey.append(value, to: &key)) != nil { return key }
        return [0x02] + Array(RecordJSON.defaultJSON(value).serialized().utf8)
    }

    /// The text of an index key for messages, read back with the fields' kinds: `name = "Inbox"`; the bytes in
    /// hexadecimal when they do not read back (a cut key, unknown kinds).
    static func describe(_ key: UnsafeRawBufferPointer, index: IndexCatalog, kinds: [String: ValueKind]) -> String {
        var candidates: [[ValueKind]] = []
        let known = index.fields.compactMap { kinds[$0] }
        if !index.isMultiEntry && known.count == index.fields.count {
            candidates = [known]
        } else if index.fields.count == 1 {
            // A multi-entry index's elements, or a field no record gave a kind yet: try the kinds keys hold.
            candidates = [[.uuid], [.string], [.int], [.uint], [.double], [.true]]
        }
        for kinds in candidates {
            if let values = try? IndexKey.decodeComponents(key, kinds: kinds) {
                let parts = zip(index.fields, values).map { field, value in
                    "\(field) = \(RecordJSON.json(for: value, kind: value.kind).serialized())"
                }
                return parts.joined(separator: ", ")
            }
        }
        return "key 0x" + key.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

/// A record value that cannot be indexed: the field and why.
struct IndexEntryError: Error, Equatable, CustomStringConvertible {
    /// The indexed field.
    let field: String
    /// What is wrong with its value.
    let reason: String

    /// `the indexed field 'tags' holds string, not an array`.
    var description: String {
        "the indexed field '\(field)' \(reason)"
    }
}

extension String {
    /// The string with leading zeros up to `width` characters.
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
