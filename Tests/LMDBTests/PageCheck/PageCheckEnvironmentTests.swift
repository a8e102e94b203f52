import Foundation
import LMDB
import Testing

/// The page check of an open environment: it reads the snapshot of its own read transaction, so a writer that
/// commits meanwhile changes nothing it sees.
@Suite struct PageCheckEnvironmentTests {
    typealias Stores = PageCheckStores

    /// A writer that commits faster than a check reads the meta pages replaces the check's snapshot's meta page
    /// (every second commit reuses it); the check then tries a newer snapshot, and never reports the store as
    /// damaged for it. Opening a container runs this check beside the store's other writers.
    @Test func aWriterThatReplacesTheSnapshotIsNotDamage() throws {
        let directory = try TemporaryDirectory()
        let environment = try Environment.open(
            path: directory.path, configuration: .init(mapSize: 64 << 20, options: .noSync))
        defer { try? environment.close() }
        let table = try environment.openTable(named: "t", create: true)
        let done = Flag()
        let damaged = Locked<[String]>([])
        try onThreads(2) { thread in
            if thread == 0 {
                var round = 0
                while !done.isSet {
                    try environment.write { txn in
                        try txn.put(Stores.value16(round), forKey: Stores.key(round % 50), in: table)
                    }
                    round += 1
                }
            } else {
                defer { done.set() }
                for _ in 0..<500 {
                    let report = try environment.checkPages(scope: .roots)
                    let damage = report.problems.filter { $0.severity == .damage }.map(\.description)
                    if !damage.isEmpty { damaged.withLock { $0 += damage } }
                }
            }
        }
        #expect(damaged.withLock { $0 } == [])
    }

    @Test(arguments: [false, true])
    func aLiveStoreStaysCleanWhileAWriterCommits(singleFile: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = singleFile ? directory.appending("store.mdb") : directory.path
        let environment = try Environment.open(
            path: path, configuration: .init(mapSize: 64 << 20, options: singleFile ? .noSubdirectory : []))
        defer { try? environment.close() }
        let table = try environment.openTable(named: "t", create: true)
        let index = try environment.openTable(named: "index", options: [.dupSort, .dupFixed], create: true)
        try environment.write { txn in
            for key in 0..<3000 { try txn.put(Stores.value16(key), forKey: Stores.key(key), in: table) }
            for value in 0..<1000 { try txn.put(Stores.value16(value), forKey: Stores.key(value % 4), in: index) }
        }
        let done = Flag()
        let commits = Counter()
        let reports = Locked<[PageCheck.Report]>([])
        try onThreads(2) { thread in
            if thread == 0 {
                // The writer: small transactions that add, replace and delete, so pages are freed and reused.
                var round = 0
                while !done.isSet {
                    try environment.write { txn in
                        for key in stride(from: round % 13, to: 3000, by: 97) {
                            try txn.put(Stores.value16(key + round), forKey: Stores.key(key), in: table)
                        }
                        try txn.put(Stores.value16(round), forKey: Stores.key(round % 4), in: index)
                        try txn.delete(Stores.value16(round / 2), forKey: Stores.key(round / 2 % 4), in: index)
                    }
                    round += 1
                    commits.value.add(1, ordering: .relaxed)
                }
            } else {
                defer { done.set() }
                for _ in 0..<12 {
                    let report = try environment.checkPages(scope: .full)
                    reports.withLock { $0.append(report) }
                }
            }
        }
        let all = reports.withLock { $0 }
        #expect(all.count == 12)
        for report in all {
            #expect(report.isClean, "\(report.problems)")
            #expect(report.problems.isEmpty, "\(report.problems)")
            #expect(report.table(named: "t")?.entries == 3000)
        }
        // The writer really committed while the walks ran, so the snapshots differ.
        #expect(commits.value.load(ordering: .relaxed) > 0)
        #expect(Set(all.map(\.transactionID)).count > 1)
    }

    @Test func theRootsCheckOfAnOpenStoreMatchesItsStatistics() throws {
        try withEnvironment(.init(mapSize: 16 << 20)) { environment, _ in
            let tables = try (0..<20).map { try environment.openTable(named: "t\($0)", create: true) }
            try environment.write { txn in
                for (number, table) in tables.enumerated() {
                    for key in 0..<(number * 50) {
                        try txn.put(Stores.value16(key), forKey: Stores.key(key), in: table)
                    }
                }
            }
            let report = try environment.checkPages(scope: .roots)
            #expect(report.scope == .roots)
            #expect(report.problems.isEmpty, "\(report.problems)")
            #expect(report.freePages == nil)
            #expect(report.leakedPages == nil)
            let info = try environment.info()
            #expect(report.transactionID == info.lastTransactionID)
            #expect(report.lastPageNumber == info.lastPageNumber)
            try environment.read { txn in
                for table in tables {
                    let statistics = try txn.statistics(of: table)
                    let summary = try #require(report.table(named: table.name))
                    #expect(summary.entries == statistics.entries)
                    #expect(summary.depth == statistics.depth)
                    #expect(summary.leafPages == statistics.leafPages)
                    #expect(summary.duplicatePages == nil)
                }
            }
        }
    }

    @Test func damageBelowTheRootsIsFoundByAFullCheckOfAnOpenStore() throws {
        try Stores.withClosedStore(Stores.oneTable(count: 2000)) { path, _ in
            var store = try RawStore(path: path)
            let root = try #require(store.root(of: "t"))
            let leaf = store.pages(from: root)[3]
            store.set(store.offset(ofPage: leaf) + 12, 2, to: 3)
            try store.save()
            // LMDB opens the store and its tables without reading that leaf.
            let environment = try Environment.open(path: path, configuration: .init(options: .readOnly))
            defer { try? environment.close() }
            let roots = try environment.checkPages(scope: .roots)
            #expect(roots.isClean)
            let full = try environment.checkPages(scope: .full)
            #expect(full.problems.filter { $0.severity == .damage }.map(\.kind) == [.pageLayout])
            #expect(full.damagedPages == [leaf: .table("t")])
        }
    }

    @Test func aDamagedRootIsFoundByTheRootsCheck() throws {
        try Stores.withClosedStore(Stores.oneTable(count: 2000)) { path, _ in
            var store = try RawStore(path: path)
            let root = try #require(store.root(of: "t"))
            // Keys 1 and 2 of the root change places.
            let base = store.offset(ofPage: root) + 16
            let first = store.integer(base + 2, 2)
            store.set(base + 2, 2, to: store.integer(base + 4, 2))
            store.set(base + 4, 2, to: first)
            try store.save()
            let environment = try Environment.open(path: path, configuration: .init(options: .readOnly))
            defer { try? environment.close() }
            let report = try environment.checkPages(scope: .roots)
            #expect(report.problems.map(\.kind) == [.keyOrder])
            #expect(report.problems.first?.page == root)
            #expect(report.problems.first?.owner == .table("t"))
        }
    }

    @Test func aClosedEnvironmentThrows() throws {
        let directory = try TemporaryDirectory()
        let environment = try Environment.open(path: directory.path)
        try environment.close()
        #expect(throws: LMDBError.environmentClosed) { try environment.checkPages() }
    }
}
