import Foundation
import KVStore

/// What inspection shows and sorts of index keys. The keys themselves are the library's one derivation from records,
/// ``RecordIndexKeys``, planned over by its one planner, ``CatalogQueryPlanner``; these helpers only display them for
/// the integrity check's messages, tell whether a field exists for a query, and sort `kvtool list --sort` in the same
/// order-preserving encoding.
package enum IndexEntries {
    /// Whether every part of a field name, dotted or not, is in the entity's field table: the first part a field
    /// of the record's own object, the others fields of nested values.
    package static func fieldExists(_ field: String, in fields: FieldTable) -> Bool {
        if fields.existingID(for: field, in: .topLevel) != nil { return true }
        let parts = field.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count > 1, fields.existingID(for: String(parts[0]), in: .topLevel) != nil else { return false }
        return parts.dropFirst().allSatisfy { fields.existingID(for: String($0), in: .nested) != nil }
    }

    /// Bytes that sort like a value: its index-key encoding, or for values no key holds, their JSON after every
    /// indexable value.
    package static func sortKey(_ value: RecordValue) -> [UInt8] {
        var key: [UInt8] = []
        if (try? IndexKey.append(value, to: &key)) != nil { return key }
        return [0x02] + Array(RecordJSON.defaultJSON(value).serialized().utf8)
    }

    /// The text of an index key for messages, read back with the fields' kinds: `name = "Inbox"`; the bytes in
    /// hexadecimal when they do not read back (a cut key, unknown kinds).
    package static func describe(
        _ key: UnsafeRawBufferPointer, index: IndexCatalog, kinds: [String: ValueKind]
    ) -> String {
        var candidates: [[ValueKind]] = []
        let known = index.fields.compactMap { kinds[$0] }
        if !index.isMultiEntry && known.count == index.fields.count {
            candidates = [known]
        } else if index.fields.count == 1 {
            // A multi-entry index's elements, or a field no record gave a kind yet: try the kinds keys hold.
            candidates = [[.uuid], [.string], [.int], [.uint], [.double], [.true]]
        }
        for kinds in candidates {
            if let values = try? IndexKey.decodeComponents(unsafe BorrowedBytes(unsafe: key), kinds: kinds) {
                let parts = zip(index.fields, values).map { field, value in
                    "\(field) = \(RecordJSON.json(for: value, kind: value.kind).serialized())"
                }
                return parts.joined(separator: ", ")
            }
        }
        return "key 0x" + key.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    /// The string with leading zeros up to `width` characters.
    package func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
