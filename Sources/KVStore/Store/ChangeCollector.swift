import Foundation

/// Collects what a write transaction changes, when someone observes the container or the store records history.
///
/// It logs each save and delete as it happens, with the kind it has as the model's first change (a delete rule's
/// cause included), and derives ``ChangeSet/changes`` and the sets from the log when the transaction ends. A model
/// changed more than once (saved twice, saved then deleted) has one entry in the result, or two, or none, as
/// ``ChangeSet/changes`` says: the log is merged then, through a table of each model's latest entry. Most
/// transactions change each model once, in ascending ID order within an entity (a context saves in key order;
/// time-ordered IDs are made in order): the log notes whether each entity's IDs came in strictly ascending order,
/// and when they all did no model can repeat, so the log is the result as it is and no ID is hashed at all.
final class ChangeCollector {
    private let transactionID: Int
    /// The log and what it needs to log a change, in one stored property, so that logging a change is one access to
    /// the collector (each access to a class's stored property is checked for exclusivity at run time, and a save
    /// made several).
    private var state = LogState()

    /// The deleted model whose `nullify` rule is rewriting each referrer, by entity name: set by the delete engine
    /// while it applies the rules, so a save it makes is logged as `nullified`.
    var nullifying: [String: [ModelKey: ChangeSet.ModelID]] {
        get { state.nullifying }
        _modify { yield &state.nullifying }
    }
    /// The deleted model whose `cascade` rule reached each model, by entity name: set by the delete engine while it
    /// deletes, so a delete it makes is logged as `cascaded`.
    var cascading: [String: [ModelKey: ChangeSet.ModelID]] {
        get { state.cascading }
        _modify { yield &state.cascading }
    }

    /// Whether deletes keep the values their entities preserve on deletion: set when the store records history.
    let keepsDeletedValues: Bool
    /// The values kept of each deleted model, for its history tombstone.
    private(set) var keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]] = [:]

    init(transactionID: Int, keepsDeletedValues: Bool = false) {
        self.transactionID = transactionID
        self.keepsDeletedValues = keepsDeletedValues
    }

    /// Keeps `values`, the fields a deleted model's entity preserves, for its tombstone.
    func keep(_ values: [(name: String, value: RecordValue)], of id: UUID, in entity: String) {
        keptValues[ChangeSet.ModelID(entity: entity, id: id)] = values
    }

    /// Each changed model's entries, in order: ``ChangeSet/changes``.
    var changeLog: [ChangeSet.Change] {
        state.mayRepeat ? Self.merged(state.log) : state.log
    }

    /// What the transaction changed.
    var changes: ChangeSet {
        var set = ChangeSet(transactionID: transactionID)
        set.changes = changeLog
        for change in set.changes {
            switch change.kind {
            case .inserted: set.inserted[change.entity, default: []].insert(change.id)
            case .updated, .nullified: set.updated[change.entity, default: []].insert(change.id)
            case .deleted, .cascaded: set.deleted[change.entity, default: []].insert(change.id)
            }
        }
        return set
    }

    /// The number of changes logged so far: a mark for ``moveToEnd(_:)``.
    var entryCount: Int { state.log.count }

    func saved(_ id: UUID, in entity: String, replacing: Bool) {
        state.saved(id, in: entity, replacing: replacing)
    }

    func deleted(_ id: UUID, in entity: String) {
        state.deleted(id, in: entity)
    }

    /// The log with each model's changes merged: a model saved again keeps its first entry; a model deleted after a
    /// save loses that entry, and one inserted and deleted leaves no trace; a model deleted, then saved, is a new
    /// model with an entry of its own (`inserted`, since it replaced nothing).
    private static func merged(_ log: [ChangeSet.Change]) -> [ChangeSet.Change] {
        var entries: [ChangeSet.Change?] = []
        entries.reserveCapacity(log.count)
        // The index in `entries` of each model's latest entry, by entity and ID.
        var latest: [String: [ModelKey: Int]] = [:]
        for change in log {
            let key = ModelKey(change.id)
            let previous = latest[change.entity]?[key]
            if change.isSave {
                if let previous, entries[previous]?.isSave == true { continue }
            } else if let previous, let entry = entries[previous], entry.isSave {
                entries[previous] = nil
                if entry.kind == .inserted {
                    latest[change.entity]?[key] = nil
                    continue
                }
            }
            latest[change.entity, default: [:]][key] = entries.count
            entries.append(change)
        }
        return entries.compactMap { $0 }
    }

    /// Moves the changes logged in `range` after those that follow it, keeping the order within each part.
    func moveToEnd(_ range: Range<Int>) {
        state.moveToEnd(range)
    }
}

/// A ``ChangeCollector``'s log of saves and deletes.
private struct LogState {
    /// Every save and delete, in order (as ``moveToEnd(_:)`` left it).
    var log: [ChangeSet.Change] = []
    /// The entities of the log, each with the ordered halves of the last ID logged for it: a short list searched by
    /// name, the last one found first, since changes come entity by entity.
    var entities: [(name: String, lastID: (UInt64, UInt64))] = []
    /// The index in `entities` of the entity found last.
    var lastEntity = 0
    /// Whether an entity's IDs came out of ascending order, so that a model may have several changes in the log.
    var mayRepeat = false
    /// See ``ChangeCollector/nullifying``.
    var nullifying: [String: [ModelKey: ChangeSet.ModelID]] = [:]
    /// See ``ChangeCollector/cascading``.
    var cascading: [String: [ModelKey: ChangeSet.ModelID]] = [:]

    /// Notes that `id` of `entity` is logged next, and whether it breaks the ascending order of the entity's IDs.
    @inline(__always)
    mutating func note(_ id: UUID, of entity: String) {
        let halves = id.orderedHalves
        if lastEntity < entities.count, entities[lastEntity].name == entity {
            // Equal IDs are not ascending: the same model again.
            if !(entities[lastEntity].lastID < halves) { mayRepeat = true }
            entities[lastEntity].lastID = halves
        } else if let found = entities.firstIndex(where: { $0.name == entity }) {
            lastEntity = found
            if !(entities[found].lastID < halves) { mayRepeat = true }
            entities[found].lastID = halves
        } else {
            lastEntity = entities.count
            entities.append((entity, halves))
        }
    }

    mutating func saved(_ id: UUID, in entity: String, replacing: Bool) {
        note(id, of: entity)
        let kind: ChangeSet.Change.Kind
        if !replacing {
            kind = .inserted
        } else if !nullifying.isEmpty, let deleted = nullifying[entity]?[ModelKey(id)] {
            kind = .nullified(by: deleted)
        } else {
            kind = .updated
        }
        log.append(ChangeSet.Change(kind, entity: entity, id: id))
    }

    mutating func deleted(_ id: UUID, in entity: String) {
        note(id, of: entity)
        let cause = cascading.isEmpty ? nil : cascading[entity]?[ModelKey(id)]
        log.append(ChangeSet.Change(cause.map { .cascaded(from: $0) } ?? .deleted, entity: entity, id: id))
    }

    mutating func moveToEnd(_ range: Range<Int>) {
        guard !range.isEmpty, range.upperBound < log.count else { return }
        let moved = Array(log[range])
        log.removeSubrange(range)
        log.append(contentsOf: moved)
        // The order within an entity changed.
        mayRepeat = true
    }
}
