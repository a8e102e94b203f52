import Foundation
import LMDB
import Synchronization
import Testing

@Suite struct ConcurrencyTests {
    @Test func aReaderKeepsItsSnapshotWhileAWriterCommits() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn in try txn.put("old".bytes, forKey: "k".bytes, in: table) }
            try environment.read { txn throws in
                let done = DispatchSemaphore(value: 0)
                Thread {
                    try? environment.write { txn in try txn.put("new".bytes, forKey: "k".bytes, in: table) }
                    done.signal()
                }.start()
                done.wait()
                #expect(try txn.value(forKey: "k".bytes, in: table) == "old".bytes)
            }
            #expect(try environment.read { txn in try txn.value(forKey: "k".bytes, in: table) } == "new".bytes)
        }
    }

    @Test func readersOnManyThreadsNeverSeeAPartialTransaction() throws {
        let configuration = Environment.Configuration(mapSize: 4 << 20, options: .noSync)
        try withEnvironment(configuration) { environment, _ in
            let table = try environment.openTable(named: "counters", create: true)
            let keys = (0..<50).map { "key\($0)".bytes }
            try environment.write { txn in for key in keys { try txn.put([0, 0, 0, 0], forKey: key, in: table) } }
            let finished = Flag()
            let commits = 300
            let snapshots = Counter()
            try onThreads(5) { thread in
                if thread == 0 {
                    defer { finished.set() }
                    for commit in 1...commits {
                        let value = withUnsafeBytes(of: UInt32(commit)) { Array($0) }
                        try environment.write { txn in for key in keys { try txn.put(value, forKey: key, in: table) } }
                    }
                    return
                }
                while !finished.isSet {
                    let values = try environment.read { txn in
                        try keys.map { try txn.value(forKey: $0, in: table) ?? [] }
                    }
                    // Every key was written in the same transaction, so a snapshot holds one value.
                    guard Set(values).count == 1 else { throw Torn(values: Set(values).count) }
                    snapshots.value.add(1, ordering: .relaxed)
                }
            }
            #expect(snapshots.value.load(ordering: .relaxed) > 0)
            let last = try environment.read { txn in try txn.value(forKey: keys[0], in: table) }
            #expect(last == withUnsafeBytes(of: UInt32(commits)) { Array($0) })
        }
    }

    @Test func concurrentWritersAllLand() throws {
        let configuration = Environment.Configuration(mapSize: 1 << 20, options: .noSync)
        try withEnvironment(configuration) { environment, _ in
            let table = try environment.openTable(named: nil)
            try onThreads(8) { writer in
                for index in 0..<50 {
                    try environment.write { txn in try txn.put([1], forKey: "\(writer)-\(index)".bytes, in: table) }
                }
            }
            #expect(try environment.read { txn in try txn.count(of: table) } == 400)
        }
    }

    @Test func theMapGrowsFrom64KiBPast200MBWithoutAnError() throws {
        let configuration = Environment.Configuration(mapSize: 64 << 10, options: .noSync)
        try withEnvironment(configuration) { environment, path throws in
            let table = try environment.openTable(named: "blobs", create: true)
            let value = [UInt8](repeating: 0x5A, count: 4000)
            let perTransaction = 2500  // 10 MB per commit
            let total = 52_500  // 210 MB
            var runs = 0
            for chunk in stride(from: 0, to: total, by: perTransaction) {
                try environment.write { txn throws in
                    runs += 1
                    for index in chunk..<(chunk + perTransaction) {
                        try txn.put(
                            value, forKey: withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }, in: table)
                    }
                }
            }
            #expect(runs > total / perTransaction)  // some chunks ran again after the map grew
            let info = try environment.info()
            #expect(info.mapSize >= 210_000_000)
            #expect(try environment.read { txn in try txn.count(of: table) } == total)
            let size = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int ?? 0
            #expect(size > 200_000_000)
        }
    }

    @Test func theMapGrowsWhileOtherThreadsRead() throws {
        let configuration = Environment.Configuration(mapSize: 64 << 10, options: .noSync)
        try withEnvironment(configuration) { environment, _ in
            let table = try environment.openTable(named: "t", create: true)
            let finished = Flag()
            let reads = Counter()
            try onThreads(3) { thread in
                if thread == 0 {
                    defer { finished.set() }
                    for chunk in 0..<20 {
                        try environment.write { txn in
                            for index in 0..<1000 {
                                try txn.put(
                                    [UInt8](repeating: 1, count: 500), forKey: "\(chunk)/\(index)".bytes, in: table)
                            }
                        }
                    }
                    return
                }
                while !finished.isSet {
                    let count = try environment.read { txn in try txn.count(of: table) }
                    guard count % 1000 == 0 else { throw Torn(values: count) }
                    reads.value.add(1, ordering: .relaxed)
                }
            }
            #expect(reads.value.load(ordering: .relaxed) > 0)
            #expect(try environment.read { txn in try txn.count(of: table) } == 20_000)
            #expect(try environment.info().mapSize > 64 << 10)
        }
    }

    @Test func mapFullSurfacesOnlyAtTheMaximumAndLosesNothing() throws {
        let configuration = Environment.Configuration(mapSize: 64 << 10, maxMapSize: 256 << 10)
        try withEnvironment(configuration) { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn in try txn.put("kept".bytes, forKey: "first".bytes, in: table) }
            let error = try #require(throws: LMDBError.self) {
                try environment.write { txn throws in
                    for index in 0..<1000 {
                        try txn.put([UInt8](repeating: 1, count: 1000), forKey: "\(index)".bytes, in: table)
                    }
                }
            }
            #expect(error == .mapFull)
            #expect(error.description.contains("maximum size of 262144 bytes"))
            #expect(try environment.info().mapSize == 256 << 10)
            try environment.read { txn throws in
                #expect(try txn.count(of: table) == 1)
                #expect(try txn.value(forKey: "first".bytes, in: table) == "kept".bytes)
            }
            // The store still takes writes that fit.
            try environment.write { txn in try txn.put("more".bytes, forKey: "second".bytes, in: table) }
        }
    }

    @Test func growthWorksWhenTheBodyWrapsTheError() throws {
        struct Wrapped: Error { let underlying: any Error }
        let configuration = Environment.Configuration(mapSize: 64 << 10, options: .noSync)
        try withEnvironment(configuration) { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                do {
                    for index in 0..<2000 {
                        try txn.put([UInt8](repeating: 1, count: 500), forKey: "\(index)".bytes, in: table)
                    }
                } catch {
                    throw Wrapped(underlying: error)
                }
            }
            #expect(try environment.read { txn in try txn.count(of: table) } == 2000)
        }
    }

    @Test func growthWorksWhenTheBodySwallowsTheError() throws {
        let configuration = Environment.Configuration(mapSize: 64 << 10, options: .noSync)
        try withEnvironment(configuration) { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                for index in 0..<2000 {
                    try? txn.put([UInt8](repeating: 1, count: 500), forKey: "\(index)".bytes, in: table)
                }
            }
            #expect(try environment.read { txn in try txn.count(of: table) } == 2000)
        }
    }

    @Test func aMapGrownByAnotherProcessIsAdopted() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path
        let environment = try Environment.open(path: path, configuration: .init(mapSize: 64 << 10))
        defer { try? environment.close() }
        let table = try environment.openTable(named: "shared", create: true)
        #expect(try environment.info().mapSize == 64 << 10)

        await #expect(processExitsWith: .success) { [path = path as String] in
            do {
                _ = try fillSharedTableGrowingTheMap(at: path)
            } catch {
                exit(1)
            }
        }

        #expect(try environment.read { txn in try txn.count(of: table) } == 10_000)
        #expect(try environment.info().mapSize >= 10_000_000)
        try environment.write { txn in try txn.put([1], forKey: "parent".bytes, in: table) }
        #expect(try environment.read { txn in try txn.count(of: table) } == 10_001)
    }

    @Test func aKilledReadersSlotIsCleared() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path
        // The parent keeps the environment open: the last process to leave would otherwise let the next opener reset
        // the reader table, and there would be no stale slot to see.
        let environment = try Environment.open(path: path)
        defer { try? environment.close() }
        _ = try environment.openTable(named: "t", create: true)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            do {
                let environment = try Environment.open(path: path)
                try environment.read { _ in
                    _ = kill(getpid(), SIGKILL)
                    Thread.sleep(forTimeInterval: 10)
                }
            } catch {
                exit(1)
            }
        }
        let stale = try environment.readers()
        #expect(stale.count == 1)
        #expect(stale.first?.processID != getpid())
        #expect(try environment.clearStaleReaders() == 1)
        #expect(try environment.readers().isEmpty)
        #expect(try environment.clearStaleReaders() == 0)
    }

    @Test func readerSlotsAreLimited() throws {
        try withEnvironment(Environment.Configuration(mapSize: 1 << 20, maxReaders: 1)) { environment, _ throws in
            try environment.read { _ throws in
                let error = try #require(throws: LMDBError.self) { try environment.read { _ in } }
                #expect(error == .readersFull)
                #expect(error.description.contains("reader slots"))
            }
            try environment.read { _ in }
        }
    }
}

/// A reader saw something no committed transaction wrote.
private struct Torn: Error {
    let values: Int
}
