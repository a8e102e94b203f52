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

    /// The log with each model's changes merged, for the history: what ``changes`` lists.
    var mergedLog: ChangeLog {
        state.mayRepeat ? state.log.merged() : state.log
    }

    /// Each changed model's entries, in order: ``ChangeSet/changes``.
    var changeLog: [ChangeSet.Change] {
        mergedLog.changes
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
    var entryCount: Int { state.log.entries.count }

    func saved(_ id: UUID, in entity: String, replacing: Bool) {
        state.saved(id, in: entity, replacing: replacing)
    }

    func deleted(_ id: UUID, in entity: String) {
        state.deleted(id, in: entity)
    }

    /// Moves the changes logged in `range` after those that follow it, keeping the order within each part.
    func moveToEnd(_ range: Range<Int>) {
        state.moveToEnd(range)
    }
}

/// A ``ChangeCollector``'s log of saves and deletes.
private struct LogState {
    /// Every save and delete, in order (as ``moveToEnd(_:)`` left it).
    var log = ChangeLog()
    /// The ordered halves of the last ID logged for each entity of the log, by its index.
    var lastIDs: [(UInt64, UInt64)] = []
    /// The index of the entity logged last: changes come entity by entity.
    var lastEntity = 0
    /// Whether an entity's IDs came out of ascending order, so that a model may have several changes in the log.
    var mayRepeat = false
    /// See ``ChangeCollector/nullifying``.
    var nullifying: [String: [ModelKey: ChangeSet.ModelID]] = [:] {
        didSet { causeCache = nil }
    }
    /// See ``ChangeCollector/cascading``.
    var cascading: [String: [ModelKey: ChangeSet.ModelID]] = [:] {
        didSet { causeCache = nil }
    }
    /// The causes of the entity logged last, from ``nullifying`` or ``cascading``: a rule reaches many models of one
    /// entity in a row, and each would hash the entity's name again.
    private var causeCache: (entity: String, isCascade: Bool, causes: [ModelKey: ChangeSet.ModelID]?)?

    /// The deleted model whose rule reached the model of `entity` with `id`, from ``cascading`` or ``nullifying``.
    @inline(__always)
    private mutating func cause(of id: UUID, in entity: String, cascade: Bool) -> ChangeSet.ModelID? {
        let causes: [ModelKey: ChangeSet.ModelID]?
        if let cached = causeCache, cached.isCascade == cascade, cached.entity == entity {
            causes = cached.causes
        } else {
            causes = cascade ? cascading[entity] : nullifying[entity]
            causeCache = (entity, cascade, causes)
        }
        return causes?[ModelKey(id)]
    }

    /// The index of `entity`, noting that `id` of it is logged next, and whether that breaks the ascending order of
    /// the entity's IDs.
    @inline(__always)
    mutating func note(_ id: UUID, of entity: String) -> UInt32 {
        let index = Int(log.index(of: entity, hint: lastEntity))
        lastEntity = index
        let halves = id.orderedHalves
        if index < lastIDs.count {
            // Equal IDs are not ascending: the same model again.
            if !(lastIDs[index] < halves) { mayRepeat = true }
            lastIDs[index] = halves
        } else {
            // Entities named only as causes have no IDs yet.
            while lastIDs.count < index { lastIDs.append((0, 0)) }
            lastIDs.append(halves)
        }
        return UInt32(index)
    }

    mutating func saved(_ id: UUID, in entity: String, replacing: Bool) {
        let index = note(id, of: entity)
        if !replacing {
            log.append(.inserted, entity: index, id: id)
        } else if !nullifying.isEmpty, let deleted = cause(of: id, in: entity, cascade: false) {
            log.append(.nullified, entity: index, id: id, cause: deleted)
        } else {
            log.append(.updated, entity: index, id: id)
        }
    }

    mutating func deleted(_ id: UUID, in entity: String) {
        let index = note(id, of: entity)
        if !cascading.isEmpty, let cause = cause(of: id, in: entity, cascade: true) {
            log.append(.cascaded, entity: index, id: id, cause: cause)
        } else {
            log.append(.deleted, entity: index, id: id)
        }
    }

    mutating func moveToEnd(_ range: Range<Int>) {
        guard !range.isEmpty, range.upperBound < log.entries.count else { return }
        let moved = Array(log.entries[range])
        log.entries.removeSubrange(range)
        log.entries.append(contentsOf: moved)
        // The order within an entity changed.
        mayRepeat = true
    }
}
