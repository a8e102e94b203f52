import Foundation
import LMDB
import Testing

/// Ended read transactions kept, reset, for later reads to renew (``Environment/read(_:)``): each later read sees the
/// last commit, a kept one pins no snapshot, and a close or a reopen with more table slots aborts the kept ones first.
@Suite struct ReaderReuseTests {
    @Test func aKeptReaderHoldsItsSlotWithoutASnapshotAndTheNextReadSeesTheLastCommit() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            for round in 0..<20 {
                try environment.write { txn in try txn.put([UInt8(round)], forKey: "k".bytes, in: table) }
                let (value, snapshot) = try environment.read { txn in
                    (try txn.value(forKey: "k".bytes, in: table), txn.id)
                }
                #expect(value == [UInt8(round)])
                // The read's snapshot is the last commit, not the one the kept transaction first read.
                #expect(snapshot == round + 2)
                #expect(try environment.keptReadTransactions() == 1)
                // This process's kept slot is not listed: it is no reader.
                #expect(try environment.readers().isEmpty)
            }
        }
    }

    @Test func nestedAndParallelReadsKeepAtMostTheLimit() async throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn in try txn.put([1], forKey: "k".bytes, in: table) }
            func nest(_ depth: Int) throws {
                guard depth > 0 else { return }
                try environment.read { txn in
                    #expect(try txn.value(forKey: "k".bytes, in: table) == [1])
                    try nest(depth - 1)
                }
            }
            try nest(12)
            // Twelve slots were in use at once; four are kept, the others were aborted and freed.
            #expect(try environment.keptReadTransactions() == 4)
            #expect(try environment.readers().isEmpty)
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for _ in 0..<500 {
                    let value = try? environment.read { txn in try txn.value(forKey: "k".bytes, in: table) }
                    #expect(value == [1], "thread \(thread)")
                }
            }
            #expect(try environment.keptReadTransactions() == 4)
            try nest(1)
            #expect(try environment.readers().isEmpty)
        }
    }

    @Test func fewReaderSlotsKeepNone() throws {
        try withEnvironment(Environment.Configuration(mapSize: 1 << 20, maxReaders: 7)) { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            try environment.read { txn in _ = try txn.value(forKey: "k".bytes, in: table) }
            #expect(try environment.keptReadTransactions() == 0)
        }
    }

    @Test func closingAbortsTheKeptReadersAndThePathOpensAgain() throws {
        let directory = try TemporaryDirectory()
        for round in 0..<5 {
            let environment = try Environment.open(path: directory.path)
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn in try txn.put([UInt8(round)], forKey: "k".bytes, in: table) }
            for _ in 0..<3 {
                #expect(try environment.read { txn in try txn.value(forKey: "k".bytes, in: table) } == [UInt8(round)])
            }
            #expect(try environment.keptReadTransactions() == 1)
            try environment.close()
            #expect(throws: LMDBError.environmentClosed) { try environment.read { _ in } }
            #expect(throws: LMDBError.environmentClosed) { try environment.keptReadTransactions() }
        }
        let environment = try Environment.open(path: directory.path)
        defer { try? environment.close() }
        #expect(try environment.keptReadTransactions() == 0)
    }

    @Test func aReopenForMoreTablesAbortsTheKeptReadersAndReadsGoOn() throws {
        let configuration = Environment.Configuration(mapSize: 1 << 20, maxTables: 2)
        try withEnvironment(configuration) { environment, _ throws in
            var tables: [Table] = []
            for index in 0..<9 {
                // Each read leaves a kept transaction of the current MDB_env; opening past the slots reopens it.
                for table in tables {
                    #expect(try environment.read { txn in try txn.value(forKey: "k".bytes, in: table) } != nil)
                }
                let table = try environment.openTable(named: "t\(index)", create: true)
                try environment.write { txn in try txn.put([UInt8(index)], forKey: "k".bytes, in: table) }
                tables.append(table)
            }
            for (index, table) in tables.enumerated() {
                #expect(try environment.read { txn in try txn.value(forKey: "k".bytes, in: table) } == [UInt8(index)])
            }
        }
    }

    /// Another process grows the map while this one keeps a reset transaction: its renewal fails
    /// (`MDB_MAP_RESIZED`), and the read begins anew on the adopted map. The other process sees the kept slot, with
    /// no snapshot.
    @Test func aMapGrownByAnotherProcessWhileAReaderIsKeptIsAdopted() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path
        let environment = try Environment.open(path: path, configuration: .init(mapSize: 64 << 10))
        defer { try? environment.close() }
        let table = try environment.openTable(named: "shared", create: true)
        try environment.read { _ in }
        #expect(try environment.keptReadTransactions() == 1)
        let parent = getpid()
        await #expect(processExitsWith: .success) { [path = path as String, parent = parent as Int32] in
            do {
                let sawKeptSlot = try fillSharedTableGrowingTheMap(at: path) { child in
                    try child.readers().contains(where: { $0.processID == parent && $0.transactionID == nil })
                }
                guard sawKeptSlot else { exit(2) }
            } catch {
                exit(1)
            }
        }
        #expect(try environment.read { txn in try txn.count(of: table) } == 10_000)
        #expect(try environment.info().mapSize >= 10_000_000)
        #expect(try environment.keptReadTransactions() == 1)
        #expect(try environment.read { txn in try txn.count(of: table) } == 10_000)
    }

    @Test func aMapGrownWhileReadersAreKeptIsRead() throws {
        try withEnvironment(Environment.Configuration(mapSize: 1 << 16)) { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            try environment.read { _ in }
            // Enough to grow the 64 KiB map several times, with a kept reader waiting throughout.
            for chunk in 0..<8 {
                try environment.write { txn in
                    for index in 0..<200 {
                        let value = [UInt8](repeating: UInt8(chunk), count: 200)
                        try txn.put(value, forKey: "\(chunk)-\(index)".bytes, in: table)
                    }
                }
                #expect(try environment.read { txn in try txn.count(of: table) } == (chunk + 1) * 200)
            }
            #expect(try environment.info().mapSize > 1 << 16)
            #expect(try environment.keptReadTransactions() == 1)
        }
    }
}
