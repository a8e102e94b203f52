import Foundation
import KVStore

/// What one transaction changes: the full records it writes and the IDs it deletes, delete rules included.
struct Delta: Codable, Equatable {
    /// Projects inserted or replaced, whole.
    var projects: [Project] = []
    /// People inserted or replaced, whole.
    var people: [Person] = []
    /// Tasks inserted or replaced, whole.
    var tasks: [Task] = []
    /// IDs of the projects deleted.
    var deletedProjects: [UUID] = []
    /// IDs of the people deleted.
    var deletedPeople: [UUID] = []
    /// IDs of the tasks deleted, including those a cascade reaches.
    var deletedTasks: [UUID] = []

    /// How many records the transaction writes or deletes.
    var size: Int {
        projects.count + people.count + tasks.count + deletedProjects.count + deletedPeople.count
            + deletedTasks.count
    }
}

/// Every record of a crash-test store, by entity and ID: the expected state, or a snapshot of the real one.
struct StoreState: Equatable {
    /// The projects by ID.
    var projects: [UUID: Project] = [:]
    /// The people by ID.
    var people: [UUID: Person] = [:]
    /// The tasks by ID.
    var tasks: [UUID: Task] = [:]

    /// The number of records of all entities.
    var count: Int {
        projects.count + people.count + tasks.count
    }

    /// Applies a transaction's changes: deletes first, then writes, as the records are disjoint.
    mutating func apply(_ delta: Delta) {
        for id in delta.deletedProjects { projects[id] = nil }
        for id in delta.deletedPeople { people[id] = nil }
        for id in delta.deletedTasks { tasks[id] = nil }
        for project in delta.projects { projects[project.id] = project }
        for person in delta.people { people[person.id] = person }
        for task in delta.tasks { tasks[task.id] = task }
    }

    /// The state after `delta`.
    func applying(_ delta: Delta) -> StoreState {
        var copy = self
        copy.apply(delta)
        return copy
    }

    /// Reads every record of the store in one read transaction.
    static func read(from container: ModelContainer) throws -> StoreState {
        try container.read { txn in
            var state = StoreState()
            for project in try txn.fetch(FetchDescriptor<Project>()) { state.projects[project.id] = project }
            for person in try txn.fetch(FetchDescriptor<Person>()) { state.people[person.id] = person }
            for task in try txn.fetch(FetchDescriptor<Task>()) { state.tasks[task.id] = task }
            return state
        }
    }

    /// A short account of how `other` differs from this state, for a problem report.
    func differences(from other: StoreState, limit: Int = 5) -> String {
        var lines: [String] = []
        func compare<M: Equatable>(_ name: String, _ mine: [UUID: M], _ theirs: [UUID: M]) {
            let missing = mine.keys.filter { theirs[$0] == nil }
            let extra = theirs.keys.filter { mine[$0] == nil }
            let changed = mine.keys.filter { theirs[$0] != nil && theirs[$0] != mine[$0] }
            if !missing.isEmpty { lines.append("\(missing.count) \(name) missing, e.g. \(missing.prefix(limit))") }
            if !extra.isEmpty { lines.append("\(extra.count) \(name) unexpected, e.g. \(extra.prefix(limit))") }
            for id in changed.prefix(limit) {
                lines.append(
                    "\(name) \(id): expected \(String(describing: mine[id])), found \(String(describing: theirs[id]))")
            }
        }
        compare("projects", projects, other.projects)
        compare("people", people, other.people)
        compare("tasks", tasks, other.tasks)
        return lines.isEmpty ? "no differences" : lines.joined(separator: "\n    ")
    }
}
