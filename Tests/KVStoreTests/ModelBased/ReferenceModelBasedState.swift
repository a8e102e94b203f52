import Foundation
import KVStore

/// The plain in-memory reference of the reference models (`RefProject`, `RefTask`, `RefTag`) that the mixed
/// model-based test holds a context to: their values by ID, and what a context does to them written out directly (a
/// project's cascade to its tasks, a tag's nullify of its tasks' tags, both sides of each relationship).
struct ReferenceModelBasedState: Equatable {
    /// A project's values.
    struct Project: Equatable {
        /// Its name.
        var name: String
    }

    /// A task's values, its relationships as the IDs its record stores.
    struct Task: Equatable {
        /// Its title.
        var title: String
        /// Its priority (indexed).
        var priority: Int
        /// Whether it is done.
        var isDone: Bool
        /// The project it is in.
        var projectID: UUID?
        /// Its tags, in the order they were added.
        var tagIDs: [UUID]
    }

    /// A tag's values.
    struct Tag: Equatable {
        /// Its name.
        var name: String
    }

    /// The projects by ID.
    var projects: [UUID: Project] = [:]
    /// The tasks by ID.
    var tasks: [UUID: Task] = [:]
    /// The tags by ID.
    var tags: [UUID: Tag] = [:]

    /// Every ID of the three entities.
    var allIDs: Set<UUID> {
        Set(projects.keys).union(tasks.keys).union(tags.keys)
    }

    /// Deletes the project with `id` and, by its cascade, the tasks in it.
    ///
    /// - Returns: The IDs of the tasks the cascade deleted.
    @discardableResult
    mutating func deleteProject(_ id: UUID) -> [UUID] {
        projects[id] = nil
        let children = tasks.filter { $0.value.projectID == id }.map(\.key)
        for child in children { tasks[child] = nil }
        return children
    }

    /// Deletes the tag with `id`, and by its nullify takes it out of every task's tags.
    mutating func deleteTag(_ id: UUID) {
        tags[id] = nil
        for (taskID, task) in tasks where task.tagIDs.contains(id) {
            tasks[taskID]?.tagIDs.removeAll { $0 == id }
        }
    }

    /// The tasks in the project with `id`: its derived `tasks` list, in key order.
    func tasks(in project: UUID) -> [UUID] {
        tasks.filter { $0.value.projectID == project }.map(\.key).sorted { $0.precedesInKeyOrder($1) }
    }

    /// The tasks tagged with `tag`: its derived `tasks` list, in key order.
    func tasks(taggedWith tag: UUID) -> [UUID] {
        tasks.filter { $0.value.tagIDs.contains(tag) }.map(\.key).sorted { $0.precedesInKeyOrder($1) }
    }

    /// The state that fetched objects show: their values, their relationships as the IDs they store.
    init(projects: [RefProject], tasks: [RefTask], tags: [RefTag]) {
        for project in projects { self.projects[project.id] = Project(name: project.name) }
        for task in tasks {
            self.tasks[task.id] = Task(
                title: task.title, priority: task.priority, isDone: task.isDone, projectID: task.$project.id,
                tagIDs: task.$tags.ids)
        }
        for tag in tags { self.tags[tag.id] = Tag(name: tag.name) }
    }

    /// An empty state.
    init() {}

    /// How `other` (what a context shows) differs from this reference, briefly.
    func differences(from other: ReferenceModelBasedState) -> String {
        var lines: [String] = []
        func compare<V: Equatable>(_ name: String, _ mine: [UUID: V], _ theirs: [UUID: V]) {
            for id in Set(mine.keys).union(theirs.keys).sorted(by: { $0.precedesInKeyOrder($1) })
            where mine[id] != theirs[id] {
                lines.append(
                    "\(name) \(id): reference \(mine[id].map { "\($0)" } ?? "none"), "
                        + "context \(theirs[id].map { "\($0)" } ?? "none")")
            }
        }
        compare("project", projects, other.projects)
        compare("task", tasks, other.tasks)
        compare("tag", tags, other.tags)
        return lines.prefix(10).joined(separator: "\n")
    }
}
