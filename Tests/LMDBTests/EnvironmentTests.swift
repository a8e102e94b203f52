import Foundation
import LMDB
import Synchronization
import Testing

@Suite struct EnvironmentTests {
    @Test func openCreatesDataAndLockFilesWithOwnerOnlyMode() throws {
        try withEnvironment { environment, path throws in
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(FileManager.default.fileExists(atPath: path + "/lock.mdb"))
            #expect(environment.maxKeySize == 511)
            #expect(environment.pageSize == 4096)
            #expect(!environment.isReadOnly)
        }
    }

    @Test func fileModeIsConfigurable() throws {
        try withEnvironment(Environment.Configuration(mapSize: 1 << 20, fileMode: 0o640)) { _, path throws in
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
            #expect((attributes[.posixPermissions] as? Int) == 0o640)
        }
    }

    @Test func openingOnePathTwiceSharesTheOpenEnvironmentWhateverTheSpelling() throws {
        try withEnvironment { environment, path throws in
            #expect(try Environment.open(path: path).sharesEnvironment(with: environment))
            #expect(try Environment.open(path: path + "/").sharesEnvironment(with: environment))
            #expect(try Environment.open(path: path + "/./").sharesEnvironment(with: environment))
            let link = path + "-link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
            defer { try? FileManager.default.removeItem(atPath: link) }
            #expect(try Environment.open(path: link).sharesEnvironment(with: environment))
            let parent = (path as NSString).deletingLastPathComponent
            let name = (path as NSString).lastPathComponent
            #expect(
                try Environment.open(path: parent + "/../" + (parent as NSString).lastPathComponent + "/" + name)
                    .sharesEnvironment(with: environment))
        }
    }

    @Test func anOpenThatAsksForMoreDurabilityRaisesItForEveryHandleAndNoneLowersIt() throws {
        let directory = try TemporaryDirectory()
        func open(_ options: Environment.Options) throws -> Environment {
            try Environment.open(
                path: directory.path, configuration: Environment.Configuration(mapSize: 1 << 20, options: options))
        }
        let unsynced = try open(.noSync)
        #expect(unsynced.syncOptions == .noSync)
        let dataSynced = try open(.noMetaSync)
        #expect(unsynced.syncOptions == .noMetaSync)
        #expect(dataSynced.syncOptions == .noMetaSync)
        let weaker = try open(.noSync)
        #expect(weaker.syncOptions == .noMetaSync)
        let synced = try open([])
        for environment in [unsynced, dataSynced, weaker, synced] { #expect(environment.syncOptions == []) }
        let table = try synced.openTable(named: "t", create: true)
        try unsynced.write { txn in try txn.put([1], forKey: [1], in: table) }
        for environment in [synced, weaker, dataSynced] { try environment.close() }
        // A closed handle reports the level its environment had last.
        #expect(synced.syncOptions == [])
        #expect(unsynced.syncOptions == [])
        try unsynced.close()
    }

    @Test func closingOneHandleLeavesTheOthersWorking() throws {
        let directory = try TemporaryDirectory()
        let first = try Environment.open(path: directory.path)
        let second = try Environment.open(path: directory.path)
        let table = try first.openTable(named: "t", create: true)
        try first.close()
        #expect(first.isClosed)
        #expect(!second.isClosed)
        #expect(throws: LMDBError.environmentClosed) { try first.read { _ in } }
        #expect(throws: LMDBError.environmentClosed) { try first.openTable(named: "t") }
        // The table opened through the closed handle belongs to the environment, which is still open.
        try second.write { txn in try txn.put("v".bytes, forKey: "k".bytes, in: table) }
        #expect(try second.read { txn in try txn.value(forKey: "k".bytes, in: table) } == "v".bytes)
        try second.close()
        #expect(second.isClosed)
        // The last handle closed the environment: its tables are gone with it, and a new open starts afresh.
        let third = try Environment.open(path: directory.path)
        defer { try? third.close() }
        #expect(!third.sharesEnvironment(with: second))
        #expect(throws: LMDBError.badTable) { try third.read { txn in try txn.value(forKey: "k".bytes, in: table) } }
        let reopened = try third.openTable(named: "t")
        #expect(try third.read { txn in try txn.value(forKey: "k".bytes, in: reopened) } == "v".bytes)
    }

    @Test func aTableHandleOfAClosedEnvironmentNeverReachesAnotherTable() throws {
        let directory = try TemporaryDirectory()
        let other = try TemporaryDirectory()
        let first = try Environment.open(path: directory.path)
        let a = try first.openTable(named: "a", create: true)
        try first.write { txn in try txn.put("from a".bytes, forKey: "k".bytes, in: a) }
        try first.close()
        // The same MDB_dbi numbers come back in every environment: a stale handle must not reach "b" or "c".
        let second = try Environment.open(path: directory.path)
        defer { try? second.close() }
        let b = try second.openTable(named: "b", create: true)
        let third = try Environment.open(path: other.path)
        defer { try? third.close() }
        let c = try third.openTable(named: "c", create: true)
        #expect(throws: LMDBError.badTable) {
            try second.write { txn in try txn.put("x".bytes, forKey: "k".bytes, in: a) }
        }
        #expect(throws: LMDBError.badTable) { try third.read { txn in try txn.value(forKey: "k".bytes, in: b) } }
        #expect(throws: LMDBError.badTable) { try second.read { txn in try txn.value(forKey: "k".bytes, in: c) } }
        #expect(try second.read { txn in try txn.count(of: b) } == 0)
        #expect(try third.read { txn in try txn.count(of: c) } == 0)
    }

    @Test func droppingTheLastHandleOfSeveralClosesTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        let kept = try Environment.open(path: directory.path)
        do {
            let dropped = try Environment.open(path: directory.path)
            _ = try dropped.openTable(named: "t", create: true)
        }
        #expect(!kept.isClosed)
        let table = try kept.openTable(named: "t")
        try kept.write { txn in try txn.put("v".bytes, forKey: "k".bytes, in: table) }
        try kept.close()
    }

    @Test func reopeningAfterCloseGivesANewEnvironmentWithTheData() throws {
        let directory = try TemporaryDirectory()
        let first = try Environment.open(path: directory.path)
        let table = try first.openTable(named: "t", create: true)
        try first.write { txn in try txn.put("v".bytes, forKey: "k".bytes, in: table) }
        try first.close()
        #expect(first.isClosed)
        let second = try Environment.open(path: directory.path)
        defer { try? second.close() }
        #expect(second !== first)
        let reopened = try second.openTable(named: "t")
        #expect(try second.read { txn in try txn.value(forKey: "k".bytes, in: reopened) } == "v".bytes)
    }

    @Test func droppingTheLastReferenceClosesTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        weak var released: Environment?
        do {
            let environment = try Environment.open(path: directory.path)
            released = environment
            _ = try environment.openTable(named: "t", create: true)
        }
        #expect(released == nil)
        let environment = try Environment.open(path: directory.path)
        defer { try? environment.close() }
        #expect(try environment.openTable(named: "t").name == "t")
    }

    @Test func singleFileEnvironment() throws {
        let directory = try TemporaryDirectory()
        let file = directory.appending("store.lmdb")
        let configuration = Environment.Configuration(mapSize: 1 << 20, options: .noSubdirectory)
        let environment = try Environment.open(path: file, configuration: configuration)
        defer { try? environment.close() }
        let table = try environment.openTable(named: nil)
        try environment.write { txn in try txn.put("1".bytes, forKey: "a".bytes, in: table) }
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(FileManager.default.fileExists(atPath: file + "-lock"))
        #expect(
            try Environment.open(path: directory.path + "/./store.lmdb", configuration: configuration)
                .sharesEnvironment(with: environment))
    }

    @Test func infoAndStatisticsDescribeTheEnvironment() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn throws in
                for index in 0..<100 { try txn.put("value".bytes, forKey: "key\(index)".bytes, in: table) }
            }
            let info = try environment.info()
            #expect(info.mapSize == 1 << 20)
            #expect(info.maxReaders == 126)
            #expect(info.lastTransactionID >= 2)
            #expect(info.lastPageNumber > 2)
            let main = try environment.statistics()
            #expect(main.pageSize == 4096)
            #expect(main.entries == 1)  // the named table
            let stats = try environment.read { txn in try txn.statistics(of: table) }
            #expect(stats.entries == 100)
            #expect(stats.depth >= 1)
            #expect(stats.leafPages >= 1)
        }
    }

    @Test func syncFlushesWithAndWithoutForce() throws {
        try withEnvironment(Environment.Configuration(mapSize: 1 << 20, options: .noSync)) { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn in try txn.put("1".bytes, forKey: "a".bytes, in: table) }
            try environment.sync()
            try environment.sync(force: false)
        }
    }

    @Test(arguments: [false, true])
    func copyMakesAStoreThatOpensWithTheSameData(compacting: Bool) throws {
        try withEnvironment(Environment.Configuration(mapSize: 8 << 20)) { environment, path throws in
            let table = try environment.openTable(named: "numbers", create: true)
            try environment.write { txn throws in
                for index in 0..<2000 {
                    try txn.put(Array(repeating: 7, count: 100), forKey: "\(index)".bytes, in: table)
                }
            }
            // Free pages that a compacting copy leaves out.
            try environment.write { txn throws in
                for index in 0..<1500 { try txn.delete(forKey: "\(index)".bytes, in: table) }
            }
            let destination = path + "-copy"
            defer { try? FileManager.default.removeItem(atPath: destination) }
            try environment.copy(to: destination, compacting: compacting)
            let original = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int ?? 0
            let copied = try FileManager.default.attributesOfItem(atPath: destination + "/data.mdb")[.size] as? Int ?? 0
            if compacting { #expect(copied < original) }
            let mode = try FileManager.default.attributesOfItem(atPath: destination + "/data.mdb")[.posixPermissions]
            #expect(mode as? Int == 0o600)

            let copy = try Environment.open(path: destination)
            defer { try? copy.close() }
            let copiedTable = try copy.openTable(named: "numbers")
            let entries = try copy.read { txn in try txn.entries(in: copiedTable) }
            let expected = try environment.read { txn in try txn.entries(in: table) }
            #expect(entries == expected)
            #expect(entries.count == 500)

            // A copy never overwrites.
            #expect(throws: LMDBError.fileExists) { try environment.copy(to: destination) }
        }
    }

    @Test(arguments: [false, true])
    func copyToADescriptorWritesTheSameData(compacting: Bool) throws {
        try withEnvironment(Environment.Configuration(mapSize: 8 << 20)) { environment, path throws in
            let table = try environment.openTable(named: "numbers", create: true)
            try environment.write { txn throws in
                for index in 0..<500 {
                    try txn.put(Array(repeating: 7, count: 100), forKey: "\(index)".bytes, in: table)
                }
            }
            let destination = path + "-copy"
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: destination) }
            let descriptor = open(destination + "/data.mdb", O_WRONLY | O_CREAT | O_EXCL, 0o600)
            try #require(descriptor >= 0)
            try environment.copy(toDescriptor: descriptor, compacting: compacting)
            #expect(close(descriptor) == 0)
            let copy = try Environment.open(
                path: destination, configuration: Environment.Configuration(options: [.readOnly, .noLock]))
            defer { try? copy.close() }
            let copiedTable = try copy.openTable(named: "numbers")
            let entries = try copy.read { txn in try txn.entries(in: copiedTable) }
            #expect(entries == (try environment.read { txn in try txn.entries(in: table) }))
            #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == ["data.mdb"], "no lock file")
        }
    }

    @Test(arguments: [false, true])
    func copyToAFullDeviceThrowsTheWriteError(compacting: Bool) throws {
        try withEnvironment { environment, _ throws in
            let full = open("/dev/full", O_WRONLY)
            try #require(full >= 0)
            defer { close(full) }
            #expect(throws: LMDBError(code: ENOSPC)) {
                try environment.copy(toDescriptor: full, compacting: compacting)
            }
        }
    }

    @Test func readersListsActiveReadTransactions() throws {
        try withEnvironment { environment, _ throws in
            #expect(try environment.readers().isEmpty)
            try environment.read { txn throws in
                let readers = try environment.readers()
                #expect(readers.count == 1)
                #expect(readers.first?.processID == getpid())
                #expect(readers.first?.transactionID == txn.id)
                #expect(try environment.info().readersInUse >= 1)
            }
            // The ended transaction is kept, reset, for the next read to renew; this process's kept slots are not
            // listed.
            #expect(try environment.readers().isEmpty)
            #expect(try environment.keptReadTransactions() == 1)
            #expect(try environment.clearStaleReaders() == 0)
        }
    }

    @Test func everyUseOfAClosedEnvironmentThrows() throws {
        let directory = try TemporaryDirectory()
        let environment = try Environment.open(path: directory.path)
        let table = try environment.openTable(named: "t", create: true)
        try environment.close()
        try environment.close()  // closing twice does nothing
        #expect(throws: LMDBError.environmentClosed) { try environment.read { _ in } }
        #expect(throws: LMDBError.environmentClosed) {
            try environment.write { txn in try txn.put("v".bytes, forKey: "k".bytes, in: table) }
        }
        #expect(throws: LMDBError.environmentClosed) { try environment.info() }
        #expect(throws: LMDBError.environmentClosed) { try environment.statistics() }
        #expect(throws: LMDBError.environmentClosed) { try environment.sync() }
        #expect(throws: LMDBError.environmentClosed) { try environment.readers() }
        #expect(throws: LMDBError.environmentClosed) { try environment.clearStaleReaders() }
        #expect(throws: LMDBError.environmentClosed) { try environment.copy(to: directory.appending("c")) }
        #expect(throws: LMDBError.environmentClosed) { try environment.openTable(named: "other", create: true) }
        let error = try #require(throws: LMDBError.self) { try environment.read { _ in } }
        #expect(error.path == directory.path)
    }

    @Test func closingInsideATransactionOfTheSameThreadThrowsInsteadOfDeadlocking() throws {
        try withEnvironment { environment, _ throws in
            #expect(throws: LMDBError.busy) { try environment.read { _ in try environment.close() } }
            #expect(!environment.isClosed)
        }
    }

    @Test func closeWaitsForTransactionsOfOtherThreads() throws {
        let directory = try TemporaryDirectory()
        let environment = try Environment.open(path: directory.path)
        let table = try environment.openTable(named: "t", create: true)
        let started = DispatchSemaphore(value: 0)
        let counted = Counter(-1)
        try onThreads(2) { thread in
            if thread == 0 {
                try environment.read { txn in
                    started.signal()
                    Thread.sleep(forTimeInterval: 0.2)
                    counted.value.store(try txn.count(of: table), ordering: .relaxed)
                }
            } else {
                started.wait()
                try environment.close()
            }
        }
        #expect(counted.value.load(ordering: .relaxed) == 0)
        #expect(environment.isClosed)
    }
}
