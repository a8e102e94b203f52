import Foundation
import KVStoreInspection
import LMDB
import Testing

/// `RecordTableAudit`, on a table of the LMDB binding: when it compares the entries a walk read with the table's own
/// count, and how it names keys that are not record keys.
@Suite struct RecordTableAuditTests {
    /// Opens an environment in a fresh directory with a table of `count` record keys, runs `body`, and closes it.
    private static func withTable(
        of count: Int, _ body: (Environment, Table, String) throws -> Void
    ) throws {
        let store = TemporaryStore()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: false)
        try store.withEnvironment { environment in
            let table = try environment.openTable(named: "records/Book", create: true)
            try environment.write { txn in
                for _ in 0..<count { try txn.put([0x02], forKey: keyBytes(UUID()), in: table) }
            }
            try body(environment, table, store.path)
        }
    }

    /// Visits the first `count` keys of `table` in one read transaction.
    private static func visit(
        _ count: Int, of table: Table, in environment: Environment, audit: inout RecordTableAudit
    ) throws {
        try environment.read { txn in
            try audit.begin(txn)
            var visited = 0
            try txn.withCursor(on: table) { cursor in
                var found = try cursor.first()
                while found && visited < count {
                    _ = try cursor.withCurrent { key, _ in audit.visit(key) }
                    visited += 1
                    found = try cursor.next()
                }
            }
        }
    }

    @Test func aWalkOfOneSnapshotThatReadFewerEntriesThanTheTableCountsIsDamage() throws {
        try Self.withTable(of: 3) { environment, table, path in
            var audit = RecordTableAudit(entity: "Book", table: table, path: path)
            try Self.visit(2, of: table, in: environment, audit: &audit)
            #expect(audit.recordedEntries == 3)
            #expect(audit.visited == 2)
            let damage = audit.damage(isComplete: true)
            #expect(damage.map(\.kind) == [InspectionError.damaged.kind])
            #expect(
                damage.map(\.message)
                    == [
                        "Book's record table says it holds 3 entries, but 2 were read: the table is damaged. Run "
                            + "'kvtool check \(path)' for the whole report"
                    ])
            // A walk stopped early read fewer entries by design.
            #expect(audit.damage(isComplete: false) == [])
        }
    }

    @Test func aWriteCommittedBetweenTwoTransactionsOfTheWalkSkipsTheComparison() throws {
        try Self.withTable(of: 3) { environment, table, path in
            var audit = RecordTableAudit(entity: "Book", table: table, path: path)
            try Self.visit(2, of: table, in: environment, audit: &audit)
            try environment.write { txn in try txn.put([0x02], forKey: keyBytes(UUID()), in: table) }
            try Self.visit(0, of: table, in: environment, audit: &audit)
            #expect(audit.damage(isComplete: true) == [])
        }
    }

    @Test func aWalkThatReadEveryEntryOfATableOfRecordKeysFindsNoDamage() throws {
        try Self.withTable(of: 3) { environment, table, path in
            var audit = RecordTableAudit(entity: "Book", table: table, path: path)
            try Self.visit(3, of: table, in: environment, audit: &audit)
            #expect(audit.nonRecordKeys == 0)
            #expect(audit.damage(isComplete: true) == [])
        }
    }

    @Test func aLongKeyThatIsNotARecordKeyIsShownCut() throws {
        try Self.withTable(of: 1) { environment, table, path in
            let long = [UInt8](repeating: 0xFF, count: 40) + [0x01]
            try environment.write { txn in try txn.put([0x02], forKey: long, in: table) }
            var audit = RecordTableAudit(entity: "Book", table: table, path: path)
            try Self.visit(2, of: table, in: environment, audit: &audit)
            #expect(audit.nonRecordKeys == 1)
            #expect(audit.firstNonRecordKey == long)
            #expect(
                audit.damage(isComplete: true).map(\.message)
                    == [
                        "Book's record table holds 1 key that is not a record key (16-byte IDs): "
                            + String(repeating: "FF", count: 32) + "… (41 bytes); it was skipped. The store is "
                            + "damaged: run 'kvtool check \(path)' for the whole report"
                    ])
        }
    }
}
