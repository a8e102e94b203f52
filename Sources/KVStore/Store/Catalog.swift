import Foundation
import LMDB

/// The layout of a store and its self-description, kept in the `catalog` table.
///
/// | table | key | value |
/// |---|---|---|
/// | `catalog` | `format` | ``StoreFormat`` as JSON |
/// | `catalog` | `entity/<Entity>` | ``EntityCatalog`` as JSON: field names and ids, indexes |
/// | `records/<Entity>` | 16-byte UUID | encoded record |
/// | `index/<Entity>/<index>` | order-preserving key | 16-byte UUID (`dupSort`, `dupFixed`; plain when unique) |
///
/// Everything `kvtool` needs to read a store without the program's Swift types is here.
package enum Catalog {
    /// The format this version of KVStore writes and reads.
    package static let formatVersion = 1

    /// The name of the catalog table.
    package static let tableName = "catalog"

    /// The catalog key of the store's format.
    package static let formatKey = Array("format".utf8)

    /// The catalog key of an entity's description.
    package static func entityKey(_ entity: String) -> [UInt8] {
        Array("entity/\(entity)".utf8)
    }

    /// The prefix of every entity key, for listing the entities.
    package static let entityKeyPrefix = Array("entity/".utf8)

    /// The name of an entity's record table.
    package static func recordTableName(_ entity: String) -> String {
        "records/\(entity)"
    }

    /// The name of an index's table.
    package static func indexTableName(_ entity: String, _ index: String) -> String {
        "index/\(entity)/\(index)"
    }

    /// The options of an index table: several models per key unless the index is unique.
    package static func indexTableOptions(unique: Bool) -> Table.Options {
        unique ? [] : [.dupSort, .dupFixed]
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// Reads a catalog value.
    package static func read<T: Decodable>(
        _ type: T.Type, key: [UInt8], in txn: borrowing Transaction, table: Table
    )
        throws -> T?
    {
        guard let bytes = try txn.value(forKey: key, in: table) else { return nil }
        do {
            return try decoder.decode(T.self, from: Data(bytes))
        } catch {
            throw KVStoreError(
                .corruptRecord,
                message:
                    "The catalog entry '\(String(decoding: key, as: UTF8.self))' does not decode; the store is damaged",
                underlying: error)
        }
    }

    /// Writes a catalog value.
    static func write<T: Encodable>(_ value: T, key: [UInt8], in txn: borrowing Transaction, table: Table) throws {
        try txn.put(try encoder.encode(value), forKey: key, in: table)
    }
}

/// The `format` entry of the catalog.
package struct StoreFormat: Codable, Sendable, Equatable {
    /// The format version that wrote the store.
    package var formatVersion: Int
    /// When the store was created.
    package var created: Date
}

/// An entity's description in the catalog.
struct EntityCatalog: Codable, Sendable, Equatable {
    /// The entity's name.
    var name: String
    /// The field names (of the model and of nested values) with their ids and first-seen kinds.
    var fields: FieldTable
    /// The entity's indexes.
    var indexes: [IndexCatalog]
}

/// An index's description in the catalog.
package struct IndexCatalog: Codable, Sendable, Equatable {
    /// The index's name.
    package var name: String
    /// The indexed fields, in key order.
    package var fields: [String]
    /// Whether at most one model may have each key.
    package var isUnique: Bool
    /// Whether each element of an array field has its own entry.
    package var isMultiEntry: Bool
    /// Whether the index holds an entry for every record. An index whose building was interrupted is rebuilt.
    package var isReady: Bool
}
