import Foundation
import LMDB

extension Catalog {
    /// Every entity entry of the catalog, and the keys of those that do not decode, with the reason.
    package static func entities(
        in txn: borrowing Transaction, table: Table
    ) throws -> (entities: [EntityCatalog], damaged: [(key: String, reason: String)]) {
        var entities: [EntityCatalog] = []
        var damaged: [(key: String, reason: String)] = []
        try txn.scanEntries(table, in: .prefix(entityKeyPrefix)) { key, value in
            do {
                entities.append(try decodeValue(EntityCatalog.self, from: value, key: Array(key)))
            } catch {
                damaged.append((String(decoding: key, as: UTF8.self), "\(error)"))
            }
            return true
        }
        return (entities, damaged)
    }
}
