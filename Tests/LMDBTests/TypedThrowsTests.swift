import LMDB
import Testing

/// The binding's calls that take no closure throw ``LMDBError`` typed, so a caller reads the code and context of
/// what it caught without a cast. The closures and functions below are declared `throws(LMDBError)`: the file compiles
/// only while every call in them throws nothing else.
@Suite struct TypedThrowsTests {
    @Test func aCaughtErrorOfAClosureFreeCallIsAnLMDBError() throws {
        let directory = try TemporaryDirectory()
        let environment = try Environment.open(path: directory.path)
        defer { try? environment.close() }
        do {
            _ = try environment.openTable(named: "missing")
            Issue.record("A missing table opened")
        } catch {
            #expect(error.code == LMDBError.notFound.code)
            #expect(error.table == "missing")
        }
    }

    @Test func environmentTableTransactionAndCursorCallsThrowLMDBError() throws {
        let directory = try TemporaryDirectory()
        let open = { () throws(LMDBError) -> (Environment, Table) in
            let environment = try Environment.open(path: directory.path)
            return (environment, try environment.openTable(named: "t", options: [.dupSort], create: true))
        }
        let (environment, table) = try open()
        defer { try? environment.close() }
        let deleted = try environment.write { txn in try Self.write(txn, table) }
        #expect(deleted == (true, false))
        let read = try environment.read { txn in try Self.read(txn, table) }
        #expect(read.value == "1".bytes)
        #expect(read.hasB)
        #expect(read.count == 2 && read.entries == 2)
        #expect(read.keys == ["a", "b"])
        let moves = try environment.read { txn in try txn.withCursor(on: table) { cursor in try Self.move(cursor) } }
        #expect(moves == Array(repeating: true, count: 11))
        let facts = { () throws(LMDBError) in
            try environment.sync()
            try environment.releaseMappedPages()
            return (
                stale: try environment.clearStaleReaders(), info: try environment.info(),
                readers: try environment.readers().count, report: try environment.checkPages(scope: .roots)
            )
        }
        let (stale, info, readers, report) = try facts()
        #expect(stale == 0)
        #expect(info.lastTransactionID == 2)
        #expect(readers == 0)
        #expect(report.isClean)
        let copyAndDrop = { () throws(LMDBError) in
            try environment.copy(to: directory.appending("copy"))
            try environment.dropTable(table)
        }
        try copyAndDrop()
        #expect(throws: LMDBError.notFound) { try environment.openTable(named: "t") }
    }

    // Transactions and cursors are lent to closures that throw untyped; these functions, which throw LMDBError only,
    // show that their calls do too. (Swift 6.3 crashes converting a `{ txn throws(LMDBError) in }` closure, which
    // borrows a non-copyable value, to an untyped one.)

    private static func write(_ txn: borrowing Transaction, _ table: Table) throws(LMDBError) -> (Bool, Bool) {
        try txn.put("1".bytes, forKey: "a".bytes, in: table)
        try txn.put("2".bytes, forKey: "a".bytes, in: table)
        try txn.put("3".bytes, forKey: "b".bytes, in: table)
        return (try txn.delete("2".bytes, forKey: "a".bytes, in: table), try txn.delete(forKey: "c".bytes, in: table))
    }

    private static func read(
        _ txn: borrowing Transaction, _ table: Table
    ) throws(LMDBError) -> (value: [UInt8]?, hasB: Bool, count: Int, entries: Int, keys: [String]) {
        (
            value: try txn.value(forKey: "a".bytes, in: table), hasB: try txn.containsKey("b".bytes, in: table),
            count: try txn.count(of: table), entries: try txn.statistics(of: table).entries,
            keys: try txn.entries(in: table).map(\.key.string)
        )
    }

    private static func move(_ cursor: borrowing Cursor) throws(LMDBError) -> [Bool] {
        [
            try cursor.first(), try cursor.duplicateCount() == 1, try cursor.current()?.value == "1".bytes,
            try cursor.next(), try !cursor.nextDuplicate(), try cursor.seek(to: "a".bytes),
            try cursor.seek(to: "b".bytes, value: "3".bytes), try cursor.seek(atOrAfter: "aa".bytes),
            try cursor.current()?.key == "b".bytes, try cursor.previousKey(), try cursor.last(),
        ]
    }
}
