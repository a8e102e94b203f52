import Foundation
import KVStore

/// The plain in-memory reference the model-based tests hold the store to: every record by entity and ID, and the
/// store's semantics written out directly (upserts, unique names, references that must resolve, delete rules).
struct ModelBasedReference: Equatable {
    /// The projects by ID.
    var projects: [UUID: MBProject] = [:]
    /// The tasks by ID.
    var tasks: [UUID: MBTask] = [:]
    /// The subtasks by ID.
    var subtasks: [UUID: MBSubtask] = [:]
    /// The tags by ID.
    var tags: [UUID: MBTag] = [:]
    /// The people by ID.
    var people: [UUID: MBPerson] = [:]
    /// The owners by ID.
    var owners: [UUID: MBOwner] = [:]

    /// One model to save.
    enum Upsert {
        /// A project to save.
        case project(MBProject)
        /// A task to save.
        case task(MBTask)
        /// A subtask to save.
        case subtask(MBSubtask)
        /// A tag to save.
        case tag(MBTag)
        /// A person to save.
        case person(MBPerson)
        /// An owner to save.
        case owner(MBOwner)
    }

    /// The IDs to delete, by entity.
    struct Deletes {
        /// The projects to delete.
        var projects: [UUID] = []
        /// The tasks to delete.
        var tasks: [UUID] = []
        /// The subtasks to delete.
        var subtasks: [UUID] = []
        /// The tags to delete.
        var tags: [UUID] = []
        /// The people to delete.
        var people: [UUID] = []
        /// The owners to delete.
        var owners: [UUID] = []

        /// Whether there is nothing to delete.
        var isEmpty: Bool {
            projects.isEmpty && tasks.isEmpty && subtasks.isEmpty && tags.isEmpty && people.isEmpty && owners.isEmpty
        }
    }

    /// How a transaction must fail; nothing of it is written then.
    enum Failure: Error, Equatable {
        /// A project takes a name another project has.
        case uniqueViolation
        /// A saved model references a model that does not exist (and may not dangle).
        case missingReference
        /// A task with subtasks that stay would be deleted.
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
        /// The projects deleted.
        var projects: Set<UUID> = []
        /// The tasks deleted, those a cascade reached included.
        var tasks: Set<UUID> = []
        /// The subtasks deleted.
        var subtasks: Set<UUID> = []
        /// The tags deleted.
        var tags: Set<UUID> = []
        /// The people deleted.
        var people: Set<UUID> = []
        /// The owners deleted.
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
