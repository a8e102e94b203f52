import Foundation
import KVStore

/// What one committed transaction must have recorded in the store's change history: how it changed each model, and
/// the values each deleted model's tombstone keeps.
struct ExpectedHistoryEntry {
    /// A value a tombstone keeps, as the crash tests' models declare them.
    enum KeptValue: Equatable, CustomStringConvertible {
        case text(String)
        case integer(Int)

        var description: String {
            switch self {
            case .text(let text): "\"\(text)\""
            case .integer(let number): String(number)
            }
        }

        /// The value `tombstone` keeps for `name`, read as the type of this one.
        func read(_ name: String, from tombstone: HistoryTombstone) throws -> KeptValue? {
            switch self {
            case .text: try tombstone.value(of: name, as: String.self).map(KeptValue.text)
            case .integer: try tombstone.value(of: name, as: Int.self).map(KeptValue.integer)
            }
        }
    }

    /// What the transaction was, for reports: `transaction 12 (delete a task)`.
    var label: String
    /// How the transaction changed each model.
    var changes: [ChangeSet.ModelID: ChangeSet.Change.Kind]
    /// The values each deleted model's tombstone keeps, by field name.
    var kept: [ChangeSet.ModelID: [String: KeptValue]] = [:]

    /// Whether the transaction changed no model, and so records no entry.
    var isEmpty: Bool {
        changes.isEmpty
    }

    /// The entry of a transaction that made `changes`, whose deleted models keep `kept`.
    init(
        label: String, changes: [ChangeSet.ModelID: ChangeSet.Change.Kind],
        kept: [ChangeSet.ModelID: [String: KeptValue]] = [:]
    ) {
        self.label = label
        self.changes = changes
        self.kept = kept
    }

    /// The entry of a `crashtest run` transaction that applied `delta` to `before`.
    ///
    /// The delta does not say how each model changed; the state before it does, with the writer's delete rules: a
    /// written model is inserted when `before` lacks it, rewritten by `nullify` when it was assigned to a person the
    /// transaction deletes and no longer is, updated otherwise; a deleted task is `cascaded` from its project when
    /// the transaction deletes that project, deleted otherwise.
    init(label: String, delta: Delta, before: StoreState) {
        self.label = label
        changes = [:]
        let deletedProjects = Set(delta.deletedProjects)
        let deletedPeople = Set(delta.deletedPeople)
        for project in delta.projects {
            changes[Self.model(project)] = before.projects[project.id] == nil ? .inserted : .updated
        }
        for person in delta.people {
            changes[Self.model(person)] = before.people[person.id] == nil ? .inserted : .updated
        }
        for task in delta.tasks {
            if let old = before.tasks[task.id] {
                if let assignee = old.assigneeID, deletedPeople.contains(assignee), task.assigneeID == nil {
                    changes[Self.model(task)] = .nullified(by: ChangeSet.ModelID(Person.self, id: assignee))
                } else {
                    changes[Self.model(task)] = .updated
                }
            } else {
                changes[Self.model(task)] = .inserted
            }
        }
        for id in delta.deletedProjects {
            let model = ChangeSet.ModelID(Project.self, id: id)
            changes[model] = .deleted
            if let project = before.projects[id] { kept[model] = ["name": .text(project.name)] }
        }
        for id in delta.deletedPeople {
            let model = ChangeSet.ModelID(Person.self, id: id)
            changes[model] = .deleted
            if let person = before.people[id] { kept[model] = ["name": .text(person.name)] }
        }
        for id in delta.deletedTasks {
            let model = ChangeSet.ModelID(Task.self, id: id)
            let task = before.tasks[id]
            if let project = task?.projectID, deletedProjects.contains(project) {
                changes[model] = .cascaded(from: ChangeSet.ModelID(Project.self, id: project))
            } else {
                changes[model] = .deleted
            }
            if let task { kept[model] = ["title": .text(task.title), "priority": .integer(task.priority)] }
        }
    }

    private static func model<M: StoredModel>(_ model: M) -> ChangeSet.ModelID {
        ChangeSet.ModelID(M.self, id: model.id)
    }

    /// How `entry` differs from this expectation, one line per sort of difference (naming at most `limit` models
    /// each); empty when it matches.
    func differences(from entry: HistoryEntry, limit: Int = 5) -> [String] {
        var found: [ChangeSet.ModelID: ChangeSet.Change.Kind] = [:]
        var repeated: [String] = []
        for change in entry.changes {
            if found.updateValue(change.kind, forKey: change.model) != nil { repeated.append("\(change.model)") }
        }
        let missing = changes.filter { found[$0.key] == nil }.map { "\($0.key) \(Self.text($0.value))" }
        let extra = found.filter { changes[$0.key] == nil }.map { "\($0.key) \(Self.text($0.value))" }
        let wrongKinds = changes.compactMap { model, kind in
            found[model].flatMap { $0 == kind ? nil : "\(model) is \(Self.text($0)), not \(Self.text(kind))" }
        }
        return Self.summary("models named twice", repeated, limit: limit)
            + Self.summary("changes missing", missing, limit: limit)
            + Self.summary("changes the transaction did not make", extra, limit: limit)
            + Self.summary("wrong kinds", wrongKinds, limit: limit)
            + tombstoneDifferences(entry, found: found, limit: limit)
    }

    /// How the tombstones of `entry` differ from its deletes and the values they must keep.
    private func tombstoneDifferences(
        _ entry: HistoryEntry, found: [ChangeSet.ModelID: ChangeSet.Change.Kind], limit: Int
    ) -> [String] {
        var deletes: [ChangeSet.ModelID: ChangeSet.ModelID?] = [:]
        for (model, kind) in found {
            switch kind {
            case .deleted: deletes[model] = .some(nil)
            case .cascaded(let from): deletes[model] = from
            default: break
            }
        }
        var tombstones: [ChangeSet.ModelID: HistoryTombstone] = [:]
        for tombstone in entry.tombstones {
            tombstones[ChangeSet.ModelID(entity: tombstone.entity, id: tombstone.id)] = tombstone
        }
        var lines: [String] = []
        if entry.tombstones.count != deletes.count {
            lines.append("\(entry.tombstones.count) tombstones for \(deletes.count) deletes")
        }
        let orphans = tombstones.keys.filter { deletes[$0] == nil }.map { "\($0)" }
        var wrong: [String] = []
        for (model, cause) in deletes {
            guard let tombstone = tombstones[model] else {
                wrong.append("\(model) has no tombstone")
                continue
            }
            if tombstone.cascadedFrom != cause {
                wrong.append(
                    "\(model) is cascaded from \(tombstone.cascadedFrom.map { "\($0)" } ?? "nothing"), "
                        + "not \(cause.map { "\($0)" } ?? "nothing")")
            }
            guard let values = kept[model] else { continue }
            if tombstone.fieldNames != values.keys.sorted() {
                wrong.append("\(model) keeps \(tombstone.fieldNames), not \(values.keys.sorted())")
            }
            for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                do {
                    let stored = try value.read(name, from: tombstone)
                    if stored != value {
                        wrong.append("\(model) keeps \(name) \(stored.map { "\($0)" } ?? "nil"), not \(value)")
                    }
                } catch {
                    wrong.append("\(model)'s kept \(name) does not read: \(error)")
                }
            }
        }
        return lines + Self.summary("tombstones of models not deleted", orphans, limit: limit)
            + Self.summary("wrong tombstones", wrong, limit: limit)
    }

    /// `what: a, b, c and 2 more`, or nothing for no items.
    private static func summary(_ what: String, _ items: [String], limit: Int) -> [String] {
        guard !items.isEmpty else { return [] }
        let sorted = items.sorted()
        let more = sorted.count > limit ? " and \(sorted.count - limit) more" : ""
        return ["\(what): \(sorted.prefix(limit).joined(separator: ", "))\(more)"]
    }

    /// A change's kind as a report says it: `inserted`, `cascaded from Project 5F0C…`.
    static func text(_ kind: ChangeSet.Change.Kind) -> String {
        switch kind {
        case .inserted: "inserted"
        case .updated: "updated"
        case .nullified(let by): "nullified by \(by)"
        case .deleted: "deleted"
        case .cascaded(let from): "cascaded from \(from)"
        }
    }
}
