import Foundation
import KVStore

/// A task as a struct model: the struct side of the class/struct comparison, the twin of ``TaskObject``.
///
/// The same fields in the same order as the class, the same `dueAt` index and the same `project` relationship, so
/// that both sides store the same records and maintain the same indexes.
struct TaskValue: Model {
    var id: UUID
    var title: String
    var isDone: Bool
    var createdAt: Date
    var dueAt: Date
    var project: UUID?

    /// Indexed on the due date; tasks belong to a project through `project`, a to-one relationship with its index.
    static let entity = Entity<TaskValue>(
        name: "Task", indexes: [.index(\.dueAt)],
        relationships: [.toOne("project", \.project, to: ProjectValue.self, inverse: "tasks")])
}

/// A project as a struct model, the twin of ``ProjectObject``; deleting one deletes its tasks.
struct ProjectValue: Model {
    var id: UUID
    var name: String

    /// Deleting a project deletes its tasks.
    static let entity = Entity<ProjectValue>(
        name: "Project",
        relationships: [.toMany("tasks", of: TaskValue.self, inverse: \.project, deleteRule: .cascade)])
}

extension TaskValue {
    /// The task with `record`'s values.
    init(_ record: TaskRecord) {
        self.init(
            id: record.id, title: record.title, isDone: record.isDone, createdAt: record.createdAt,
            dueAt: record.dueAt, project: record.projectID)
    }
}

extension ProjectValue {
    /// The project with `record`'s values.
    init(_ record: ProjectRecord) {
        self.init(id: record.id, name: record.name)
    }
}

extension TaskValue: FieldCodable {
    /// Reads a task's fields directly.
    init(fields: borrowing FieldReader) throws {
        self.init(
            id: try fields.decode(UUID.self, forKey: "id"),
            title: try fields.decode(String.self, forKey: "title"),
            isDone: try fields.decode(Bool.self, forKey: "isDone"),
            createdAt: try fields.decode(Date.self, forKey: "createdAt"),
            dueAt: try fields.decode(Date.self, forKey: "dueAt"),
            project: try fields.decodeIfPresent(UUID.self, forKey: "project"))
    }

    /// Writes a task's fields directly, in the order of its coding keys.
    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(title, forKey: "title")
        try fields.encode(isDone, forKey: "isDone")
        try fields.encode(createdAt, forKey: "createdAt")
        try fields.encode(dueAt, forKey: "dueAt")
        try fields.encodeIfPresent(project, forKey: "project")
    }
}

extension ProjectValue: FieldCodable {
    /// Reads a project's fields directly.
    init(fields: borrowing FieldReader) throws {
        self.init(
            id: try fields.decode(UUID.self, forKey: "id"), name: try fields.decode(String.self, forKey: "name"))
    }

    /// Writes a project's fields directly.
    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(name, forKey: "name")
    }
}
