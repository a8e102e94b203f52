import Foundation
import KVStore

// The models of the model-based tests: one relationship per delete rule, a unique attribute, a many-to-many.
//
//   MBProject.tasks   cascade   (derived from MBTask.projectID)
//   MBTask.subtasks   deny      (derived from MBSubtask.taskID)
//   MBTag.tasks       nullify   (derived from the many-to-many MBTask.tagIDs)
//   MBPerson.tasks    nullify   (derived from the to-one MBTask.assigneeID)
//   MBOwner.tasks     noAction  (derived from MBTask.ownerID, which may dangle)

/// A project: its name is unique, and deleting it deletes its tasks.
struct MBProject: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    static let entity = Entity<MBProject>(
        indexes: [.unique(\.name)],
        relationships: [.toMany("tasks", of: MBTask.self, inverse: \.projectID, deleteRule: .cascade)])
}

/// A task: in a project, assigned to a person, owned by an owner, with tags; it cannot be deleted while it has
/// subtasks.
struct MBTask: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var priority: Int
    var projectID: UUID?
    var assigneeID: UUID?
    var ownerID: UUID?
    var tagIDs: [UUID] = []
    static let entity = Entity<MBTask>(
        indexes: [.index(\.priority)],
        relationships: [
            .toOne("project", \.projectID, to: MBProject.self, inverse: "tasks"),
            .toOne("assignee", \.assigneeID, to: MBPerson.self, inverse: "tasks"),
            .toOne("owner", \.ownerID, to: MBOwner.self, inverse: "tasks", allowsDangling: true),
            .toMany("tags", \.tagIDs, to: MBTag.self, inverse: "tasks"),
            .toMany("subtasks", of: MBSubtask.self, inverse: \.taskID, deleteRule: .deny),
        ])
}

/// A subtask of a task.
struct MBSubtask: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var taskID: UUID?
    static let entity = Entity<MBSubtask>(relationships: [
        .toOne("task", \.taskID, to: MBTask.self, inverse: "subtasks")
    ])
}

/// A tag: deleting it removes it from its tasks' tags.
struct MBTag: Model, Equatable {
    var id = UUID.timeOrdered()
    var label: String
    static let entity = Entity<MBTag>(relationships: [
        .toMany("tasks", of: MBTask.self, inverse: \.tagIDs, deleteRule: .nullify)
    ])
}

/// A person: deleting one unassigns their tasks.
struct MBPerson: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    static let entity = Entity<MBPerson>(relationships: [
        .toMany("tasks", of: MBTask.self, inverse: \.assigneeID, deleteRule: .nullify)
    ])
}

/// An owner: deleting one leaves its tasks' `ownerID` dangling.
struct MBOwner: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    static let entity = Entity<MBOwner>(relationships: [
        .toMany("tasks", of: MBTask.self, inverse: \.ownerID, deleteRule: .noAction)
    ])
}

/// The model types of the model-based tests.
let modelBasedTypes: [any Model.Type] = [
    MBProject.self, MBTask.self, MBSubtask.self, MBTag.self, MBPerson.self, MBOwner.self,
]

extension UUID {
    /// The ID a model-based run makes for the `counter`th ID or name of the run seeded with `seed`: distinct for each
    /// counter below 2^48, in the order of the counter (key order), and the same for the same seed.
    ///
    /// The counter takes the first 48 bits, as a UUIDv7's timestamp does, so that the version and variant bits do not
    /// overwrite any bit of it; the seed fills what the variant leaves of the last 8 bytes.
    init(modelBasedCounter counter: UInt64, seed: UInt64) {
        precondition(counter < 1 << 48, "a model-based run made more than 2^48 IDs")
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: (counter << 16).bigEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        withUnsafeBytes(of: seed.bigEndian) { bytes.replaceSubrange(8..<16, with: $0) }
        bytes[6] = 0x70
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        self.init(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// Whether this ID sorts before `other` in the store's key order (its 16 bytes).
    func precedesInKeyOrder(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { left in
            withUnsafeBytes(of: other.uuid) { right in left.lexicographicallyPrecedes(right) }
        }
    }
}
