import CSQLite
import Foundation

/// The SQLite side's reads: each decodes the rows it finds into ``TaskRecord``s, as a program would, and folds them
/// into a ``RecordDigest``.
///
/// A read that is one statement runs it alone, in autocommit mode: SQLite opens a read transaction for the
/// statement and ends it when the statement is reset, one transaction per read as the other sides pay. Reads that
/// share a transaction run between `BEGIN` and `COMMIT`.
extension RawSQLite {
    /// Gets the tasks whose IDs are `keys` (16 bytes each), in that order, in one read transaction: one step of the
    /// prepared `SELECT ... WHERE id = ?` per key.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not a task.
    func getTasks(keys: [UInt8]) throws -> RecordDigest {
        try read {
            try keys.withUnsafeBytes { keys in
                var digest = RecordDigest()
                for offset in stride(from: 0, to: keys.count, by: 16) {
                    try getTask(keys.baseAddress?.advanced(by: offset), into: &digest)
                }
                return digest
            }
        }
    }

    /// Gets the task whose ID is the 16 bytes at `key` in a read transaction of its own: the prepared
    /// `SELECT ... WHERE id = ?`, alone.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not a task.
    func getTask(key: UnsafeRawPointer) throws -> RecordDigest {
        var digest = RecordDigest()
        try getTask(key, into: &digest)
        return digest
    }

    /// Prepares the `SELECT ... WHERE id IN (?, ...)` statement of `count` IDs, once: call it before the timed
    /// regions.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, or when `count` exceeds its limit on parameters.
    @discardableResult
    func idListStatement(count: Int) throws -> OpaquePointer {
        if let statement = idListStatements[count] { return statement }
        let limit = Int(sqlite3_limit(database, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        guard count <= limit else {
            throw RawSQLiteError(
                code: SQLITE_RANGE, operation: "query \(count) IDs in one statement",
                message: "SQLite allows \(limit) parameters; use smaller fetch batches")
        }
        let parameters = Array(repeating: "?", count: count).joined(separator: ", ")
        let statement = try Self.prepare(
            "SELECT \(Self.taskColumns) FROM task WHERE id IN (\(parameters))", in: database)
        idListStatements[count] = statement
        return statement
    }

    /// Reads the tasks whose IDs are `keys` (16 bytes each) through one `SELECT ... WHERE id IN (?, ...)`, the
    /// query SQL code writes for `ids.contains($0.id)`, in its own read transaction; rows come in any order.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not a task.
    func queryTasks(keys: [UInt8]) throws -> RecordDigest {
        let statement = try idListStatement(count: keys.count / 16)
        return try keys.withUnsafeBytes { keys in
            for position in 0..<keys.count / 16 {
                try bindID(statement, Int32(position + 1), keys.baseAddress?.advanced(by: position &* 16))
            }
            var digest = RecordDigest()
            try forEachRow(statement, "query tasks by ID") { row in digest.add(try decodeTask(row)) }
            return digest
        }
    }

    /// Reads the tasks of the projects whose IDs are `keys` (16 bytes each) in one read transaction: the prepared
    /// `SELECT ... WHERE projectID = ?` per project, through the index.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not a task.
    func tasksOfProjects(keys: [UInt8]) throws -> RecordDigest {
        try read {
            try keys.withUnsafeBytes { keys in
                var digest = RecordDigest()
                for offset in stride(from: 0, to: keys.count, by: 16) {
                    try tasksOfProject(keys.baseAddress?.advanced(by: offset), plan: .index, into: &digest)
                }
                return digest
            }
        }
    }

    /// Reads the tasks of the project whose ID is the 16 bytes at `key`, in a read transaction of its own: through
    /// the index, or by the full scan of ``RawSQLite/fullScanQuery``, which tests the `projectID` column of every
    /// row.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not a task.
    func tasksOfProject(key: UnsafeRawPointer, plan: QueryPlan) throws -> RecordDigest {
        var digest = RecordDigest()
        try tasksOfProject(key, plan: plan, into: &digest)
        return digest
    }

    /// Counts the tasks of the project whose ID is the 16 bytes at `key` with `SELECT count(*)`, in a read
    /// transaction of its own; SQLite counts the entries of the index.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails.
    func countTasksOfProject(key: UnsafeRawPointer) throws -> Int {
        let statement = statements.countByProject
        try bindID(statement, 1, key)
        var count = 0
        try forEachRow(statement, "count the tasks of a project") { row in count = Int(sqlite3_column_int64(row, 0)) }
        return count
    }

    /// Every task and project in the database, decoded, in one read transaction: what a write left, for the
    /// comparison with the subject's store.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails, ``RecordDecodingError`` for a row that is not a record.
    func contents() throws -> RecordDigest {
        try read {
            var digest = RecordDigest()
            try forEachRow(statements.allTasks, "read every task") { row in digest.add(try decodeTask(row)) }
            try forEachRow(statements.allProjects, "read every project") { row in
                let name = try text(row, 1)
                digest.add(ProjectRecord(id: try uuid(row, 0), name: name))
            }
            return digest
        }
    }

    // MARK: - Rows

    @inline(__always)
    private func getTask(_ key: UnsafeRawPointer?, into digest: inout RecordDigest) throws {
        let statement = statements.taskByID
        try bindID(statement, 1, key)
        try forEachRow(statement, "get a task") { row in digest.add(try decodeTask(row)) }
    }

    @inline(__always)
    private func tasksOfProject(_ key: UnsafeRawPointer?, plan: QueryPlan, into digest: inout RecordDigest) throws {
        let statement = plan == .index ? statements.tasksByProject : statements.tasksByProjectScan
        try bindID(statement, 1, key)
        try forEachRow(statement, "query the tasks of a project") { row in digest.add(try decodeTask(row)) }
    }

    /// Decodes the task of the current row of a statement that selects ``taskColumns``.
    ///
    /// - Throws: ``RecordDecodingError`` when a column does not hold what a task stores.
    @inline(__always)
    func decodeTask(_ row: OpaquePointer) throws -> TaskRecord {
        let id = try uuid(row, 0)
        let title = try text(row, 1)
        let projectID = sqlite3_column_type(row, 5) == SQLITE_NULL ? nil : try uuid(row, 5)
        return TaskRecord(
            id: id, title: title, isDone: sqlite3_column_int(row, 2) != 0,
            createdAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(row, 3)),
            dueAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(row, 4)), projectID: projectID)
    }

    /// The 16-byte ID in column `column` of the current row of a statement.
    ///
    /// - Throws: ``RecordDecodingError`` when the column holds no 16-byte blob.
    @inline(__always)
    func uuid(_ row: OpaquePointer, _ column: Int32) throws -> UUID {
        // sqlite3.h: call sqlite3_column_blob() first, then sqlite3_column_bytes() for its size.
        let bytes = sqlite3_column_blob(row, column)
        guard let bytes, sqlite3_column_bytes(row, column) == 16 else {
            throw RecordDecodingError(description: "SQLite column \(column) is not a 16-byte ID")
        }
        return UUID(bytes: UnsafeRawBufferPointer(start: bytes, count: 16))
    }

    /// The UTF-8 text in column `column`.
    @inline(__always)
    private func text(_ row: OpaquePointer, _ column: Int32) throws -> String {
        guard let text = sqlite3_column_text(row, column) else {
            throw RecordDecodingError(description: "SQLite column \(column) is not a text")
        }
        let count = Int(sqlite3_column_bytes(row, column))
        return String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
    }
}
