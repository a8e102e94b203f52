import CSQLite
import Foundation

/// The SQLite side's updates and deletes, each chunk in one write transaction.
extension RawSQLite {
    /// Applies `changes` in one write transaction, one step each of the prepared
    /// `UPDATE task SET isDone = NOT isDone, dueAt = dueAt + 86400.0, projectID = coalesce(?2, projectID)
    /// WHERE id = ?1`: ``TaskChange/apply(to:)`` written in SQL, so that SQLite reads, changes and writes each row
    /// itself and moves its index entry when the project changes (checking the new project through the foreign key).
    ///
    /// - Returns: The number of tasks updated.
    /// - Throws: ``RawSQLiteError`` when SQLite fails or a task is not stored.
    func update(_ changes: ArraySlice<TaskChange>) throws -> Int {
        let statement = statements.update
        return try write {
            for change in changes {
                // The bound bytes are the closures' memory: each step runs inside them.
                try withUnsafeBytes(of: change.id.uuid) { id in
                    try bindID(statement, 1, id.baseAddress)
                    if let newProjectID = change.newProjectID {
                        try withUnsafeBytes(of: newProjectID.uuid) { project in
                            try bindID(statement, 2, project.baseAddress)
                            try run(statement, "update a task")
                        }
                    } else {
                        try check(sqlite3_bind_null(statement, 2), "bind no new project")
                        try run(statement, "update a task")
                    }
                }
                guard sqlite3_changes(database) == 1 else {
                    throw RawSQLiteError(
                        code: SQLITE_NOTFOUND, operation: "update task \(change.id)", message: "no such task")
                }
            }
            return changes.count
        }
    }

    /// Deletes the projects whose IDs are `keys` (16 bytes each) in one write transaction, one step each of the
    /// prepared `DELETE FROM project WHERE id = ?`; the foreign key's `ON DELETE CASCADE` deletes their tasks,
    /// found through the `projectID` index.
    ///
    /// - Returns: The number of records deleted, projects and tasks: the growth of `sqlite3_total_changes64`, which
    ///   counts the rows that foreign-key actions delete.
    /// - Throws: ``RawSQLiteError`` when SQLite fails.
    func deleteProjects(keys: [UInt8]) throws -> Int {
        let statement = statements.deleteProject
        return try write {
            let before = sqlite3_total_changes64(database)
            try keys.withUnsafeBytes { keys in
                for offset in stride(from: 0, to: keys.count, by: 16) {
                    try bindID(statement, 1, keys.baseAddress?.advanced(by: offset))
                    try run(statement, "delete a project")
                }
            }
            return Int(sqlite3_total_changes64(database) - before)
        }
    }
}
