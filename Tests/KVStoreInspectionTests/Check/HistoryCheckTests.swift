import Foundation
import KVStore
import KVStoreInspection
import LMDB
import Testing

/// The integrity check of a store's change history: clean when whole, an error naming what is wrong otherwise.
@Suite struct HistoryCheckTests {
    /// Writes a store whose history is on, with `commits` commits recorded.
    private static func writeWithHistory(_ store: borrowing TemporaryStore, commits: Int = 5) throws {
        let container = try ModelContainer(
            for: Book.self, Handle.self, configuration: ModelConfiguration(path: store.path, durability: .off))
        try container.enableHistory(retention: .unlimited)
        for index in 0..<commits {
            try container.write { txn in try txn.insert(Handle(path: "/tmp/\(index)")) }
        }
        try container.close()
    }

    @Test func aWholeHistoryChecksClean() throws {
        let store = TemporaryStore()
        try Self.writeWithHistory(store)
        let report = try StoreInspection.check(path: store.path, chunkSize: 2)
        #expect(report.problems == [])
    }

    @Test func aDamagedEntryIsAnError() throws {
        let store = TemporaryStore()
        try Self.writeWithHistory(store)
        try store.withEnvironment { environment in
            let table = try environment.openTable(named: Catalog.historyTableName)
            try environment.write { txn in
                let key: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 3]
                var value = try #require(try txn.value(forKey: key, in: table))
                value[value.count / 2] ^= 0x08
                try txn.put(value, forKey: key, in: table)
            }
        }
        let report = try StoreInspection.check(path: store.path, chunkSize: 2)
        #expect(
            report.errors.map(\.message) == [
                "history: The history entry 3 is damaged: its checksum does not match its bytes. Run 'kvtool check'; "
                    + "delete the history up to it with deleteHistory(before:) to read past it"
            ])
    }

    @Test func aMissingEntryIsAnError() throws {
        let store = TemporaryStore()
        try Self.writeWithHistory(store)
        try store.withEnvironment { environment in
            let table = try environment.openTable(named: Catalog.historyTableName)
            try environment.write { txn in _ = try txn.delete(forKey: [0, 0, 0, 0, 0, 0, 0, 4] as [UInt8], in: table) }
        }
        let report = try StoreInspection.check(path: store.path, chunkSize: 2)
        #expect(
            report.errors.map(\.message) == [
                "history: entry 4 is missing; the positions from the first kept to the last given must all be there"
            ])
    }

    @Test func aMissingTableIsAnError() throws {
        let store = TemporaryStore()
        try Self.writeWithHistory(store)
        try store.withEnvironment { environment in
            let table = try environment.openTable(named: Catalog.historyTableName)
            try environment.dropTable(table)
        }
        let report = try StoreInspection.check(path: store.path)
        #expect(
            report.errors.map(\.message) == [
                "history: the catalog says the store records history, and the history table is missing; switch history "
                    + "off and on again to start a new one"
            ])
    }
}
