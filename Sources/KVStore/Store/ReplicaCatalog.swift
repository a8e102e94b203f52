import Foundation
import LMDB

/// The `replica` entry of the catalog: the store is a replica that follows a primary's change history through a
/// stream, and only that replication writes it.
///
/// A container that opens a store with this entry opens it for reading: every write through it throws
/// ``KVStoreError/readOnly``, and it does no schema work (a new entity or index of its models is refused as a
/// read-only open refuses it). The replication writes the store with the records, catalog entries and history entries
/// of the primary, and keeps its own progress beside them (in the replication module's table).
package struct ReplicaCatalog: Codable, Sendable, Equatable {
    /// The stream the replica follows.
    package var stream: String
    /// The store ID of the primary's history (``HistoryToken/storeID``), which the replica's history shares.
    package var primaryStoreID: UUID
    /// When the store became a replica.
    package var since: Date

    package init(stream: String, primaryStoreID: UUID, since: Date) {
        self.stream = stream
        self.primaryStoreID = primaryStoreID
        self.since = since
    }

    /// The catalog key of the entry.
    package static let key = Array("replica".utf8)

    /// The entry as `txn` sees it, or `nil` for a store that is no replica.
    ///
    /// - Throws: ``KVStoreError/damaged`` when the entry does not check out or decode.
    package static func read(in txn: borrowing Transaction, table: Table) throws -> ReplicaCatalog? {
        try Catalog.read(ReplicaCatalog.self, key: key, in: txn, table: table)
    }

    /// The error of a write through a container of a replica.
    func refusal(path: String, action: String) -> KVStoreError {
        KVStoreError(
            .readOnly,
            message: "The store at \(path) is a replica of the stream '\(stream)' (primary store \(primaryStoreID)); "
                + "only its replication writes it, so nothing was written (\(action)). Write to the primary: its "
                + "commits reach this store through the stream")
    }
}

/// The `primary` entry of the catalog: a publisher of the store's history ran on this store, whose data file it names
/// by device and inode. A copy of the store (`kvtool copy`, a backup) has another data file, so a replica may start
/// from it; the primary itself is refused as a replica, which would end its writes for good.
package struct PrimaryCatalog: Codable, Sendable, Equatable {
    /// The stream the publisher sends to.
    package var stream: String
    /// The data file's identity, `<device>:<inode>`.
    package var dataFile: String
    /// When the publisher first ran on this data file.
    package var since: Date

    package init(stream: String, dataFile: String, since: Date) {
        self.stream = stream
        self.dataFile = dataFile
        self.since = since
    }

    /// The catalog key of the entry.
    package static let key = Array("primary".utf8)

    /// The entry as `txn` sees it, or `nil` when no publisher ran on the store or a copy of it.
    ///
    /// - Throws: ``KVStoreError/damaged`` when the entry does not check out or decode.
    package static func read(in txn: borrowing Transaction, table: Table) throws -> PrimaryCatalog? {
        try Catalog.read(PrimaryCatalog.self, key: key, in: txn, table: table)
    }

    /// The identity of the data file of the store in `directory`, `<device>:<inode>`, or `nil` when it cannot be read.
    package static func dataFileIdentity(ofStoreIn directory: String) -> String? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")
        guard let inode = (attributes?[.systemFileNumber] as? NSNumber)?.uint64Value,
            let device = (attributes?[.systemNumber] as? NSNumber)?.uint64Value
        else { return nil }
        return "\(device):\(inode)"
    }
}
