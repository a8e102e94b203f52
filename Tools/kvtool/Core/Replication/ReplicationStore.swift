import Foundation
import KVStore
import KVStoreInspection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a store for a `replicate-*` command: checked first as kvtool checks any store, read-only and creating
/// nothing, then opened through the library as a program opens it, with a container of no model types.
///
/// The check refuses what would otherwise go wrong later, or silently: a path without a store (the library would
/// create one there), a store without history, a primary given to `replicate-follow` (the library would make it a
/// replica, which refuses its program's writes), a replica given to `replicate-publish`, and a store without a lock
/// file run as another user than its owner (the library would create a `lock.mdb` its owner cannot open).
///
/// ```swift
/// let container = try ReplicationStore.open(path, as: .follower, of: "ORDERS")
/// defer { try? container.close() }
/// ```
enum ReplicationStore {
    /// What the command does with the store.
    enum Role {
        /// `replicate-publish`: the primary.
        case publisher
        /// `replicate-follow`: a replica of the stream, or a copy of the primary that becomes one.
        case follower
        /// `replicate-status`: a replica of the stream.
        case observer
    }

    /// Checks the store at `path` for `role` on the stream `stream`, then opens it.
    ///
    /// - Throws: ``InspectionError`` when the path holds no store (nothing is created) or the store may not be
    ///   opened; ``ToolError`` when it records no history, is not what `role` needs, or the library cannot open it.
    static func open(_ path: String, as role: Role, of stream: String) throws -> ModelContainer {
        let store = try InspectedStore.open(path)
        let replicaStream: String?
        let hasLockFile = !store.readsWithoutLockFile
        let owner = store.dataFile.owner
        do {
            defer { store.close() }
            let history = try StoreHistory(store: store)
            let catalog = store.catalog
            replicaStream = try store.environment.read { txn in
                guard try history.state(in: txn) != nil else {
                    throw ToolError(
                        "'\(path)' records no change history, which replication ships: the primary's program switches "
                            + "it on with ModelContainer.enableHistory(retention:), and a replica is a copy of such a "
                            + "primary")
                }
                return try ReplicaCatalog.read(in: txn, table: catalog)?.stream
            }
            try store.checkNoProgramOpenedIt()
        }
        try check(path, as: role, of: stream, replicaOf: replicaStream, hasLockFile: hasLockFile)
        if !hasLockFile && geteuid() != owner {
            throw ToolError(
                "'\(path)' belongs to \(User.describe(owner)) and has no lock file: opening it as "
                    + "\(User.describe(geteuid())) would create a lock.mdb that its owner cannot open. Run kvtool as its "
                    + "owner (for example 'runuser -u \(User.name(of: owner) ?? "<owner>") -- kvtool ...')")
        }
        // Writable for every role: the publisher marks the primary (a catalog entry naming its data file, so that
        // the library never makes it a replica) and otherwise reads; the replica's writes go through the
        // replication, which a container of a replica lets through; the observer writes nothing.
        let configuration = ModelConfiguration(path: path)
        do {
            return try ModelContainer(for: [], configuration: configuration)
        } catch let error as KVStoreError {
            throw ToolError(error.description)
        }
    }

    /// Checks what the store is against what `role` needs.
    ///
    /// - Throws: ``ToolError`` saying what the store is and what to do instead.
    private static func check(
        _ path: String, as role: Role, of stream: String, replicaOf replicaStream: String?, hasLockFile: Bool
    ) throws(ToolError) {
        switch (role, replicaStream) {
        case (.publisher, let other?):
            throw ToolError(
                "'\(path)' is a replica of the stream '\(other)': only its primary publishes the history. Publish "
                    + "from the primary's store")
        case (.follower, let other?) where other != stream, (.observer, let other?) where other != stream:
            throw ToolError(
                "'\(path)' is a replica of the stream '\(other)', not of '\(stream)'. A replica of '\(stream)' starts "
                    + "as a copy of its primary ('kvtool copy <primary> <directory>')")
        case (.follower, nil) where hasLockFile:
            // A copy that 'kvtool copy' makes has no lock file until something opens it; a primary always has one,
            // from its program. Making a primary a replica would refuse its program's writes from then on.
            throw ToolError(
                "'\(path)' is not a replica yet, and has a lock file: a program has opened it, so it may be the "
                    + "primary itself, which following would turn into a read-only replica. A replica starts as a "
                    + "copy of the primary that nothing has opened yet: 'kvtool copy <primary> <directory>' makes one "
                    + "(a copy made otherwise qualifies once its lock.mdb is removed, while no program has it open)")
        case (.observer, nil):
            throw ToolError(
                "'\(path)' is not a replica: 'kvtool replicate-follow' makes a copy of the primary a replica of the "
                    + "stream '\(stream)'")
        default:
            return
        }
    }
}
