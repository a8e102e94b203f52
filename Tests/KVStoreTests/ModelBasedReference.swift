import Foundation
import KVStore

/// The plain in-memory reference the model-based tests hold the store to: every record by entity and ID, and the
/// store's semantics written out directly (upserts, unique names, references that must resolve, delete rules).
struct ModelBasedReference: Equatable {
    var projects: [UUID: MBProject] = [:]
    var tasks: [UUID: MBTask] = [:]
    var subtasks: [UUID: MBSubtask] = [:]
    var tags: [UUID: MBTag] = [:]
    var people: [UUID: MBPerson] = [:]
    var owners: [UUID: MBOwner] = [:]

    /// One model to save.
    enum Upsert {
        case project(MBProject)
        case task(MBTask)
        case subtask(MBSubtask)
        case tag(MBTag)
        case person(MBPerson)
        case owner(MBOwner)
    }

    /// The IDs to delete, by entity.
    struct Deletes {
        var projects: [UUID] = []
        var tasks: [UUID] = []
        var subtasks: [UUID] = []
        var tags: [UUID] = []
        var people: [UUID] = []
        var owners: [UUID] = []

        var isEmpty: Bool {
            projects.isEmpty && tasks.isEmpty && subtasks.isEmpty && tags.isEmpty && people.isEmpty && owners.isEmpty
        }
    }

    /// How a transaction must fail; nothing of it is written then.
    enum Failure: Error, Equatable {
        case uniqueViolation
        case missingReference
        case deleteDenied

        /// The store's error of this kind.
        var error: KVStoreError {
            switch self {
            case .uniqueViolation: .uniqueViolation
            case .missingReference: .missingReference
            case .deleteDenied: .deleteDenied
            }
        }
    }

    /// Applies one transaction as the store does: the upserts in order, then the deletes in one pass of the delete
    /// rules, then the check that every reference of the saved models that remain resolves. On failure nothing
    /// changes.
    ///
    /// - Returns: The IDs deleted (requested or reached by a cascade), tasks by entity.
    @discardableResult
    mutating func apply(_ upserts: [Upsert], deleting deletes: Deletes = Deletes()) throws(Failure) -> Deleted {
        var next = self
        for upsert in upserts { try next.upsert(upsert) }
        let deleted = deletes.isEmpty ? Deleted() : try next.delete(deletes)
        for upsert in upserts { try next.verifyReferences(of: upsert) }
        self = next
        return deleted
    }

    /// What a delete removed, by entity.
    struct Deleted {
        var projects: Set<UUID> = []
        var tasks: Set<UUID> = []
        var subtasks: Set<UUID> = []
        var tags: Set<UUID> = []
        var people: Set<UUID> = []
        var owners: Set<UUID> = []
    }

    private mutating func upsert(_ upsert: Upsert) throws(Failure) {
        switch upsert {
        case .project(let project):
            if projects.values.contains(where: { $0.name == project.name && $0.id != project.id }) {
                throw .uniqueViolation
            }
            projects[project.id] = project
        case .task(let task): tasks[task.id] = task
        case .subtask(let subtask): subtasks[subtask.id] = subtask
        case .tag(let tag): tags[tag.id] = tag
        case .person(let person): people[person.id] = person
        case .owner(let owner): owners[owner.id] = owner
        }
    }

    /// The references of a saved model must name stored models, unless the model is gone (deleted later in the
    /// transaction). It is the model as it stands at the end of the transaction that counts, nullified references
    /// included.
    private func verifyReferences(of upsert: Upsert) throws(Failure) {
        switch upsert {
        case .task(let saved):
            guard let task = tasks[saved.id] else { return }
            if let id = task.projectID, projects[id] == nil { throw .missingReference }
            if let id = task.assigneeID, people[id] == nil { throw .missingReference }
            if task.tagIDs.contains(where: { tags[$0] == nil }) { throw .missingReference }
        case .subtask(let saved):
            guard let subtask = subtasks[saved.id] else { return }
            if let id = subtask.taskID, tasks[id] == nil { throw .missingReference }
        case .project, .tag, .person, .owner:
            break
        }
    }

    private mutating func delete(_ deletes: Deletes) throws(Failure) -> Deleted {
        var deleted = Deleted()
        deleted.projects = Set(deletes.projects.filter { projects[$0] != nil })
        deleted.tasks = Set(deletes.tasks.filter { tasks[$0] != nil })
        // cascade: a project's tasks go with it.
        for task in tasks.values where task.projectID.map(deleted.projects.contains) == true {
            deleted.tasks.insert(task.id)
        }
        deleted.subtasks = Set(deletes.subtasks.filter { subtasks[$0] != nil })
        deleted.tags = Set(deletes.tags.filter { tags[$0] != nil })
        deleted.people = Set(deletes.people.filter { people[$0] != nil })
        deleted.owners = Set(deletes.owners.filter { owners[$0] != nil })
        // deny: a task with subtasks that stay cannot go.
        for subtask in subtasks.values where !deleted.subtasks.contains(subtask.id) {
            if let task = subtask.taskID, deleted.tasks.contains(task) { throw .deleteDenied }
        }
        // nullify: the surviving tasks lose their references to deleted tags and people. noAction: owners' tasks
        // keep theirs.
        for (id, var task) in tasks where !deleted.tasks.contains(id) {
            let before = task
            task.tagIDs.removeAll { deleted.tags.contains($0) }
            if let person = task.assigneeID, deleted.people.contains(person) { task.assigneeID = nil }
            if task != before { tasks[id] = task }
        }
        for id in deleted.projects { projects[id] = nil }
        for id in deleted.tasks { tasks[id] = nil }
        for id in deleted.subtasks { subtasks[id] = nil }
        for id in deleted.tags { tags[id] = nil }
        for id in deleted.people { people[id] = nil }
        for id in deleted.owners { owners[id] = nil }
        return deleted
    }

    /// Every record of the store, read in one transaction.
    static func read(from container: ModelContainer) throws -> ModelBasedReference {
        // The fetches are spelled out: a nested function capturing the borrowed transaction crashes the compiler's
        // move-only checker (Swift 6.3.1).
        try container.read { txn in
            ModelBasedReference(
                projects: byID(try txn.fetch(FetchDescriptor<MBProject>())),
                tasks: byID(try txn.fetch(FetchDescriptor<MBTask>())),
                subtasks: byID(try txn.fetch(FetchDescriptor<MBSubtask>())),
                tags: byID(try txn.fetch(FetchDescriptor<MBTag>())),
                people: byID(try txn.fetch(FetchDescriptor<MBPerson>())),
                owners: byID(try txn.fetch(FetchDescriptor<MBOwner>())))
        }
    }

    private static func byID<M: Model>(_ models: [M]) -> [UUID: M] {
        Dictionary(uniqueKeysWithValues: models.map { ($0.id, $0) })
    }

    /// How `store` differs from this reference, briefly.
    func differences(from store: ModelBasedReference) -> String {
        var lines: [String] = []
        func compare<M: Equatable>(_ name: String, _ mine: [UUID: M], _ theirs: [UUID: M]) {
            for id in Set(mine.keys).union(theirs.keys) where mine[id] != theirs[id] {
                lines.append(
                    "\(name) \(id): reference \(mine[id].map { "\($0)" } ?? "none"), "
                        + "store \(theirs[id].map { "\($0)" } ?? "none")")
            }
        }
        compare("project", projects, store.projects)
        compare("task", tasks, store.tasks)
        compare("subtask", subtasks, store.subtasks)
        compare("tag", tags, store.tags)
        compare("person", people, store.people)
        compare("owner", owners, store.owners)
        return lines.prefix(10).joined(separator: "\n")
    }
}
