import Foundation
import KVStore

/// A task as a reference model: the class side of the class/struct comparison (see ``ModelKindSubject``).
///
/// Its record is that of ``TaskValue``, its struct twin: the same fields in the same order, the same `dueAt` index
/// and the same `project` relationship with its index, so that both sides store the same bytes and maintain the same
/// indexes. The twins carry a `dueAt` index, which ``TaskRecord`` does not, because a class's to-one relationship is
/// not a key path a `#Predicate` can plan over: the indexed fetch of the comparison is a due-date window. Both twins
/// conform to `FieldCodable`, as kvbench's other models do, so that `--coding` codes both sides alike.
final class TaskObject: PersistentModel {
    var id: UUID
    var title: String
    var isDone: Bool
    var createdAt: Date
    var dueAt: Date
    @ToOne var project: ProjectObject?

    /// A task with `record`'s values in `project`, set as a program sets it: through the property, which adds the
    /// task to the project's list of tasks.
    convenience init(_ record: TaskRecord, project: ProjectObject?) {
        self.init(
            id: record.id, title: record.title, isDone: record.isDone, createdAt: record.createdAt,
            dueAt: record.dueAt, project: ToOne())
        self.project = project
    }

    private init(id: UUID, title: String, isDone: Bool, createdAt: Date, dueAt: Date, project: ToOne<ProjectObject>) {
        self.id = id
        self.title = title
        self.isDone = isDone
        self.createdAt = createdAt
        self.dueAt = dueAt
        _project = project
    }

    /// Indexed on the due date; its project's tasks are read through the `project` index.
    static let entity = Entity<TaskObject>(
        name: "Task", indexes: [.index(\.dueAt)], relationships: [.toOne("project", \.project, inverse: "tasks")])
}

/// A project as a reference model; deleting one deletes its tasks.
final class ProjectObject: PersistentModel {
    var id: UUID
    var name: String
    @ToMany var tasks: [TaskObject]

    /// A project with `record`'s values.
    convenience init(_ record: ProjectRecord) {
        self.init(id: record.id, name: record.name)
    }

    private init(id: UUID, name: String) {
        self.id = id
        self.name = name
    }

    /// Deleting a project deletes its tasks.
    static let entity = Entity<ProjectObject>(
        name: "Project", relationships: [.toMany("tasks", \.tasks, inverse: "project", deleteRule: .cascade)])
}

extension TaskObject: FieldCodable {
    /// Reads a task's fields directly, its relationship property as the ID the record stores.
    convenience init(fields: borrowing FieldReader) throws {
        self.init(
            id: try fields.decode(UUID.self, forKey: "id"),
            title: try fields.decode(String.self, forKey: "title"),
            isDone: try fields.decode(Bool.self, forKey: "isDone"),
            createdAt: try fields.decode(Date.self, forKey: "createdAt"),
            dueAt: try fields.decode(Date.self, forKey: "dueAt"),
            project: try fields.decode(ToOne<ProjectObject>.self, forKey: "project"))
    }

    /// Writes a task's fields directly, in the order of its coding keys.
    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(title, forKey: "title")
        try fields.encode(isDone, forKey: "isDone")
        try fields.encode(createdAt, forKey: "createdAt")
        try fields.encode(dueAt, forKey: "dueAt")
        try fields.encode($project, forKey: "project")
    }
}

extension ProjectObject: FieldCodable {
    /// Reads a project's fields directly.
    convenience init(fields: borrowing FieldReader) throws {
        self.init(id: try fields.decode(UUID.self, forKey: "id"), name: try fields.decode(String.self, forKey: "name"))
    }

    /// Writes a project's fields directly.
    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(name, forKey: "name")
    }
}
