import Foundation
import KVStore

/// A project: deleting it deletes its tasks (cascade); its name is unique, and its history tombstone keeps it.
struct Project: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    var revision = 0

    static let entity = Entity<Project>(
        indexes: [.unique(\.name)],
        relationships: [.toMany("tasks", of: Task.self, inverse: \.projectID, deleteRule: .cascade)],
        preservedOnDeletion: [\.name])
}

/// A person tasks are assigned to: deleting one unassigns their tasks (nullify); the tombstone keeps the name.
struct Person: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String

    static let entity = Entity<Person>(
        relationships: [.toMany("tasks", of: Task.self, inverse: \.assigneeID, deleteRule: .nullify)],
        preservedOnDeletion: [\.name])
}

/// A task of a project, perhaps assigned to a person; its tombstone keeps its title and priority.
struct Task: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var priority: Int
    var revision = 0
    var projectID: UUID?
    var assigneeID: UUID?

    static let entity = Entity<Task>(
        indexes: [.index(\.priority)],
        relationships: [
            .toOne("project", \.projectID, to: Project.self, inverse: "tasks"),
            .toOne("assignee", \.assigneeID, to: Person.self, inverse: "tasks"),
        ],
        preservedOnDeletion: [\.title, \.priority])
}

/// The model types of a crash-test store, in the order the container opens them.
let crashModelTypes: [any Model.Type] = [Project.self, Person.self, Task.self]
