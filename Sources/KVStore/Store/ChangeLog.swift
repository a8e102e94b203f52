import Foundation

/// A write transaction's changes as its collector logs them and its history entry stores them: entity names once,
/// each change as an entity index, a kind code and an ID, without a string per change.
///
/// A transaction logs a change per model it saves or deletes; with ``ChangeSet/Change`` values, each carried its
/// entity's name (a reference count to keep) and took more than twice the memory. ``changes`` makes those values
/// for the observers that want them.
struct ChangeLog {
    /// How a model changed, as the history stores it.
    enum Kind: UInt8 {
        case inserted, updated, nullified, deleted, cascaded

        /// Whether the change stored the model.
        var isSave: Bool { self == .inserted || self == .updated || self == .nullified }

        /// Whether a delete rule's cause goes with it.
        var hasCause: Bool { self == .nullified || self == .cascaded }
    }

    /// One change: the model's entity (an index in ``entities``) and ID, how it changed, and for a nullified or
    /// cascaded one the deleted model that caused it (an index in ``causes``).
    struct Entry {
        var id: UUID
        var entity: UInt32
        var kind: Kind
        var cause: UInt32 = 0
    }

    /// The entity names the entries and causes refer to.
    var entities: [String] = []
    /// The deleted models that delete rules acted for: an entity index and an ID.
    var causes: [(entity: UInt32, id: UUID)] = []
    /// The changes, in order.
    var entries: [Entry] = []

    /// The index of `entity` in ``entities``, added when it has none; `hint` is tried first.
    mutating func index(of entity: String, hint: Int = 0) -> UInt32 {
        if hint < entities.count, entities[hint] == entity { return UInt32(hint) }
        if let found = entities.firstIndex(of: entity) { return UInt32(found) }
        entities.append(entity)
        return UInt32(entities.count - 1)
    }

    /// Adds a change of the model of `entity` with `id`; `cause` for a nullified or cascaded one.
    mutating func append(_ kind: Kind, entity: UInt32, id: UUID, cause: ChangeSet.ModelID? = nil) {
        var entry = Entry(id: id, entity: entity, kind: kind)
        if let cause, kind.hasCause {
            entry.cause = UInt32(causes.count)
            causes.append((index(of: cause.entity), cause.id))
        }
        entries.append(entry)
    }

    /// The log of `changes`.
    init(_ changes: [ChangeSet.Change]) {
        entries.reserveCapacity(changes.count)
        var last = 0
        for change in changes {
            let entity = index(of: change.entity, hint: last)
            last = Int(entity)
            switch change.kind {
            case .inserted: append(.inserted, entity: entity, id: change.id)
            case .updated: append(.updated, entity: entity, id: change.id)
            case .nullified(let by): append(.nullified, entity: entity, id: change.id, cause: by)
            case .deleted: append(.deleted, entity: entity, id: change.id)
            case .cascaded(let from): append(.cascaded, entity: entity, id: change.id, cause: from)
            }
        }
    }

    /// An empty log.
    init() {}

    /// The cause of `entry`, a nullified or cascaded change.
    func cause(of entry: Entry) -> ChangeSet.ModelID {
        let cause = causes[Int(entry.cause)]
        return ChangeSet.ModelID(entity: entities[Int(cause.entity)], id: cause.id)
    }

    /// The change `entry` as observers see it.
    func change(_ entry: Entry) -> ChangeSet.Change {
        let entity = entities[Int(entry.entity)]
        switch entry.kind {
        case .inserted: return ChangeSet.Change(.inserted, entity: entity, id: entry.id)
        case .updated: return ChangeSet.Change(.updated, entity: entity, id: entry.id)
        case .nullified: return ChangeSet.Change(.nullified(by: cause(of: entry)), entity: entity, id: entry.id)
        case .deleted: return ChangeSet.Change(.deleted, entity: entity, id: entry.id)
        case .cascaded: return ChangeSet.Change(.cascaded(from: cause(of: entry)), entity: entity, id: entry.id)
        }
    }

    /// The changes as observers see them.
    var changes: [ChangeSet.Change] {
        entries.map(change)
    }

    /// The log with each model's changes merged: a model saved again keeps its first entry; a model deleted after a
    /// save loses that entry, and one inserted and deleted leaves no trace; a model deleted, then saved, is a new
    /// model with an entry of its own (`inserted`, since it replaced nothing).
    func merged() -> ChangeLog {
        var kept: [Entry?] = []
        kept.reserveCapacity(entries.count)
        // The index in `kept` of each model's latest entry, by entity and ID.
        var latest: [[ModelKey: Int]] = Array(repeating: [:], count: entities.count)
        for entry in entries {
            let key = ModelKey(entry.id)
            let entity = Int(entry.entity)
            let previous = latest[entity][key]
            if entry.kind.isSave {
                if let previous, kept[previous]?.kind.isSave == true { continue }
            } else if let previous, let earlier = kept[previous], earlier.kind.isSave {
                kept[previous] = nil
                if earlier.kind == .inserted {
                    latest[entity][key] = nil
                    continue
                }
            }
            latest[entity][key] = kept.count
            kept.append(entry)
        }
        var merged = self
        merged.entries = kept.compactMap { $0 }
        return merged
    }
}
