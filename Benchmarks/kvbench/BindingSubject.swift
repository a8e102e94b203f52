import Foundation
import LMDB

/// The subject of today's runs: the scenarios' work done on the safe `LMDB` binding, with records in the fixed
/// layout of ``TaskRecord/encode(into:)``, encoded and decoded inside the timed regions.
///
/// Against the raw baseline it shows what the binding costs (argument checks, the transaction gate, closures), and
/// what encoding and decoding cost. Tables: `Task` (task ID → record), `Project` (project ID → record) and
/// `Task.projectID` (`dupSort` and `dupFixed`: project ID → task IDs), the layout KVStore uses.
final class BindingSubject: ScenarioSubject {
    /// The subject's name in reports.
    static let name = "LMDB binding"
    /// The binding has no change history.
    static let recordsHistory = false

    private let environment: Environment
    private let taskTable: Table
    private let projectTable: Table
    private let projectIndex: Table

    /// Opens a new environment in `directory` with the three tables.
    init(directory: String, settings: StoreSettings) throws {
        let configuration = Environment.Configuration(
            mapSize: settings.mapSize, maxMapSize: Swift.max(settings.mapSize, 1 << 40), maxTables: 8,
            options: Environment.Options(rawValue: settings.durability.environmentFlags))
        environment = try Environment.open(path: directory, configuration: configuration)
        taskTable = try environment.openTable(named: "Task", create: true)
        projectTable = try environment.openTable(named: "Project", create: true)
        projectIndex = try environment.openTable(named: "Task.projectID", options: [.dupSort, .dupFixed], create: true)
    }

    /// Closes the environment.
    func close() throws {
        try environment.close()
    }

    /// Inserts projects in one write transaction.
    func insert(projects: ArraySlice<ProjectRecord>) throws {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(128)
        try environment.write { txn in
            for project in projects {
                buffer.removeAll(keepingCapacity: true)
                project.encode(into: &buffer)
                try project.id.withBytes { key in
                    try buffer.withUnsafeBytes { value in try txn.put(value, forKey: key, in: projectTable) }
                }
            }
        }
    }

    /// Inserts tasks and their index entries in one write transaction.
    func insert(tasks: ArraySlice<TaskRecord>) throws {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(128)
        try environment.write { txn in
            for task in tasks {
                buffer.removeAll(keepingCapacity: true)
                task.encode(into: &buffer)
                try task.id.withBytes { key in
                    try buffer.withUnsafeBytes { value in try txn.put(value, forKey: key, in: taskTable) }
                    try task.project.withBytes { project in try txn.put(key, forKey: project, in: projectIndex) }
                }
            }
        }
    }

    /// Fetches tasks in one read transaction, looking them up in key order and returning them in the caller's.
    func fetchTasks(ids: [UUID]) throws -> [TaskRecord?] {
        var order = ids.indices.map { (key: ids[$0].sortKey, position: $0) }
        order.sort { $0.key < $1.key }
        var results = [TaskRecord?](repeating: nil, count: ids.count)
        try environment.read { txn in
            for (_, position) in order {
                results[position] = try task(ids[position], in: txn)
            }
        }
        return results
    }

    /// Fetches one task in a read transaction of its own.
    func fetchTask(id: UUID) throws -> TaskRecord? {
        try environment.read { txn in try task(id, in: txn) }
    }

    /// The binding has no queries: the tasks of a batch of IDs, read as ``fetchTasks(ids:)`` reads them.
    func queryTasks(ids: [UUID]) throws -> [TaskRecord] {
        try fetchTasks(ids: ids).compactMap { $0 }
    }

    /// The binding has no queries: one task, read as ``fetchTask(id:)`` reads it.
    func queryTask(id: UUID) throws -> TaskRecord? {
        try fetchTask(id: id)
    }

    /// Reads the tasks of each project through the index in one read transaction.
    func tasks(ofProjects projectIDs: [UUID]) throws -> [[TaskRecord]] {
        try environment.read { txn in
            try txn.withCursor(on: projectIndex) { cursor in
                var ids: [UUID] = []
                return try projectIDs.map { projectID in
                    ids.removeAll(keepingCapacity: true)
                    try taskIDs(of: projectID, with: cursor, into: &ids)
                    return try ids.compactMap { id in try task(id, in: txn) }
                }
            }
        }
    }

    /// Answers `projectID == value` through the index, or by decoding every task and testing it.
    func tasks(withProjectID projectID: UUID, plan: QueryPlan) throws -> [TaskRecord] {
        try environment.read { txn in
            switch plan {
            case .index:
                var ids: [UUID] = []
                try txn.withCursor(on: projectIndex) { cursor in try taskIDs(of: projectID, with: cursor, into: &ids) }
                return try ids.compactMap { id in try task(id, in: txn) }
            case .fullScan:
                var matches: [TaskRecord] = []
                try txn.scan(taskTable) { _, value in
                    let task = try TaskRecord(decoding: value)
                    if task.projectID == projectID { matches.append(task) }
                    return true
                }
                return matches
            }
        }
    }

    /// Counts the duplicates of the project's key in the index.
    func countTasks(withProjectID projectID: UUID) throws -> Int {
        try environment.read { txn in
            try txn.withCursor(on: projectIndex) { cursor in
                try projectID.withBytes { key in try cursor.seek(to: key) ? try cursor.duplicateCount() : 0 }
            }
        }
    }

    /// Reads, changes and writes back tasks in one write transaction, moving index entries of moved tasks.
    func update(_ changes: ArraySlice<TaskChange>) throws {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(128)
        try environment.write { txn in
            for change in changes {
                guard var task = try task(change.id, in: txn) else {
                    throw SubjectError(description: "No task \(change.id) to update")
                }
                let oldProjectID = task.project
                change.apply(to: &task)
                buffer.removeAll(keepingCapacity: true)
                task.encode(into: &buffer)
                try task.id.withBytes { key in
                    try buffer.withUnsafeBytes { value in try txn.put(value, forKey: key, in: taskTable) }
                    if task.project != oldProjectID {
                        _ = try oldProjectID.withBytes { old in try txn.delete(key, forKey: old, in: projectIndex) }
                        try task.project.withBytes { new in try txn.put(key, forKey: new, in: projectIndex) }
                    }
                }
            }
        }
    }

    /// Deletes projects, their tasks and the tasks' index entries in one write transaction.
    ///
    /// The task IDs are collected before any delete: deleting while a cursor walks a `dupSort` table is unsafe
    /// with Debian's LMDB 0.9.24.
    func deleteProjects(ids: ArraySlice<UUID>) throws -> Int {
        try environment.write { txn in
            var children: [[UUID]] = []
            children.reserveCapacity(ids.count)
            try txn.withCursor(on: projectIndex) { cursor in
                for projectID in ids {
                    var taskIDs: [UUID] = []
                    try self.taskIDs(of: projectID, with: cursor, into: &taskIDs)
                    children.append(taskIDs)
                }
            }
            var deleted = 0
            for (projectID, taskIDs) in zip(ids, children) {
                try projectID.withBytes { project in
                    for taskID in taskIDs {
                        try taskID.withBytes { key in
                            try txn.delete(forKey: key, in: taskTable)
                            try txn.delete(key, forKey: project, in: projectIndex)
                        }
                        deleted += 1
                    }
                    try txn.delete(forKey: project, in: projectTable)
                    deleted += 1
                }
            }
            return deleted
        }
    }

    /// Decodes every task and project, scanning their tables in one read transaction.
    func contents() throws -> RecordDigest {
        try environment.read { txn in
            var digest = RecordDigest()
            try txn.scan(taskTable) { _, value in
                digest.add(try TaskRecord(decoding: value))
                return true
            }
            try txn.scan(projectTable) { _, value in
                digest.add(try ProjectRecord(decoding: value))
                return true
            }
            return digest
        }
    }

    // MARK: - Helpers

    /// The decoded task `id`, or `nil` when it is not stored.
    private func task(_ id: UUID, in txn: borrowing Transaction) throws -> TaskRecord? {
        try id.withBytes { key in
            try txn.withUnsafeBytes(forKey: key, in: taskTable) { bytes in try bytes.map(TaskRecord.init(decoding:)) }
        }
    }

    /// Appends the IDs of the tasks of `projectID` to `ids`, reading the index through `cursor` a page at a time.
    private func taskIDs(of projectID: UUID, with cursor: borrowing Cursor, into ids: inout [UUID]) throws {
        _ = try projectID.withBytes { key in
            try cursor.forEachDuplicatePage(ofKey: key) { page in
                for offset in stride(from: 0, to: page.count, by: 16) {
                    ids.append(UUID(bytes: UnsafeRawBufferPointer(rebasing: page[offset..<offset + 16])))
                }
            }
        }
    }
}

/// A failure of a subject that is not the store's: a record that should be there is not.
struct SubjectError: Error, CustomStringConvertible {
    /// What went wrong.
    var description: String
}
