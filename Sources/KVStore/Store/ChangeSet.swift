import Foundation

/// What one committed write transaction changed: the IDs inserted, updated and deleted, by entity.
///
/// Change sets arrive through ``ModelContainer/changes(for:bufferSize:)`` after the commit, in commit order.
public struct ChangeSet: Sendable, Hashable {
    /// The ID of the committed transaction; it grows with every commit to the store.
    public let transactionID: Int

    /// The IDs of the models inserted, by entity name.
    public internal(set) var inserted: [String: Set<UUID>]

    /// The IDs of the models that replaced a stored model with the same ID, by entity name. Models rewritten by a
    /// `nullify` delete rule count as updated.
    public internal(set) var updated: [String: Set<UUID>]

    /// The IDs of the models deleted, by entity name, including those reached by `cascade` rules.
    public internal(set) var deleted: [String: Set<UUID>]

    /// Whether another process committed this transaction. Its content is unknown then: the sets are empty and every
    /// entity may have changed.
    public let isExternal: Bool

    /// How many change sets this subscriber missed just before this one because its buffer was full.
    public internal(set) var missed: Int

    init(transactionID: Int, isExternal: Bool = false) {
        self.transactionID = transactionID
        self.inserted = [:]
        self.updated = [:]
        self.deleted = [:]
        self.isExternal = isExternal
        self.missed = 0
    }

    /// The entities the transaction changed.
    public var entities: Set<String> {
        Set(inserted.keys).union(updated.keys).union(deleted.keys)
    }

    /// Whether the transaction may have changed models of `entity`.
    public func touches(_ entity: String) -> Bool {
        isExternal || entities.contains(entity)
    }

    /// Whether the transaction changed nothing this process can see.
    public var isEmpty: Bool {
        !isExternal && inserted.isEmpty && updated.isEmpty && deleted.isEmpty
    }
}

/// Collects what a write transaction changes, when someone observes the container.
final class ChangeCollector {
    private(set) var changes: ChangeSet

    init(transactionID: Int) {
        changes = ChangeSet(transactionID: transactionID)
    }

    func saved(_ id: UUID, in entity: String, replacing: Bool) {
        if changes.inserted[entity]?.contains(id) == true { return }
        if replacing {
            changes.updated[entity, default: []].insert(id)
        } else {
            changes.inserted[entity, default: []].insert(id)
        }
    }

    func deleted(_ id: UUID, in entity: String) {
        // A model inserted and deleted in one transaction leaves no trace.
        if changes.inserted[entity]?.remove(id) != nil {
            if changes.inserted[entity]?.isEmpty == true { changes.inserted[entity] = nil }
            return
        }
        changes.updated[entity]?.remove(id)
        if changes.updated[entity]?.isEmpty == true { changes.updated[entity] = nil }
        changes.deleted[entity, default: []].insert(id)
    }
}
