import Foundation

/// Collects what a write transaction changes, when someone observes the container.
///
/// It keeps the log of ``ChangeSet/changes`` and derives the sets from it when the transaction ends. A model's entry
/// is found through `positions`; an entry dropped (a model inserted, then deleted) leaves a `nil` until then.
final class ChangeCollector {
    private let transactionID: Int
    private var entries: [ChangeSet.Change?] = []
    /// The index in `entries` of each model's latest entry, by entity name and ID.
    private var positions: [String: [UUID: Int]] = [:]

    /// The deleted model whose `nullify` rule is rewriting each referrer, by entity name: set by the delete engine
    /// while it applies the rules, so a save it makes is logged as `nullified`.
    var nullifying: [String: [UUID: ChangeSet.ModelID]] = [:]
    /// The deleted model whose `cascade` rule reached each model, by entity name: set by the delete engine while it
    /// deletes, so a delete it makes is logged as `cascaded`.
    var cascading: [String: [UUID: ChangeSet.ModelID]] = [:]

    /// Whether deletes keep the values their entities preserve on deletion: set when the store records history.
    let keepsDeletedValues: Bool
    /// The values kept of each deleted model, for its history tombstone.
    private(set) var keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]] = [:]

    init(transactionID: Int, keepsDeletedValues: Bool = false) {
        self.transactionID = transactionID
        self.keepsDeletedValues = keepsDeletedValues
    }

    /// The changes logged so far, in order, without the sets ``changes`` derives.
    var changeLog: [ChangeSet.Change] { entries.compactMap { $0 } }

    /// Keeps `values`, the fields a deleted model's entity preserves, for its tombstone.
    func keep(_ values: [(name: String, value: RecordValue)], of id: UUID, in entity: String) {
        keptValues[ChangeSet.ModelID(entity: entity, id: id)] = values
    }

    /// What the transaction changed so far.
    var changes: ChangeSet {
        var set = ChangeSet(transactionID: transactionID)
        set.changes = entries.compactMap { $0 }
        for change in set.changes {
            switch change.kind {
            case .inserted: set.inserted[change.entity, default: []].insert(change.id)
            case .updated, .nullified: set.updated[change.entity, default: []].insert(change.id)
            case .deleted, .cascaded: set.deleted[change.entity, default: []].insert(change.id)
            }
        }
        return set
    }

    /// The number of entries so far, dropped ones included: a mark for ``moveToEnd(_:)``.
    var entryCount: Int { entries.count }

    func saved(_ id: UUID, in entity: String, replacing: Bool) {
        // A model saved again keeps its first entry; one deleted before is a new model, with an entry of its own.
        if let position = positions[entity]?[id], entries[position]?.isSave == true { return }
        let kind: ChangeSet.Change.Kind
        if !replacing {
            kind = .inserted
        } else if let deleted = nullifying[entity]?[id] {
            kind = .nullified(by: deleted)
        } else {
            kind = .updated
        }
        positions[entity, default: [:]][id] = entries.count
        entries.append(ChangeSet.Change(kind, entity: entity, id: id))
    }

    func deleted(_ id: UUID, in entity: String) {
        if let position = positions[entity]?[id], let entry = entries[position], entry.isSave {
            entries[position] = nil
            // A model inserted and deleted in one transaction leaves no trace.
            if entry.kind == .inserted {
                positions[entity]?[id] = nil
                return
            }
        }
        let kind: ChangeSet.Change.Kind = cascading[entity]?[id].map { .cascaded(from: $0) } ?? .deleted
        positions[entity, default: [:]][id] = entries.count
        entries.append(ChangeSet.Change(kind, entity: entity, id: id))
    }

    /// Moves the entries in `range` after those that follow it, keeping the order within each part.
    func moveToEnd(_ range: Range<Int>) {
        guard !range.isEmpty, range.upperBound < entries.count else { return }
        let moved = Array(entries[range])
        let following = Array(entries[range.upperBound...])
        entries.replaceSubrange(range.lowerBound..., with: following + moved)
        for position in range.lowerBound..<entries.count {
            guard let entry = entries[position] else { continue }
            let old =
                position < range.lowerBound + following.count
                ? range.upperBound + (position - range.lowerBound)
                : range.lowerBound + (position - range.lowerBound - following.count)
            // Only a model's latest entry is found through `positions`.
            if positions[entry.entity]?[entry.id] == old { positions[entry.entity]?[entry.id] = position }
        }
    }
}
