import Foundation

/// A context's changes that are not saved yet, and the overlay that every read through the context lays over the
/// store: a pending insert replaces or adds its model, a pending delete hides it.
///
/// The overlay is written once here, for every read of ``ModelContext``: key lookups, fetches and counts, children
/// and many-to-many referrers, related models and prefetched ones. A read first takes what the store (or the
/// prefetch cache) holds, then calls one of the `overlaid` functions with it.
///
/// Delete rules are applied when the context saves, not in the overlay: a pending delete hides the deleted model, and
/// the models that its cascade would reach stay visible until the save.
///
/// Tracked objects (the reference-models issue) enter the overlay the same way structs do: by recording their
/// current values as inserts before a read.
struct PendingChanges {
    /// One pending change of a model.
    enum Change {
        /// The model is saved as it is here, replacing the stored one with its ID.
        case insert(any StoredModel)
        /// The model of this type is deleted, with its delete rules.
        case delete(any StoredModel.Type)
    }

    /// A model type's identity, the key of the changes of one entity.
    typealias EntityKey = ObjectIdentifier

    /// The changes by entity, then by ID. The entities are found by a linear search: a context changes models of a
    /// few types, and comparing a few identifiers costs less than hashing one, which every change would.
    private var byEntity: [(entity: EntityKey, changes: [ModelKey: Change])] = []
    /// The entities and IDs in the order of their first change, which is the order a save writes entities in. A
    /// forgotten change stays listed (forgetting is one lookup, not a pass over the list), and a change recorded
    /// again after it is listed twice: ``inSaveOrder`` keeps only the IDs with a change, once each.
    private var order: [(entity: EntityKey, id: UUID)] = []
    /// How many changes there are.
    private var count = 0
    /// Emptied tables of changes kept from earlier saves, with their storage, for the entities the next changes
    /// name: a context that saves chunk after chunk then fills the same storage each time, instead of growing new
    /// tables (and touching new pages) for every chunk.
    private var spareTables: [[ModelKey: Change]] = []

    /// The most changes a table or the order keeps storage for once emptied: an importer's chunks fit; one large
    /// save does not keep its memory for the rest of the context's life.
    private static let keptCapacity = 65_536

    /// The position of `entity`'s changes in ``byEntity``.
    private func position(of entity: EntityKey) -> Int? {
        byEntity.firstIndex { $0.entity == entity }
    }

    /// The changes of `entity`, by ID.
    private func changesByID(of entity: EntityKey) -> [ModelKey: Change]? {
        for entry in byEntity where entry.entity == entity { return entry.changes }
        return nil
    }

    /// Whether there is any change to save.
    var isEmpty: Bool { count == 0 }

    /// Records `change` of the model of type `M` with `id`, replacing an earlier change of that model. The change is
    /// taken (`consuming`), so that it moves into the table: a copy of a change copies its existential model through
    /// the model type's value witness, per change recorded.
    mutating func record<M: StoredModel>(_ change: consuming Change, of type: M.Type, id: UUID) {
        let entity = EntityKey(M.self)
        let position =
            position(of: entity)
            ?? {
                byEntity.append((entity, spareTables.popLast() ?? [:]))
                return byEntity.count - 1
            }()
        if byEntity[position].changes.updateValue(change, forKey: ModelKey(id)) == nil {
            order.append((entity, id))
            count += 1
        }
    }

    /// Forgets the change of the model of type `M` with `id`, if there is one.
    mutating func forget<M: StoredModel>(_ type: M.Type, id: UUID) {
        guard let position = position(of: EntityKey(M.self)),
            byEntity[position].changes.removeValue(forKey: ModelKey(id)) != nil
        else { return }
        count -= 1
    }

    /// Forgets every change, keeping the storage of tables and order up to ``keptCapacity`` for the next ones.
    mutating func removeAll() {
        // Each table moved out of the list, so that emptying it keeps its storage rather than copying it.
        while var entry = byEntity.popLast() {
            guard entry.changes.capacity <= Self.keptCapacity else { continue }
            entry.changes.removeAll(keepingCapacity: true)
            spareTables.append(entry.changes)
        }
        order.removeAll(keepingCapacity: order.capacity <= Self.keptCapacity)
        count = 0
    }

    /// Where one pending change is: its entity's table of changes and its entry there. Valid until the changes
    /// change (a record, forget or removal).
    struct Location {
        /// The model type.
        let entity: EntityKey
        /// The model's ID.
        let id: UUID
        /// The position of the entity's table in ``PendingChanges/byEntity``.
        fileprivate let table: Int
        /// The change's entry in that table.
        fileprivate let entry: [ModelKey: Change].Index
    }

    /// Where the changes are, in the order a save writes them: entities in the order they were first changed, and
    /// within an entity, models in key order (which appends time-ordered IDs at the end of the tree).
    ///
    /// Locations rather than the changes: copying a change retains its model, and the models of a large save may no
    /// longer be in the processor's caches by then, so a list of copies touched each of them once more than the
    /// save's write of it does (3 to 4% of a save's instructions). A save reads each change at its location
    /// (``change(at:)``) where it writes it.
    var inSaveOrder: [Location] {
        var entityOrder: [EntityKey: Int] = [:]
        for (rank, entry) in byEntity.enumerated() { entityOrder[entry.entity] = rank }
        // Sorted as plain keys (entity rank, the ID's bytes as two integers, computed once), which move and compare
        // cheaply, rather than as changes; a context's tracked objects come in the order of its identity map, not of
        // their IDs.
        let keys = order.map { entity, id in
            let (high, low) = id.orderedHalves
            return (rank: entityOrder[entity] ?? 0, high: high, low: low, entity: entity, id: id)
        }
        .sorted { lhs, rhs in (lhs.rank, lhs.high, lhs.low) < (rhs.rank, rhs.high, rhs.low) }
        var locations: [Location] = []
        locations.reserveCapacity(keys.count)
        // An ID listed twice (recorded again after it was forgotten) is adjacent to itself, and taken once.
        var previous: (entity: EntityKey, id: UUID)?
        for key in keys {
            if let previous, previous.entity == key.entity, previous.id == key.id { continue }
            previous = (key.entity, key.id)
            let table = key.rank
            if let entry = byEntity[table].changes.index(forKey: ModelKey(key.id)) {
                locations.append(Location(entity: key.entity, id: key.id, table: table, entry: entry))
            }
        }
        return locations
    }

    /// The change at `location`, which must be one of ``inSaveOrder``'s since the last change of the changes.
    func change(at location: Location) -> Change {
        byEntity[location.table].changes.values[location.entry]
    }

    /// The pending state of one model: `.some(model)` for an insert, `.some(nil)` for a delete, `nil` when the
    /// context has not changed it.
    func state<M: StoredModel>(of type: M.Type, id: UUID) -> M?? {
        switch changesByID(of: EntityKey(M.self))?[ModelKey(id)] {
        case .insert(let model): .some(model as? M)
        case .delete: .some(nil)
        case nil: nil
        }
    }

    /// The pending changes of one entity: a model to insert, or `nil` for a delete, by ID.
    func changes<M: StoredModel>(of type: M.Type) -> [UUID: M?] {
        guard let changes = changesByID(of: EntityKey(M.self)) else { return [:] }
        var byID: [UUID: M?] = [:]
        byID.reserveCapacity(changes.count)
        for (key, change) in changes {
            // `.some`: a `nil` here is a delete, which stays in the result.
            if case .insert(let model) = change { byID[key.id] = .some(model as? M) } else { byID[key.id] = .some(nil) }
        }
        return byID
    }

    /// Whether the model of type `M` with `id` has a pending change.
    func contains<M: StoredModel>(_ type: M.Type, id: UUID) -> Bool {
        changesByID(of: EntityKey(M.self))?.index(forKey: ModelKey(id)) != nil
    }

    /// Whether the context changed any model of `type`.
    func hasChanges<M: StoredModel>(of type: M.Type) -> Bool {
        changesByID(of: EntityKey(M.self))?.isEmpty == false
    }

    // MARK: - The overlay

    /// Lookups by ID, in the order of `ids`, with pending inserts in place of what the store holds and pending deletes
    /// as `nil`.
    /// - Parameters:
    ///   - stored: What the store holds for each of `ids`, in the same order.
    ///   - ids: The IDs looked up.
    func overlaid<M: StoredModel>(_ stored: [M?], ids: [UUID]) -> [M?] {
        guard hasChanges(of: M.self) else { return stored }
        var results = stored
        for (position, id) in ids.enumerated() {
            if let state = state(of: M.self, id: id) { results[position] = state }
        }
        return results
    }

    /// The models that match a fetch: the stored matches without the models the context changed, plus the pending
    /// inserts that match, in no particular order.
    /// - Parameters:
    ///   - stored: Every stored model that matches, unpaged.
    ///   - matches: Whether a pending model matches the fetch.
    /// - Throws: What `matches` throws.
    func overlaid<M: StoredModel>(_ stored: [M], matching matches: (M) throws -> Bool) rethrows -> [M] {
        let changes = changes(of: M.self)
        guard !changes.isEmpty else { return stored }
        var results = stored
        results.removeAll { changes[$0.id] != nil }
        for case .some(let model) in changes.values where try matches(model) { results.append(model) }
        return results
    }

    /// The models that refer to each of `parentIDs` through a field, with the context's changes: a changed model
    /// leaves the lists it was stored in, and a pending insert joins the list of each parent it refers to. Each list
    /// is in key order; parents without referrers are absent.
    /// - Parameters:
    ///   - stored: The stored referrers by parent.
    ///   - parentIDs: The parents asked for.
    ///   - references: The IDs a referrer's field holds.
    func overlaid<Child: StoredModel>(
        _ stored: [UUID: [Child]],
        parents parentIDs: [UUID],
        references: (Child) -> [UUID]
    ) -> [UUID: [Child]] {
        let changes = changes(of: Child.self)
        guard !changes.isEmpty else { return stored }
        let parents = Set(parentIDs)
        var result: [UUID: [Child]] = [:]
        for (parent, children) in stored {
            let kept = children.filter { changes[$0.id] == nil }
            if !kept.isEmpty { result[parent] = kept }
        }
        var added = Set<UUID>()
        for case .some(let child) in changes.values {
            for parent in Set(references(child)) where parents.contains(parent) {
                result[parent, default: []].append(child)
                added.insert(parent)
            }
        }
        for parent in added { result[parent]?.sortByID() }
        return result
    }
}
