import CSQLite
import Foundation

/// The second baseline: the scenarios' work done through the SQLite C API, as a careful C programmer would write it
/// for speed.
///
/// One connection in WAL mode with normal locking (other processes may open the database, as LMDB allows), foreign
/// keys on, `synchronous` matched to the run's durability (``CommitSync/sqliteSynchronous``), a page cache and a
/// memory map as large as the LMDB sides' map, and every statement prepared once (`SQLITE_PREPARE_PERSISTENT`) and
/// reused: reset and rebound, never prepared in a timed region. Schema:
///
/// ```sql
/// CREATE TABLE project(id BLOB PRIMARY KEY NOT NULL, name TEXT NOT NULL) WITHOUT ROWID;
/// CREATE TABLE task(id BLOB PRIMARY KEY NOT NULL, title TEXT NOT NULL, isDone INTEGER NOT NULL,
///     createdAt REAL NOT NULL, dueAt REAL NOT NULL,
///     projectID BLOB REFERENCES project(id) ON DELETE CASCADE) WITHOUT ROWID;
/// CREATE INDEX task_projectID ON task(projectID);
/// ```
///
/// IDs are their 16 bytes; dates are `timeIntervalSinceReferenceDate`, so that they read back bit for bit. Reads
/// decode each row into a ``TaskRecord`` and fold it into a ``RecordDigest``, which the scenarios compare with the
/// KVStore subject's. The connection is used by the thread that opened it only (`SQLITE_OPEN_NOMUTEX`).
final class RawSQLite {
    /// The side's name in reports.
    static let name = "SQLite"
    /// The database file's name in its directory.
    static let fileName = "kvbench.sqlite"

    /// The `sqlite3` connection.
    let database: OpaquePointer
    /// The prepared statements, finalized by ``close()``.
    let statements: Statements
    /// The `SELECT ... WHERE id IN (?, ...)` statements prepared so far, by their number of parameters.
    var idListStatements: [Int: OpaquePointer] = [:]

    /// The columns every task read selects, in the order ``decodeTask(_:)`` reads them.
    static let taskColumns = "id, title, isDone, createdAt, dueAt, projectID"

    /// The full scan of the query scenario: SQLite ignores `NOT INDEXED` on a `WITHOUT ROWID` table (3.40 still
    /// searches the index), so the unary `+`, which makes a term unusable by any index, forces the scan that tests
    /// the column of every row; ``init(directory:settings:)`` checks the plan.
    static let fullScanQuery = "SELECT \(taskColumns) FROM task NOT INDEXED WHERE +projectID = ?1"

    /// The statements of the scenarios, each prepared once.
    struct Statements {
        /// `BEGIN`: a read transaction, which takes its snapshot at the first read.
        let begin: OpaquePointer
        /// `BEGIN IMMEDIATE`: a write transaction, which takes the write lock at once.
        let beginImmediate: OpaquePointer
        /// `COMMIT`.
        let commit: OpaquePointer
        /// `ROLLBACK`.
        let rollback: OpaquePointer
        /// `INSERT INTO project`: ID, name.
        let insertProject: OpaquePointer
        /// `INSERT INTO task`: every column.
        let insertTask: OpaquePointer
        /// A task by its ID.
        let taskByID: OpaquePointer
        /// The tasks of a project, through the index.
        let tasksByProject: OpaquePointer
        /// The tasks of a project, by scanning the table (``RawSQLite/fullScanQuery``).
        let tasksByProjectScan: OpaquePointer
        /// The number of tasks of a project, counted in the index.
        let countByProject: OpaquePointer
        /// ``TaskChange/apply(to:)`` in SQL, for a task that keeps its project.
        let update: OpaquePointer
        /// ``TaskChange/apply(to:)`` in SQL, for a task that moves to another project.
        let updateMoving: OpaquePointer
        /// A project by its ID, and by the foreign key's cascade its tasks.
        let deleteProject: OpaquePointer
        /// Every task.
        let allTasks: OpaquePointer
        /// Every project.
        let allProjects: OpaquePointer

        /// Every statement, for finalizing.
        var all: [OpaquePointer] {
            [
                begin, beginImmediate, commit, rollback, insertProject, insertTask, taskByID, tasksByProject,
                tasksByProjectScan, countByProject, update, updateMoving, deleteProject, allTasks, allProjects,
            ]
        }
    }

    /// Creates the database in `directory`, sets the connection up and prepares the statements.
    ///
    /// - Parameters:
    ///   - directory: An existing, empty directory.
    ///   - settings: The map size of the LMDB sides, which sizes the page cache and the memory map, and the
    ///     durability.
    /// - Throws: ``RawSQLiteError`` when SQLite fails; the connection is closed then.
    init(directory: String, settings: StoreSettings) throws {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2("\(directory)/\(Self.fileName)", &opened, flags, nil)
        guard code == SQLITE_OK, let database = opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close(opened)
            throw RawSQLiteError(code: code, operation: "open the database in \(directory)", message: message)
        }
        self.database = database
        var prepared: [OpaquePointer] = []
        do {
            try Self.configure(database, settings: settings)
            func prepare(_ sql: String) throws -> OpaquePointer {
                let statement = try Self.prepare(sql, in: database)
                prepared.append(statement)
                return statement
            }
            let columns = Self.taskColumns
            try Self.requirePlan(of: Self.fullScanQuery, in: database, toContain: "SCAN task")
            try Self.requirePlan(
                of: "SELECT \(columns) FROM task WHERE projectID = ?1", in: database,
                toContain: "USING INDEX task_projectID")
            statements = Statements(
                begin: try prepare("BEGIN"),
                beginImmediate: try prepare("BEGIN IMMEDIATE"),
                commit: try prepare("COMMIT"),
                rollback: try prepare("ROLLBACK"),
                insertProject: try prepare("INSERT INTO project(id, name) VALUES (?1, ?2)"),
                insertTask: try prepare(
                    "INSERT INTO task(\(columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
                taskByID: try prepare("SELECT \(columns) FROM task WHERE id = ?1"),
                tasksByProject: try prepare("SELECT \(columns) FROM task WHERE projectID = ?1"),
                tasksByProjectScan: try prepare(Self.fullScanQuery),
                countByProject: try prepare("SELECT count(*) FROM task WHERE projectID = ?1"),
                // TaskChange.apply in SQL: the engine reads, changes and writes the row. A statement that sets
                // projectID rewrites the row's index entry and checks the foreign key even when the value stays, so
                // the tasks that keep their project get a statement without it.
                update: try prepare(
                    "UPDATE task SET isDone = NOT isDone, dueAt = dueAt + 86400.0 WHERE id = ?1"),
                updateMoving: try prepare(
                    "UPDATE task SET isDone = NOT isDone, dueAt = dueAt + 86400.0, projectID = ?2 WHERE id = ?1"),
                deleteProject: try prepare("DELETE FROM project WHERE id = ?1"),
                allTasks: try prepare("SELECT \(columns) FROM task"),
                allProjects: try prepare("SELECT id, name FROM project"))
        } catch {
            for statement in prepared { sqlite3_finalize(statement) }
            sqlite3_close(database)
            throw error
        }
    }

    /// Sets the connection up and creates the schema.
    private static func configure(_ database: OpaquePointer, settings: StoreSettings) throws {
        let cacheKibibytes = settings.mapSize / 1_024
        try execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA locking_mode = NORMAL;
            PRAGMA synchronous = \(settings.durability.sqliteSynchronous);
            PRAGMA foreign_keys = ON;
            PRAGMA cache_size = -\(cacheKibibytes);
            PRAGMA mmap_size = \(settings.mapSize);
            PRAGMA temp_store = MEMORY;
            CREATE TABLE project(id BLOB PRIMARY KEY NOT NULL, name TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE task(
                id BLOB PRIMARY KEY NOT NULL, title TEXT NOT NULL, isDone INTEGER NOT NULL, createdAt REAL NOT NULL,
                dueAt REAL NOT NULL, projectID BLOB REFERENCES project(id) ON DELETE CASCADE) WITHOUT ROWID;
            CREATE INDEX task_projectID ON task(projectID);
            """, in: database, operation: "set up the connection and create the schema")
        // journal_mode answers with the mode it set, which is not WAL where the file system cannot share memory.
        let mode = try prepare("PRAGMA journal_mode", in: database)
        defer { sqlite3_finalize(mode) }
        guard sqlite3_step(mode) == SQLITE_ROW, let text = sqlite3_column_text(mode, 0),
            String(cString: text).lowercased() == "wal"
        else {
            throw RawSQLiteError(
                code: SQLITE_ERROR, operation: "switch to WAL mode",
                message: "the journal mode is not WAL; put TMPDIR on a local file system")
        }
    }

    /// Finalizes the statements and closes the connection.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite cannot close it.
    func close() throws {
        for statement in statements.all { sqlite3_finalize(statement) }
        for statement in idListStatements.values { sqlite3_finalize(statement) }
        idListStatements = [:]
        let code = sqlite3_close(database)
        if code != SQLITE_OK {
            throw RawSQLiteError(
                code: code, operation: "close the database", message: String(cString: sqlite3_errstr(code)))
        }
    }

    // MARK: - Statements

    /// Prepares `sql` to be run many times.
    static func prepare(_ sql: String, in database: OpaquePointer) throws -> OpaquePointer {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard code == SQLITE_OK, let statement = prepared else {
            sqlite3_finalize(prepared)
            throw RawSQLiteError(
                code: code, operation: "prepare \(sql)", message: String(cString: sqlite3_errmsg(database)))
        }
        return statement
    }

    /// Checks that SQLite's plan for `sql` says `expected`, such as "SCAN task" or the name of the index it must use.
    ///
    /// - Returns: The plan, its lines joined by "; ".
    /// - Throws: ``RawSQLiteError`` when SQLite fails or plans otherwise.
    @discardableResult
    static func requirePlan(of sql: String, in database: OpaquePointer, toContain expected: String) throws -> String {
        let statement = try prepare("EXPLAIN QUERY PLAN \(sql)", in: database)
        defer { sqlite3_finalize(statement) }
        var plan: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if let detail = sqlite3_column_text(statement, 3) { plan.append(String(cString: detail)) }
        }
        let described = plan.joined(separator: "; ")
        guard described.contains(expected) else {
            throw RawSQLiteError(
                code: SQLITE_ERROR, operation: "plan \(sql) as kvbench expects (\(expected))",
                message: "its plan is \(described); change the statement so that it measures what its row says")
        }
        return described
    }

    /// Runs `sql`, one or more statements without results.
    static func execute(_ sql: String, in database: OpaquePointer, operation: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(database, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        if code != SQLITE_OK {
            throw RawSQLiteError(
                code: code, operation: operation,
                message: message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code)))
        }
    }

    /// Steps `statement`, which returns no rows, and resets it.
    ///
    /// - Throws: ``RawSQLiteError`` when the step does not end with `SQLITE_DONE`.
    @inline(__always)
    func run(_ statement: OpaquePointer, _ operation: StaticString) throws {
        let code = sqlite3_step(statement)
        if code != SQLITE_DONE { throw failure(code, operation, resetting: statement) }
        sqlite3_reset(statement)
    }

    /// Steps `statement` and calls `body` for each row, then resets it.
    ///
    /// - Warning: The row's values are SQLite's memory: valid until the next step.
    @inline(__always)
    func forEachRow(
        _ statement: OpaquePointer, _ operation: StaticString, _ body: (OpaquePointer) throws -> Void
    )
        throws
    {
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW {
                do {
                    try body(statement)
                } catch {
                    sqlite3_reset(statement)
                    throw error
                }
            } else if code == SQLITE_DONE {
                sqlite3_reset(statement)
                return
            } else {
                throw failure(code, operation, resetting: statement)
            }
        }
    }

    /// The error of a failed step, with SQLite's message, after resetting the statement.
    func failure(_ code: Int32, _ operation: StaticString, resetting statement: OpaquePointer) -> RawSQLiteError {
        let error = RawSQLiteError(
            code: code, operation: "\(operation)", message: String(cString: sqlite3_errmsg(database)))
        sqlite3_reset(statement)
        return error
    }

    /// Binds the 16 bytes at `bytes` to parameter `index` of `statement`, without copying them: they must stay
    /// valid until the statement is reset.
    @inline(__always)
    func bindID(_ statement: OpaquePointer, _ index: Int32, _ bytes: UnsafeRawPointer?) throws {
        // A nil destructor is SQLITE_STATIC: SQLite does not copy the bytes.
        let code = sqlite3_bind_blob(statement, index, bytes, 16, nil)
        if code != SQLITE_OK {
            throw RawSQLiteError(
                code: code, operation: "bind an ID", message: String(cString: sqlite3_errmsg(database)))
        }
    }

    // MARK: - Transactions

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`) and commits it, or rolls it back when `body` throws.
    @inline(__always)
    func write<R>(_ body: () throws -> R) throws -> R {
        try transaction(begin: statements.beginImmediate, "begin a write transaction", end: "commit", body)
    }

    /// Runs `body` in one read transaction: a deferred `BEGIN`, which takes its snapshot at the first read, then
    /// `COMMIT`.
    @inline(__always)
    func read<R>(_ body: () throws -> R) throws -> R {
        try transaction(begin: statements.begin, "begin a read transaction", end: "end a read transaction", body)
    }

    /// Runs `begin`, then `body`, then `COMMIT`, or `ROLLBACK` when `body` throws; `starting` and `ending` name the
    /// two steps in errors.
    @inline(__always)
    private func transaction<R>(
        begin: OpaquePointer, _ starting: StaticString, end ending: StaticString, _ body: () throws -> R
    ) throws -> R {
        try run(begin, starting)
        let result: R
        do {
            result = try body()
        } catch {
            sqlite3_step(statements.rollback)
            sqlite3_reset(statements.rollback)
            throw error
        }
        try run(statements.commit, ending)
        return result
    }

    // MARK: - Inserting

    /// Inserts projects in one write transaction.
    func insert(projects: ArraySlice<ProjectRecord>) throws {
        try write {
            for project in projects { try insert(project) }
        }
    }

    /// Inserts tasks in one write transaction; SQLite maintains the `projectID` index and checks, through the
    /// foreign key, that each project exists.
    ///
    /// A single task is inserted by the statement alone, which is then its own write transaction (autocommit): a
    /// `BEGIN` and `COMMIT` around it would add two statements and nothing else.
    func insert(tasks: ArraySlice<TaskRecord>) throws {
        if tasks.count == 1, let task = tasks.first {
            try insert(task)
        } else {
            try write {
                for task in tasks { try insert(task) }
            }
        }
    }

    @inline(__always)
    private func insert(_ project: ProjectRecord) throws {
        let statement = statements.insertProject
        var name = project.name
        try withUnsafeBytes(of: project.id.uuid) { id in
            try name.withUTF8 { name in
                try bindID(statement, 1, id.baseAddress)
                try bindText(statement, 2, name)
                try run(statement, "insert a project")
            }
        }
    }

    @inline(__always)
    private func insert(_ task: TaskRecord) throws {
        let statement = statements.insertTask
        var title = task.title
        try withUnsafeBytes(of: task.id.uuid) { id in
            try withUnsafeBytes(of: task.project.uuid) { project in
                try title.withUTF8 { title in
                    try bindID(statement, 1, id.baseAddress)
                    try bindText(statement, 2, title)
                    try check(sqlite3_bind_int(statement, 3, task.isDone ? 1 : 0), "bind isDone")
                    try check(
                        sqlite3_bind_double(statement, 4, task.createdAt.timeIntervalSinceReferenceDate),
                        "bind createdAt")
                    try check(
                        sqlite3_bind_double(statement, 5, task.dueAt.timeIntervalSinceReferenceDate), "bind dueAt")
                    if task.projectID == nil {
                        try check(sqlite3_bind_null(statement, 6), "bind projectID")
                    } else {
                        try bindID(statement, 6, project.baseAddress)
                    }
                    try run(statement, "insert a task")
                }
            }
        }
    }

    /// Binds UTF-8 text that must stay valid until the statement has run.
    ///
    /// - Throws: ``RawSQLiteError`` when SQLite fails.
    @inline(__always)
    func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: UnsafeBufferPointer<UInt8>) throws {
        let code = text.withMemoryRebound(to: CChar.self) { text in
            sqlite3_bind_text(statement, index, text.baseAddress, Int32(text.count), nil)
        }
        try check(code, "bind a text")
    }

    /// Throws ``RawSQLiteError`` for a result code other than `SQLITE_OK`.
    @inline(__always)
    func check(_ code: Int32, _ operation: StaticString) throws {
        if code != SQLITE_OK {
            throw RawSQLiteError(
                code: code, operation: "\(operation)", message: String(cString: sqlite3_errmsg(database)))
        }
    }
}

/// A failed call of the SQLite side.
struct RawSQLiteError: Error, CustomStringConvertible {
    /// The result code.
    var code: Int32
    /// What the side was doing.
    var operation: String
    /// SQLite's message.
    var message: String

    /// What failed and SQLite's message for it.
    var description: String {
        "SQLite could not \(operation): \(message) (result code \(code))"
    }
}

extension CommitSync {
    /// The `PRAGMA synchronous` level that matches the durability: OFF for no sync, NORMAL for synced data (in WAL
    /// mode, commits are not flushed; checkpoints are), FULL for synced commits.
    var sqliteSynchronous: String {
        switch self {
        case .noSync: "OFF"
        case .syncData: "NORMAL"
        case .sync: "FULL"
        }
    }
}
