import Foundation

/// The library side of every scenario: what a program using the store does, one requirement per kind of work.
///
/// Each scenario measures a subject against the raw LMDB C API doing the same storage work (``RawLMDB``). Today's
/// subject is ``BindingSubject``, the safe `LMDB` binding with a hand-written record layout, which shows what the
/// binding costs over C. The KVStore subject is one more conforming type (`StoreSubject`, a `ModelContainer` with
/// `TaskRecord` and `ProjectRecord` as models and a `.cascade` rule from projects to tasks); ``Subjects`` lists the
/// subjects kvbench can run.
///
/// Every store a subject opens is new and empty, in its own directory, and is used by one thread.
protocol ScenarioSubject: AnyObject {
    /// The subject's name in reports, such as "LMDB binding".
    static var name: String { get }

    /// Whether the subject's store can record a change history (``StoreSettings/recordsHistory``), for the rows that
    /// measure what history costs.
    static var recordsHistory: Bool { get }

    /// Opens a new, empty store.
    ///
    /// - Parameters:
    ///   - directory: An existing, empty directory for the store's files.
    ///   - settings: The map size to start with and the durability of commits.
    init(directory: String, settings: StoreSettings) throws

    /// Closes the store; the scenario removes its directory afterwards.
    func close() throws

    /// Inserts `projects` in one write transaction.
    func insert(projects: ArraySlice<ProjectRecord>) throws

    /// Inserts `tasks` and their `projectID` index entries in one write transaction.
    ///
    /// The chunked insert calls it with 10,000 tasks at a time, the naive insert with one.
    func insert(tasks: ArraySlice<TaskRecord>) throws

    /// Inserts `tasks` as an importer of millions does, through the subject's own chunked insert when it has one: the
    /// scale series calls it with a chunk at a time.
    func importTasks(_ tasks: ArraySlice<TaskRecord>) throws

    /// Fetches a batch of tasks by ID in one read transaction.
    ///
    /// - Parameter ids: The IDs, in the caller's order.
    /// - Returns: The decoded tasks in the order of `ids`, `nil` for an ID that is not stored.
    func fetchTasks(ids: [UUID]) throws -> [TaskRecord?]

    /// Fetches one task in a read transaction of its own: the N+1 pattern, called once per ID.
    func fetchTask(id: UUID) throws -> TaskRecord?

    /// Fetches the tasks of a batch of IDs through a query, `ids.contains($0.id)`, in one read transaction, as
    /// SwiftData code does to avoid N+1 reads; any order. The binding has no queries and reads them as
    /// ``fetchTasks(ids:)`` does.
    func queryTasks(ids: [UUID]) throws -> [TaskRecord]

    /// Fetches one task through the query `$0.id == id` in a read transaction of its own, as SwiftData code looks a
    /// model up; the binding reads it as ``fetchTask(id:)`` does.
    func queryTask(id: UUID) throws -> TaskRecord?

    /// The tasks of each project, read through the relationship (the `projectID` index) in one read transaction.
    ///
    /// - Parameter projectIDs: The projects, in the caller's order.
    /// - Returns: The tasks of each project, in the order of `projectIDs`.
    func tasks(ofProjects projectIDs: [UUID]) throws -> [[TaskRecord]]

    /// The tasks whose `projectID` equals `projectID`, in one read transaction: a predicate query on an indexed
    /// attribute.
    ///
    /// - Parameters:
    ///   - projectID: The value to match.
    ///   - plan: Whether to use the index, or to scan every task and evaluate the predicate on each.
    func tasks(withProjectID projectID: UUID, plan: QueryPlan) throws -> [TaskRecord]

    /// The number of tasks whose `projectID` equals `projectID`, in one read transaction: a count on an indexed
    /// attribute, which reads no task when the store can count in the index.
    func countTasks(withProjectID projectID: UUID) throws -> Int

    /// Applies `changes` in one write transaction: reads each task, applies its change with
    /// ``TaskChange/apply(to:)``, writes it back, and moves its index entry when its project changed.
    func update(_ changes: ArraySlice<TaskChange>) throws

    /// Deletes projects and, by cascade, their tasks with their index entries, in one write transaction.
    ///
    /// - Returns: The number of records deleted, projects and tasks.
    func deleteProjects(ids: ArraySlice<UUID>) throws -> Int

    /// Every task and project in the store, decoded, in one read transaction: what the writes of a run left, read
    /// back after its timed regions to compare with the SQLite side's.
    func contents() throws -> RecordDigest
}

/// How a store is opened.
struct StoreSettings: Sendable {
    /// The initial map size in bytes, large enough for the whole scenario (the raw baseline cannot grow).
    var mapSize: Int
    /// Whether commits wait for the disk.
    var durability: CommitSync
    /// How KVStore codes the models; the raw baseline stores the same bytes either way.
    var coding: RecordCoding
    /// Whether the store records its change history (with the default retention), for a subject that can.
    var recordsHistory = false
}

/// How a query finds its results.
enum QueryPlan: String, Codable, Sendable {
    /// Through the index of the queried attribute.
    case index
    /// By decoding every record and evaluating the predicate on it, as for an attribute without an index.
    case fullScan = "full scan"
}

/// The change a read-modify-write update makes to one task.
struct TaskChange: Sendable {
    /// The task to change.
    var id: UUID
    /// The project the task moves to, or `nil` to keep it in its project.
    var newProjectID: UUID?

    /// Applies the change: toggles the done flag, postpones the due date by a day and moves the task when asked.
    ///
    /// Both sides of the update scenario produce their records with this function, so the baseline stores the same
    /// bytes as the subject.
    func apply(to task: inout TaskRecord) {
        task.isDone.toggle()
        task.dueAt = task.dueAt.addingTimeInterval(86_400)
        if let newProjectID {
            task.projectID = newProjectID
        }
    }
}

/// The subjects kvbench can measure against the baseline.
enum Subjects {
    /// The subject of this build: KVStore, the library itself. ``BindingSubject`` measures the bare binding instead.
    static var current: any ScenarioSubject.Type { StoreSubject.self }
}

extension ScenarioSubject {
    /// A subject without a chunked insert of its own imports as it inserts: in one write transaction.
    func importTasks(_ tasks: ArraySlice<TaskRecord>) throws {
        try insert(tasks: tasks)
    }
}
