import Foundation
import KVStore

// A three-level chain that cascades: ProjectC → TaskC → SubtaskC, plus tags (many-to-many, nullify).

struct ProjectC: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    static let entity = Entity<ProjectC>(relationships: [
        .toMany("tasks", of: TaskC.self, inverse: \.projectID, deleteRule: .cascade)
    ])
}

struct TaskC: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var projectID: UUID?
    var tagIDs: [UUID] = []
    static let entity = Entity<TaskC>(relationships: [
        .toOne("project", \.projectID, to: ProjectC.self, inverse: "tasks"),
        .toMany("tags", \.tagIDs, to: TagC.self, inverse: "tasks"),
        .toMany("subtasks", of: SubtaskC.self, inverse: \.taskID, deleteRule: .cascade),
    ])
}

struct SubtaskC: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var taskID: UUID?
    static let entity = Entity<SubtaskC>(relationships: [
        .toOne("task", \.taskID, to: TaskC.self, inverse: "subtasks")
    ])
}

struct TagC: Model, Equatable {
    var id = UUID.timeOrdered()
    var label: String
    static let entity = Entity<TagC>(relationships: [
        .toMany("tasks", of: TaskC.self, inverse: \.tagIDs, deleteRule: .nullify)
    ])
}

// One parent and child pair per delete rule.

struct ParentN: Model {
    var id = UUID.timeOrdered()
    static let entity = Entity<ParentN>(relationships: [
        .toMany("children", of: ChildN.self, inverse: \.parentID, deleteRule: .nullify)
    ])
}

struct ChildN: Model, Equatable {
    var id = UUID.timeOrdered()
    var parentID: UUID?
    static let entity = Entity<ChildN>(relationships: [.toOne("parent", \.parentID, to: ParentN.self)])
}

struct ParentD: Model {
    var id = UUID.timeOrdered()
    static let entity = Entity<ParentD>(relationships: [
        .toMany("children", of: ChildD.self, inverse: \.parentID, deleteRule: .deny)
    ])
}

struct ChildD: Model {
    var id = UUID.timeOrdered()
    var parentID: UUID?
    static let entity = Entity<ChildD>(relationships: [.toOne("parent", \.parentID, to: ParentD.self)])
}

struct ParentX: Model {
    var id = UUID.timeOrdered()
    static let entity = Entity<ParentX>(relationships: [
        .toMany("children", of: ChildX.self, inverse: \.parentID, deleteRule: .noAction)
    ])
}

struct ChildX: Model, Equatable {
    var id = UUID.timeOrdered()
    var parentID: UUID?
    static let entity = Entity<ChildX>(relationships: [.toOne("parent", \.parentID, to: ParentX.self)])
}

// Mixed rules along one chain: the project cascades to its tasks, a task denies while it has subtasks.

struct ProjectM: Model {
    var id = UUID.timeOrdered()
    static let entity = Entity<ProjectM>(relationships: [
        .toMany("tasks", of: TaskM.self, inverse: \.projectID, deleteRule: .cascade)
    ])
}

struct TaskM: Model {
    var id = UUID.timeOrdered()
    var projectID: UUID?
    static let entity = Entity<TaskM>(relationships: [
        .toOne("project", \.projectID, to: ProjectM.self),
        .toMany("subtasks", of: SubtaskM.self, inverse: \.taskID, deleteRule: .deny),
    ])
}

struct SubtaskM: Model {
    var id = UUID.timeOrdered()
    var taskID: UUID?
    static let entity = Entity<SubtaskM>(relationships: [.toOne("task", \.taskID, to: TaskM.self)])
}

// A self-relationship: notes link to notes; backlinks are derived. Deleting a note removes it from the links of
// the notes that link to it.

struct Note: Model, Equatable {
    var id = UUID.timeOrdered()
    var text: String
    var links: [UUID] = []
    static let entity = Entity<Note>(relationships: [
        .toMany("links", \.links, to: Note.self, inverse: "backlinks"),
        .toMany("backlinks", of: Note.self, inverse: \.links, deleteRule: .nullify),
    ])
}

// A cycle of cascades: each node cascades to the next.

struct Node: Model {
    var id = UUID.timeOrdered()
    var next: UUID?
    static let entity = Entity<Node>(relationships: [
        .toOne("next", \.next, to: Node.self, deleteRule: .cascade)
    ])
}

// A reference allowed to dangle.

struct Bookmark: Model {
    var id = UUID.timeOrdered()
    var targetID: UUID?
    static let entity = Entity<Bookmark>(relationships: [
        .toOne("target", \.targetID, to: Note.self, allowsDangling: true)
    ])
}

// Declarations that do not fit together.

struct Orphanage: Model {
    var id = UUID.timeOrdered()
    static let entity = Entity<Orphanage>(relationships: [
        .toMany("orphans", of: Orphan.self, inverse: \.homeID)
    ])
}

struct Orphan: Model {
    var id = UUID.timeOrdered()
    var homeID: UUID?
}

struct Mismatched: Model {
    var id = UUID.timeOrdered()
    var projectID: UUID?
    static let entity = Entity<Mismatched>(relationships: [
        .toOne("project", \.projectID, to: ProjectC.self, inverse: "nothing")
    ])
}
