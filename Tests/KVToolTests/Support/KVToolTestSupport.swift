import Foundation
import KVStore
import KVStoreInspection
import LMDB
import Testing

@testable import KVToolCore

/// A project of the projects-and-tasks domain.
struct Project: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static let entity = Entity<Project>(indexes: [.unique(\.name)])
}

/// A task of the projects-and-tasks domain.
struct Task: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var isDone = false
    var dueDate: Date?
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
    var projectID: UUID?

    static let entity = Entity<Task>(indexes: [.index(\.projectID)])
}

/// What one kvtool run printed, and its exit status.
struct RunResult: Equatable {
    /// The exit status.
    let status: Int32
    /// Standard output.
    let output: String
    /// Standard error.
    let errors: String
}

/// Runs kvtool in-process and collects what it printed.
func kvtool(_ arguments: String..., terminal: Bool = false) -> RunResult {
    kvtool(arguments: arguments, terminal: terminal)
}

/// Runs kvtool in-process with an array of arguments and collects what it printed.
func kvtool(arguments: [String], terminal: Bool = false) -> RunResult {
    let output = StringSink()
    let errors = StringSink()
    let status = KVTool.run(
        arguments: arguments, console: Console(output: output, errors: errors, outputIsTerminal: terminal))
    return RunResult(status: status, output: output.text, errors: errors.text)
}

/// A UUID made of zeros but for its last byte, and time-ordered-looking version bits, for stable output.
func fixedID(_ number: UInt8, entity: UInt8 = 0) -> UUID {
    UUID(uuid: (0x01, 0x90, 0, 0, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, entity, number))
}

/// A fresh directory for a store, removed at the end of the test.
struct TemporaryStore: ~Copyable {
    /// The store's directory (not created).
    let path: String

    /// Picks a fresh path under the temporary directory.
    init() {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath()
        path = base.appendingPathComponent("kvtool-tests-\(UUID().uuidString)").path
    }

    /// A path beside the store, removed with it.
    func sibling(_ name: String) -> String {
        path + "-" + name
    }

    deinit {
        let manager = FileManager.default
        try? manager.removeItem(atPath: path)
        if let siblings = try? manager.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent) {
            let prefix = (path as NSString).lastPathComponent + "-"
            for name in siblings where name.hasPrefix(prefix) {
                try? manager.removeItem(
                    atPath: ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(name))
            }
        }
    }
}

/// The sample data: two projects and four tasks with fixed IDs and dates.
enum Sample {
    static let inbox = Project(id: fixedID(1, entity: 1), name: "Inbox")
    static let garden = Project(id: fixedID(2, entity: 1), name: "Garden")
    static let tasks = [
        Task(id: fixedID(1, entity: 2), title: "Write the report", projectID: inbox.id),
        Task(
            id: fixedID(2, entity: 2), title: "Plant tulips", isDone: true,
            dueDate: Date(timeIntervalSinceReferenceDate: 800_086_400.25), projectID: garden.id),
        Task(id: fixedID(3, entity: 2), title: "Water the roses", projectID: garden.id),
        Task(id: fixedID(4, entity: 2), title: "Call Ada", projectID: nil),
    ]

    /// Writes the sample store at `path` through the library, and closes it.
    static func makeStore(at path: String, projects: [Project] = [inbox, garden], tasks: [Task] = tasks) throws {
        let container = try ModelContainer(
            for: Project.self, Task.self, configuration: ModelConfiguration(path: path, durability: .off))
        let context = ModelContext(container)
        for project in projects { context.insert(project) }
        for task in tasks { context.insert(task) }
        try context.save()
        try container.close()
    }

    /// Adds the relationships `Task.project` (stored in `projectID`, nullify, inverse `tasks`) and `Project.tasks`
    /// (derived, cascade) to the catalog, written through the LMDB binding as the library writes them.
    static func addRelationships(at path: String) throws {
        try editCatalog(at: path) { entities in
            entities["Task"]?.relationships = [
                try relationship(
                    #"{"name":"project","target":"Project","inverse":"tasks","cardinality":"toOne","#
                        + #""field":"projectID","deleteRule":"nullify","allowsDangling":false}"#)
            ]
            entities["Project"]?.relationships = [
                try relationship(
                    #"{"name":"tasks","target":"Task","cardinality":"toMany","#
                        + #""deleteRule":"cascade","allowsDangling":false}"#)
            ]
        }
    }

    /// A relationship description from its catalog JSON.
    static func relationship(_ json: String) throws -> RelationshipCatalog {
        try JSONDecoder().decode(RelationshipCatalog.self, from: Data(json.utf8))
    }

    /// Rewrites catalog entries through the LMDB binding.
    static func editCatalog(at path: String, _ edit: (inout [String: EntityCatalog]) throws -> Void) throws {
        try withEnvironment(at: path) { environment in
            let catalog = try environment.openTable(named: Catalog.tableName)
            try environment.write { txn in
                let (list, _) = try InspectedStore.readEntities(in: txn, catalog: catalog)
                var entities = Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0) })
                try edit(&entities)
                for entity in entities.values {
                    try Catalog.write(entity, key: Catalog.entityKey(entity.name), in: txn, table: catalog)
                }
            }
        }
    }
}

/// Opens the environment at `path` for writing, runs `body`, and closes it.
func withEnvironment<R>(at path: String, _ body: (Environment) throws -> R) throws -> R {
    let environment = try Environment.open(path: path, configuration: Environment.Configuration(maxTables: 64))
    defer { try? environment.close() }
    return try body(environment)
}

/// The index key of a UUID component, as the library builds it.
func indexKey(_ id: UUID?) -> [UInt8] {
    var key: [UInt8] = []
    id.appendIndexKey(to: &key)
    return key
}

/// The 16 bytes of a UUID.
func bytes(_ id: UUID) -> [UInt8] {
    withUnsafeBytes(of: id.uuid) { Array($0) }
}
