import Foundation
import KVStore
import LMDB

/// The records' consistency, walking each record table and each index table in key order.
extension IntegrityChecker {
    /// Checks each record of an entity: it decodes, holds its key as `id`, has its index entries (and its unique
    /// values are its own), and its references resolve.
    func checkRecords(of checked: CheckedEntity) throws {
        let name = checked.entity.name
        try walk(checked.records, label: name) { txn, key, value in
            statistics.records += 1
            guard let id = RecordKey.uuid(key) else {
                problem(.error, "\(name): a record key of \(key.count) bytes is not a UUID", entity: name)
                return
            }
            let record: RecordValue
            do {
                record = try RecordValue.decode(
                    from: unsafe BorrowedBytes(unsafe: value), fields: checked.entity.fields)
            } catch {
                problem(.error, "\(name) \(id): the record does not decode: \(error)", entity: name, id: id)
                return
            }
            let unnamed = Self.unnamedFieldIDs(in: record, fields: checked.entity.fields)
            if !unnamed.isEmpty {
                problem(
                    .error,
                    "\(name) \(id): the record holds values under field ids that the catalog's field table does not "
                        + "name (\(unnamed.map(String.init).joined(separator: ", "))): they do not read; the catalog "
                        + "lost names that a writer interned",
                    entity: name, id: id)
            }
            switch RecordIndexKeys.value(of: "id", in: record) {
            case .uuid(id): break
            case .null: problem(.error, "\(name) \(id): the record has no id field", entity: name, id: id)
            case let other:
                problem(
                    .error, "\(name) \(id): the record's id field holds \(Self.describe(other)), not its key",
                    entity: name, id: id)
            }
            for index in checked.indexes {
                try checkEntries(of: record, id: id, key: key, in: index, entity: checked, txn: txn)
            }
            for reference in checked.references {
                try checkReference(reference, of: record, id: id, entity: name, txn: txn)
            }
        }
    }

    /// The field ids of `record`, at any depth, that `fields` does not name (``RecordValue`` shows them as `#<id>`),
    /// in the order met, each once.
    static func unnamedFieldIDs(in record: RecordValue, fields: FieldTable) -> [UInt32] {
        var unnamed: [UInt32] = []
        func visit(_ value: RecordValue, depth: Int) {
            switch value {
            case .object(let entries):
                for entry in entries {
                    if entry.name.hasPrefix("#"), let id = UInt32(entry.name.dropFirst()),
                        fields.name(for: id, in: depth == 0 ? .topLevel : .nested) == nil, !unnamed.contains(id)
                    {
                        unnamed.append(id)
                    }
                    visit(entry.value, depth: depth + 1)
                }
            case .array(let elements): for element in elements { visit(element, depth: depth + 1) }
            case .stringMap(let entries): for entry in entries { visit(entry.value, depth: depth + 1) }
            case .intMap(let entries): for entry in entries { visit(entry.value, depth: depth + 1) }
            default: break
            }
        }
        visit(record, depth: 0)
        return unnamed
    }

    /// Checks that a record has each of its entries in an index, and that a unique value is its own. An index whose
    /// keys the records do not give (``IndexCatalog/isDerivable`` is false: a computed property's, or a type's own
    /// key encoding) is not checked against them: only the program that declares it can compute its keys.
    private func checkEntries(
        of record: RecordValue, id: UUID, key: UnsafeRawBufferPointer, in index: (catalog: IndexCatalog, table: Table),
        entity checked: CheckedEntity, txn: borrowing Transaction
    ) throws {
        guard index.catalog.isDerivable else { return }
        let name = checked.entity.name
        let part = index.catalog.name
        let keys: [[UInt8]]
        do {
            keys = try RecordIndexKeys.keys(of: record, in: index.catalog, hash: longKeyHash)
        } catch {
            problem(.error, "\(name) \(id): cannot be indexed in \(part): \(error)", entity: name, id: id, part: part)
            return
        }
        for indexKey in keys {
            statistics.indexEntries += 1
            // Described only for a problem: describing every key would cost more than checking it.
            var value: String {
                indexKey.withUnsafeBytes { IndexEntries.describe($0, index: index.catalog, kinds: checked.kinds) }
            }
            if index.catalog.isUnique {
                // A cut key may be shared by values that differ after the cut, each with its own entry.
                let owners = try UniqueIndexEntries.owners(of: indexKey, in: index.table, txn: txn)
                if owners.contains(where: { $0.elementsEqual(key) }) { continue }
                guard let owner = owners.first else {
                    problem(
                        .error, "\(name) \(id): missing from index \(part) (\(value))", entity: name, id: id, part: part
                    )
                    continue
                }
                let ownerID = owner.withUnsafeBytes(RecordKey.uuid)
                let ownerHolds = try ownerID.map { ownerID in
                    try txn.withUnsafeBytes(forKey: owner, in: checked.records) { bytes in
                        guard let bytes,
                            let other = try? RecordValue.decode(
                                from: unsafe BorrowedBytes(unsafe: bytes), fields: checked.entity.fields)
                        else { return false }
                        let keys = try? RecordIndexKeys.wholeKeys(of: other, in: index.catalog)
                        let mine = try? RecordIndexKeys.wholeKeys(of: record, in: index.catalog)
                        return keys != nil && keys == mine
                    }
                }
                if ownerHolds == true, let ownerID {
                    problem(
                        .error,
                        "\(name) \(id) and \(name) \(ownerID) break the unique index \(part): both have \(value)",
                        entity: name, id: id, part: part)
                } else {
                    problem(
                        .error, "\(name) \(id): missing from index \(part) (\(value) points to another record)",
                        entity: name, id: id, part: part)
                }
            } else {
                let present = try txn.withCursor(on: index.table) { cursor in
                    try cursor.seek(to: indexKey, value: Array(key))
                }
                if !present {
                    problem(
                        .error, "\(name) \(id): missing from index \(part) (\(value))", entity: name, id: id, part: part
                    )
                }
            }
        }
    }

    /// Checks that each ID a relationship field holds names a record of the target.
    private func checkReference(
        _ reference: Reference, of record: RecordValue, id: UUID, entity: String, txn: borrowing Transaction
    ) throws {
        let relationship = reference.relationship
        let part = relationship.name
        let (ids, invalid) = RelationshipPath.storedIDs(RecordIndexKeys.value(of: reference.field, in: record))
        for value in invalid {
            problem(
                .error, "\(entity) \(id): \(part) (field \(reference.field)) holds \(Self.describe(value)), not a UUID",
                entity: entity, id: id, part: part)
        }
        for target in ids {
            statistics.references += 1
            guard try !txn.containsKey(RecordKey.bytes(target), in: reference.target) else { continue }
            problem(
                reference.tolerance == nil ? .error : .warning,
                "\(entity) \(id): \(part) (field \(reference.field)) references \(relationship.target) \(target), "
                    + "which does not exist (\(reference.tolerance ?? "delete rule \(relationship.deleteRule)"))",
                entity: entity, id: id, part: part)
        }
    }

    /// Checks each entry of an index: it points to a record that exists and, when the records give the index's keys
    /// (``IndexCatalog/isDerivable``), holds the indexed value. Records that do not decode were reported by the
    /// record walk and are skipped here.
    func checkIndex(_ index: IndexCatalog, table: Table, of checked: CheckedEntity) throws {
        let name = checked.entity.name
        let part = index.name
        try walk(table, label: "\(name).\(part)") { txn, key, value in
            statistics.indexEntries += 1
            var entry: String { IndexEntries.describe(key, index: index, kinds: checked.kinds) }
            guard let id = RecordKey.uuid(value) else {
                problem(
                    .error, "index \(name).\(part): the entry (\(entry)) holds \(value.count) bytes, not a UUID",
                    entity: name, part: part)
                return
            }
            try txn.withUnsafeBytes(forKey: value, in: checked.records) { bytes in
                guard let bytes else {
                    problem(
                        .error,
                        "index \(name).\(part): the entry (\(entry)) points to \(name) \(id), which does not exist",
                        entity: name, id: id, part: part)
                    return
                }
                guard index.isDerivable,
                    let record = try? RecordValue.decode(
                        from: unsafe BorrowedBytes(unsafe: bytes), fields: checked.entity.fields),
                    let keys = try? RecordIndexKeys.keys(of: record, in: index, hash: longKeyHash)
                else { return }
                // A unique index's second value of a cut key is stored under the cut key and a sequence number.
                let stored =
                    IndexKey.isGrouped(unsafe BorrowedBytes(unsafe: key))
                    ? UnsafeRawBufferPointer(rebasing: key.prefix(IndexKey.maximumLength)) : key
                if !keys.contains(where: { $0.elementsEqual(stored) }) {
                    let actual = index.fields.map {
                        "\($0) = \(Self.describe(RecordIndexKeys.value(of: $0, in: record)))"
                    }
                    problem(
                        .error,
                        "index \(name).\(part): the entry (\(entry)) points to \(name) \(id), whose value is "
                            + actual.joined(separator: ", "),
                        entity: name, id: id, part: part)
                }
            }
        }
    }

    /// How the store completes index keys that LMDB's limit cuts.
    var longKeyHash: LongKeyHash {
        store.format.longKeyHash ?? .standard
    }

    /// A value for messages, as JSON.
    static func describe(_ value: RecordValue) -> String {
        RecordJSON.json(for: value, kind: value.kind).serialized()
    }
}
