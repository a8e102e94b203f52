import Foundation
import KVStore
import LMDB

/// The parts of a store replication reads and writes beside its containers: its LMDB environment (the one its
/// containers in this process share), its catalog and its history.
struct ReplicatedStore: Sendable {
    let environment: Environment
    let catalog: Table
    let path: String
    /// Whether the container was opened read-only, or its environment is.
    let isReadOnly: Bool

    init(_ container: ModelContainer) {
        environment = container.environment
        catalog = container.catalogTable
        path = container.path
        isReadOnly = container.configuration.isReadOnly || container.environment.isReadOnly
    }

    /// The catalog keys that belong to one store and are never replicated: the generation (each store advances its
    /// own), the replica's and the primary's marks, and an import's progress (kvtool's, of the store it runs on).
    static let localCatalogKeys: Set<[UInt8]> = [
        Catalog.generationKey, ReplicaCatalog.key, PrimaryCatalog.key, Array("import".utf8),
    ]

    /// The catalog entries a replica copies, as stored, in key order.
    ///
    /// - Throws: What LMDB throws.
    func replicatedCatalog(in txn: borrowing Transaction) throws -> [(key: [UInt8], value: [UInt8])] {
        try txn.entries(in: catalog).compactMap { entry in
            Self.localCatalogKeys.contains(entry.key) ? nil : (entry.key, entry.value)
        }
    }

    /// Whether the store's external chunks have checksums: its format is 2 or later.
    ///
    /// - Throws: ``KVStore/KVStoreError`` for a format entry that does not decode.
    func hasChecksums() throws -> Bool {
        let catalog = self.catalog
        let format = try environment.read { txn in
            try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: catalog)
        }
        return (format?.formatVersion ?? Catalog.newStoreFormatVersion) >= 2
    }

    /// The history table, when the store has one.
    ///
    /// - Throws: What LMDB throws.
    func historyTable() throws -> HistoryTable? {
        try environment.tableIfPresent(named: Catalog.historyTableName).map(HistoryTable.init(table:))
    }

    /// The store's history catalog entry, or ``ReplicationError/Kind/historyNotEnabled``.
    ///
    /// - Throws: ``ReplicationError/Kind/historyNotEnabled``, and what reading the catalog throws.
    func requireHistory(in txn: borrowing Transaction) throws -> HistoryCatalog {
        guard let history = try Catalog.read(HistoryCatalog.self, key: Catalog.historyKey, in: txn, table: catalog)
        else {
            throw ReplicationError(
                .historyNotEnabled,
                "The store at \(path) records no change history, and replication ships its history: switch it on "
                    + "with ModelContainer.enableHistory() on the primary (a replica's copy of the primary has it)")
        }
        return history
    }
}

extension UUID {
    /// The 16 bytes of the ID, the key of its record.
    var keyBytes: [UInt8] {
        let u = uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    /// The ID of 16 bytes.
    init?(keyBytes b: some Collection<UInt8>) {
        let b = Array(b)
        guard b.count == 16 else { return nil }
        self.init(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }
}
