import Foundation

/// Index keys computed from stored records by field name, with the catalog's description of each index: the same
/// bytes a program that declares the index computes from its models.
///
/// A program that does not declare an index the store has (a script that declares only the models it needs, an older
/// version of the program, `kvtool import`) still maintains it this way, so that every writer keeps every index of
/// the store in step. The keys are exact for the types KVStore encodes itself (integers, floating-point numbers,
/// Booleans, strings, UUIDs, dates, their optionals and raw-value enums over them); an index over a type with its own
/// ``IndexKeyEncodable`` encoding is marked not derivable in the catalog, and writers that do not declare it refuse
/// to write its entity.
package enum RecordIndexKeys {
    /// The value of a field in a record: a top-level member, or a dotted path into nested objects (`address.city`);
    /// `.null` when it is absent.
    package static func value(of field: String, in record: RecordValue) -> RecordValue {
        guard case .object(let entries) = record else { return .null }
        if let entry = entries.first(where: { $0.name == field }) { return entry.value }
        guard let dot = field.firstIndex(of: ".") else { return .null }
        let head = String(field[..<dot])
        guard let nested = entries.first(where: { $0.name == head }) else { return .null }
        return value(of: String(field[field.index(after: dot)...]), in: nested.value)
    }

    /// The finalized keys of a record in an index, without duplicates, in the order of their first appearance.
    ///
    /// - Parameter hash: How the store completes keys that LMDB's limit cuts.
    /// - Throws: ``IndexKeyDerivationError`` when a field's value cannot be part of a key (data, URL, decimal,
    ///   containers), or a multi-entry field does not hold an array.
    package static func keys(
        of record: RecordValue, in index: IndexCatalog, hash: LongKeyHash = .standard
    ) throws(IndexKeyDerivationError) -> [[UInt8]] {
        try wholeKeys(of: record, in: index).map { IndexKey.finalized($0, hash: hash) }
    }

    /// The keys of a record in an index before LMDB's limit cuts them, without duplicates, in the order of their
    /// first appearance.
    ///
    /// - Throws: ``IndexKeyDerivationError`` when a field's value cannot be part of a key.
    package static func wholeKeys(
        of record: RecordValue, in index: IndexCatalog
    ) throws(IndexKeyDerivationError) -> [[UInt8]] {
        if index.isMultiEntry, let field = index.fields.first {
            let elements: [RecordValue]
            switch value(of: field, in: record) {
            case .array(let values): elements = values
            case .null: elements = []
            case let other:
                throw IndexKeyDerivationError(field: field, reason: "holds \(other.kind.typeName), not an array")
            }
            var seen = Set<[UInt8]>()
            var keys: [[UInt8]] = []
            for element in elements {
                let key = try wholeKey(for: [element], fields: [field])
                if seen.insert(key).inserted { keys.append(key) }
            }
            return keys
        }
        return [try wholeKey(for: index.fields.map { value(of: $0, in: record) }, fields: index.fields)]
    }

    /// The finalized key of these component values.
    ///
    /// - Parameter hash: How the store completes keys that LMDB's limit cuts.
    /// - Throws: ``IndexKeyDerivationError`` when a value cannot be part of a key.
    package static func key(
        for components: [RecordValue], fields: [String], hash: LongKeyHash = .standard
    ) throws(IndexKeyDerivationError) -> [UInt8] {
        IndexKey.finalized(try wholeKey(for: components, fields: fields), hash: hash)
    }

    /// The key of these component values before LMDB's limit cuts it.
    ///
    /// - Throws: ``IndexKeyDerivationError`` when a value cannot be part of a key.
    package static func wholeKey(
        for components: [RecordValue], fields: [String]
    ) throws(IndexKeyDerivationError) -> [UInt8] {
        var key: [UInt8] = []
        for (component, field) in zip(components, fields) {
            do {
                try IndexKey.append(component, to: &key)
            } catch {
                throw IndexKeyDerivationError(
                    field: field, reason: "holds \(component.kind.typeName), which no index key holds")
            }
        }
        return key
    }
}

/// A record value that cannot be indexed: the field and why.
package struct IndexKeyDerivationError: Error, Equatable, CustomStringConvertible {
    /// The indexed field.
    package let field: String
    /// What is wrong with its value.
    package let reason: String

    package init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    /// `the indexed field 'tags' holds string, not an array`.
    package var description: String {
        "the indexed field '\(field)' \(reason)"
    }
}
