import CSQLite
import Foundation

/// The SQLite side's updates and deletes, each chunk in one write transaction.
extension RawSQLite {
    /// Applies `changes` in one write transaction, one step each of a prepared `UPDATE` that is
    /// ``TaskChange/apply(to:)`` written in SQL, so that SQLite reads, changes and writes each row itself:
    /// `UPDATE task SET isDone = NOT isDone, dueAt = dueAt + 86400.0 WHERE id = ?1`, and for a task that moves, the
    /// same with `projectID = ?2`, which moves its index entry and checks the new project through the foreign key.
    ///
    /// - Returns: The number of tasks updated.
    /// - Throws: ``RawSQLiteError`` when SQLite fails or a task is not stored.
    func update(_ changes: ArraySlice<TaskChange>) throws -> Int {
        try write {
            for change in changes {
                // The bound bytes are the closures' memory: each step runs inside them.
                try withUnsafeBytes(of: change.id.uuid) { id in
                    if let newProjectID = change.newProjectID {
                        let statement = statements.updateMoving
                        try bindID(statement, 1, id.baseAddress)
                        try withUnsafeBytes(of: newProjectID.uuid) { project in
                            try bindID(statement, 2, project.baseAddress)
                            try run(statement, "update a task")
                        }
                    } else {
                        let statement = statements.update
                        try bindID(statement, 1, id.baseAddress)
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
