import Foundation
@_spi(Benchmarking) import KVStore

extension TaskRecord: Model {
    /// Tasks belong to a project through `projectID`, a to-one relationship with its index.
    static let entity = Entity<TaskRecord>(
        name: "Task",
        relationships: [.toOne("project", \.projectID, to: ProjectRecord.self, inverse: "tasks")])
}

extension ProjectRecord: Model {
    /// Deleting a project deletes its tasks.
    static let entity = Entity<ProjectRecord>(
        name: "Project",
        relationships: [.toMany("tasks", of: TaskRecord.self, inverse: \.projectID, deleteRule: .cascade)])
}

/// The scenarios' work done the way a program uses KVStore: a `ModelContainer` with `TaskRecord` and
/// `ProjectRecord` as models, explicit transactions, the library's batch fetch, relationship reads, queries and
/// delete rules. Everything the library does for a user is inside the timed regions: encoding and decoding, index
/// maintenance, unique and reference checks, delete rules.
final class StoreSubject: ScenarioSubject {
    /// The subject's name in reports.
    static let name = "KVStore"
    /// The store records history when the settings ask for it.
    static let recordsHistory = true

    private let container: ModelContainer

    /// Opens a new store in `directory`.
    init(directory: String, settings: StoreSettings) throws {
        var configuration = ModelConfiguration(
            path: directory, durability: settings.durability.storeDurability, initialMapSize: settings.mapSize)
        configuration.usesFieldCodable = settings.coding == .fields
        container = try ModelContainer(for: TaskRecord.self, ProjectRecord.self, configuration: configuration)
        if settings.recordsHistory { try container.enableHistory() }
    }

    /// Closes the store.
    func close() throws {
        try container.close()
    }

    /// Inserts projects in one write transaction.
    func insert(projects: ArraySlice<ProjectRecord>) throws {
        try container.write { txn in
            for project in projects { try txn.insert(project) }
        }
    }

    /// Inserts tasks in one write transaction; the library maintains the `projectID` index and checks that each
    /// project exists.
    func insert(tasks: ArraySlice<TaskRecord>) throws {
        try container.write { txn in
            for task in tasks { try txn.insert(task) }
        }
    }

    /// Inserts tasks through the library's chunked insert (`ModelContext.insert(contentsOf:chunkSize:)`), the way an
    /// importer writes millions: sorted by key, in one write transaction, or several when the pages they change pass
    /// the configuration's budget (``ModelConfiguration/chunkMemoryBudget``, 16 MiB), which keeps the memory LMDB
    /// holds for a transaction flat as the store grows.
    func importTasks(_ tasks: ArraySlice<TaskRecord>) throws {
        try ModelContext(container).insert(contentsOf: tasks, chunkSize: tasks.count)
    }

    /// The library's batch fetch: one read transaction, lookups in key order, results in the caller's order.
    func fetchTasks(ids: [UUID]) throws -> [TaskRecord?] {
        try container.read { txn in try txn.models(for: ids, as: TaskRecord.self) }
    }

    /// One task in a read transaction of its own.
    func fetchTask(id: UUID) throws -> TaskRecord? {
        try container.read { txn in try txn.model(for: id, as: TaskRecord.self) }
    }

    /// The tasks of a batch of IDs through `ids.contains($0.id)`, which the planner reads as lookups of the IDs.
    func queryTasks(ids: [UUID]) throws -> [TaskRecord] {
        try container.read { txn in
            try txn.fetch(FetchDescriptor<TaskRecord>(predicate: #Predicate { ids.contains($0.id) }))
        }
    }

    /// One task through `$0.id == id`, which the planner reads as one lookup, in a read transaction of its own.
    func queryTask(id: UUID) throws -> TaskRecord? {
        try container.read { txn in
            try txn.fetch(FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.id == id })).first
        }
    }

    /// The tasks of each project through the relationship's index, in one read transaction.
    func tasks(ofProjects projectIDs: [UUID]) throws -> [[TaskRecord]] {
        try container.read { txn in
            let grouped = try txn.children(of: projectIDs, through: \TaskRecord.projectID)
            return projectIDs.map { grouped[$0] ?? [] }
        }
    }

    /// A `#Predicate` query on `projectID`; for the full scan, the same condition written so that no index fits it.
    func tasks(withProjectID projectID: UUID, plan: QueryPlan) throws -> [TaskRecord] {
        let descriptor: FetchDescriptor<TaskRecord>
        switch plan {
        case .index:
            descriptor = FetchDescriptor(predicate: #Predicate { $0.projectID == projectID })
        case .fullScan:
            // A negated inequality means the same, and the planner uses no index for it.
            descriptor = FetchDescriptor(predicate: #Predicate { !($0.projectID != projectID) })
        }
        return try container.read { txn in try txn.fetch(descriptor) }
    }

    /// Counts through `fetchCount`, which counts the index entries of an exact equality.
    func countTasks(withProjectID projectID: UUID) throws -> Int {
        let descriptor = FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.projectID == projectID })
        return try container.read { txn in try txn.fetchCount(descriptor) }
    }

    /// Read-modify-write of each task in one write transaction; the library moves index entries.
    func update(_ changes: ArraySlice<TaskChange>) throws {
        try container.write { txn in
            for change in changes {
                guard var task = try txn.model(for: change.id, as: TaskRecord.self) else {
                    throw SubjectError(description: "No task \(change.id) to update")
                }
                change.apply(to: &task)
                try txn.insert(task)
            }
        }
    }

    /// Deletes projects; the `.cascade` rule deletes their tasks in the same transaction.
    func deleteProjects(ids: ArraySlice<UUID>) throws -> Int {
        try container.write { txn in
            let tasksBefore = try txn.fetchCount(FetchDescriptor<TaskRecord>())
            let projects = try txn.delete(ProjectRecord.self, ids: Array(ids))
            return projects + tasksBefore - (try txn.fetchCount(FetchDescriptor<TaskRecord>()))
        }
    }
}

extension StoreSubject {
    /// Every task and project, fetched without a predicate.
    func contents() throws -> RecordDigest {
        try container.read { txn in
            var digest = RecordDigest()
            digest.add(tasks: try txn.fetch(FetchDescriptor<TaskRecord>()))
            for project in try txn.fetch(FetchDescriptor<ProjectRecord>()) { digest.add(project) }
            return digest
        }
    }
}

extension TaskRecord: FieldCodable {
    /// Reads a task's fields directly, as `init(from:)` would through Codable.
    init(fields: borrowing FieldReader) throws {
        self.init(
            id: try fields.decode(UUID.self, forKey: "id"),
            title: try fields.decode(String.self, forKey: "title"),
            isDone: try fields.decode(Bool.self, forKey: "isDone"),
            createdAt: try fields.decode(Date.self, forKey: "createdAt"),
            dueAt: try fields.decode(Date.self, forKey: "dueAt"),
            projectID: try fields.decodeIfPresent(UUID.self, forKey: "projectID"))
    }

    /// Writes a task's fields directly, in the order of its coding keys.
    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(title, forKey: "title")
        try fields.encode(isDone, forKey: "isDone")
        try fields.encode(createdAt, forKey: "createdAt")
        try fields.encode(dueAt, forKey: "dueAt")
        try fields.encodeIfPresent(projectID, forKey: "projectID")
    }
}

extension ProjectRecord: FieldCodable {
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
