import Foundation
import KVStore

/// SwiftData's Projects & Tasks as reference models: a project's tasks cascade, a task's tags are many-to-many.
final class RefProject: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String
    @ToMany var tasks: [RefTask]

    init(name: String) {
        self.name = name
    }

    static let entity = Entity<RefProject>(
        name: "Project", relationships: [.toMany("tasks", \.tasks, inverse: "project", deleteRule: .cascade)])
}

final class RefTask: PersistentModel {
    var id = UUID.timeOrdered()
    var title: String
    var isDone = false
    var priority = 0
    @ToOne var project: RefProject?
    @ManyToMany var tags: [RefTag]

    init(title: String, project: RefProject? = nil, priority: Int = 0) {
        self.title = title
        self.project = project
        self.priority = priority
    }

    static let entity = Entity<RefTask>(
        name: "Task", indexes: [.index(\.priority)],
        relationships: [
            .toOne("project", \.project, inverse: "tasks"), .manyToMany("tags", \.tags, inverse: "tasks"),
        ])
}

final class RefTag: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String
    @ToMany var tasks: [RefTask]

    init(name: String) {
        self.name = name
    }

    static let entity = Entity<RefTag>(name: "Tag", relationships: [.toMany("tasks", \.tasks, inverse: "tags")])
}
