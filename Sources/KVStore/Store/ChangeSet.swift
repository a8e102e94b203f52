import Foundation

/// What one committed write transaction changed: the IDs inserted, updated and deleted, by entity, and each model's
/// change in the order the transaction made it.
///
/// Change sets arrive through ``ModelContainer/changes(for:bufferSize:)`` after the commit, in commit order, and
/// through ``ModelContainerObserver/container(_:didCommit:duration:)``.
///
/// ```swift
/// for await changeSet in container.changes(for: [Task.self]) {
///     for change in changeSet.changes { print(change) }  // "deleted Task 0193… (cascade from Project 0193…)"
/// }
/// ```
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

    /// Every model the transaction changed, in the order it changed them, with why a delete rule changed it: the
    /// same models as ``inserted``, ``updated`` and ``deleted``.
    ///
    /// A model has one entry, where it first changed: saved twice, it stays `inserted` or `updated`; saved then
    /// deleted, its entry moves to the delete, and a model inserted and deleted in the same transaction has none.
    /// A delete comes before what its rules reach, in the order the rules reach them (models of one entity reached
    /// together come in ID order), cascaded deletes before the referrers a `nullify` rule rewrites. A model deleted
    /// and saved again under its ID has two entries, `deleted` then `inserted`, as it is in both sets.
    ///
    /// `ModelContext/save()` writes its inserts and updates first, entity by entity in the order the context first
    /// touched them and in ID order within an entity, then its deletes, with their rules, in the same order.
    public internal(set) var changes: [Change]

    /// Whether another process, or another container of the store, committed this transaction. When the store
    /// records history (``ModelContainer/enableHistory(retention:)``), its content comes from the history entry and
    /// is complete, as a local change set's; otherwise it is unknown (``isContentKnown`` is false): the sets are empty
    /// and every entity may have changed.
    public let isExternal: Bool

    /// Whether the sets and ``changes`` say what the transaction changed: always for this container's commits, and for
    /// those of others when the store records history.
    public let isContentKnown: Bool

    /// The token of the commit's history entry, when the store records history: a subscriber that keeps it can read
    /// what it missed, after a restart too, with `history(after:)`.
    public internal(set) var historyToken: HistoryToken?

    /// How many change sets this subscriber missed just before this one because its buffer was full and the store's
    /// history could not give them again (it records none, or pruned them): read the store afresh. With history on,
    /// a subscriber that falls behind gets the change sets it missed from the history instead, in order.
    public internal(set) var missed: Int

    init(transactionID: Int, isExternal: Bool = false) {
        self.transactionID = transactionID
        self.inserted = [:]
        self.updated = [:]
        self.deleted = [:]
        self.changes = []
        self.isExternal = isExternal
        self.isContentKnown = !isExternal
        self.missed = 0
    }

    /// The change set of a history entry: external unless `origin` (the receiving container's) committed it.
    init(_ entry: HistoryEntry, origin: UInt64) {
        self.transactionID = entry.transactionID
        self.isExternal = entry.origin != origin
        self.isContentKnown = true
        self.historyToken = entry.token
        self.missed = 0
        self.changes = entry.changes
        self.inserted = entry.inserted
        self.updated = entry.updated
        self.deleted = entry.deleted
    }

    /// The entities the transaction changed.
    public var entities: Set<String> {
        Set(inserted.keys).union(updated.keys).union(deleted.keys)
    }

    /// Whether the transaction may have changed models of `entity`.
    public func touches(_ entity: String) -> Bool {
        !isContentKnown || entities.contains(entity)
    }

    /// Whether the transaction changed nothing this process can see.
    public var isEmpty: Bool {
        isContentKnown && inserted.isEmpty && updated.isEmpty && deleted.isEmpty
    }
}
