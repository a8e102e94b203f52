import Foundation
import LMDB
import TestSupport
import Testing

/// Stores LMDB wrote without damage, of many shapes: the page check reports them clean, with the counts LMDB's own
/// `mdb_stat` gives for every table.
@Suite struct PageCheckCleanTests {
    typealias Stores = PageCheckStores

    @Test(arguments: [PageCheck.Scope.full, .roots])
    func anEmptyStoreIsClean(scope: PageCheck.Scope) throws {
        try Stores.withClosedStore({ _ in [] }) { path, statistics in
            let report = try PageCheck.checkFile(path: path, options: .init(scope: scope))
            Stores.expectMatches(report, statistics)
            #expect(report.transactionID == 0)
            #expect(report.lastPageNumber == 1)
            #expect(report.tables.count == 1)
            #expect(report.tables.first?.rootPage == nil)
            #expect(report.freePages == (scope == .full ? 0 : nil))
        }
    }

    @Test(arguments: [false, true])
    func oneTableIsClean(singleFile: Bool) throws {
        try Stores.withClosedStore(singleFile: singleFile, Stores.oneTable(count: 300)) { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            #expect(report.path.hasSuffix(singleFile ? "store.mdb" : "/data.mdb"))
            let table = try #require(report.table(named: "t"))
            #expect(table.entries == 300)
            #expect(table.depth == 2)
            #expect(report.tables.map(\.name) == [nil, "t"])
            #expect(report.table(named: nil)?.entries == 1)
        }
    }

    @Test func manyNamedTablesAreClean() throws {
        let names = (0..<250).map { "table-\($0)-" + String(repeating: "x", count: $0 % 50) }
        try Stores.withClosedStore({ environment in
            let tables = try names.map { try environment.openTable(named: $0, create: true) }
            try environment.write { txn in
                for (number, table) in tables.enumerated() {
                    for index in 0..<(number % 7) {
                        try txn.put(Stores.key(index), forKey: Stores.key(index), in: table)
                    }
                }
            }
            return tables
        }) { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            #expect(report.tables.count == 251)
            // 250 records do not fit in one page: the main table has branch pages.
            #expect((report.table(named: nil)?.depth ?? 0) > 1)
            let roots = try PageCheck.checkFile(path: path, options: .init(scope: .roots))
            Stores.expectMatches(roots, statistics)
        }
    }

    @Test(arguments: [true, false])
    func fewDuplicatesLiveInSubPages(fixed: Bool) throws {
        try Stores.withClosedStore(Stores.duplicates(keys: 400, duplicates: 3, fixed: fixed)) { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            #expect(report.table(named: "index")?.entries == 1200)
            #expect(report.table(named: "index")?.duplicatePages == 0)
        }
    }

    @Test(arguments: [true, false])
    func manyDuplicatesLiveInSubDatabases(fixed: Bool) throws {
        try Stores.withClosedStore(Stores.duplicates(keys: 12, duplicates: 3000, fixed: fixed)) { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            #expect(report.table(named: "index")?.entries == 36000)
            // LMDB counts the sub-databases' pages in their own records, not the table's.
            #expect((report.table(named: "index")?.duplicatePages ?? 0) > 12)
            Stores.expectMatches(try PageCheck.checkFile(path: path, options: .init(scope: .roots)), statistics)
        }
    }

    @Test func largeValuesLiveOnOverflowPages() throws {
        try Stores.withClosedStore(Stores.oneTable(count: 40, valueSize: 10_000)) { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            #expect(report.table(named: "t")?.overflowPages == 40 * 3)
        }
    }

    @Test func aDeepTreeIsClean() throws {
        try Stores.withClosedStore({ environment in
            let table = try environment.openTable(named: "deep", create: true)
            try environment.write { txn in
                // Keys in a scrambled order, with long keys, so that splits happen everywhere and the tree is deep.
                for index in 0..<30_000 {
                    let scrambled = (index &* 2_654_435_761) & 0xFFFF_FFFF
                    try txn.put(
                        Stores.value16(index),
                        forKey: Stores.key(scrambled, prefix: String(repeating: "p", count: 100)), in: table)
                }
            }
            return [table]
        }) { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            #expect((report.table(named: "deep")?.depth ?? 0) >= 3)
        }
    }

    @Test(arguments: [false, true])
    func aStoreWithAFreeListIsClean(singleFile: Bool) throws {
        try Stores.withClosedStore(
            singleFile: singleFile,
            { environment in
                let table = try environment.openTable(named: "t", create: true)
                let dups = try environment.openTable(named: "d", options: [.dupSort, .dupFixed], create: true)
                let big = try environment.openTable(named: "big", create: true)
                try environment.write { txn in
                    for index in 0..<20_000 { try txn.put(Stores.value16(index), forKey: Stores.key(index), in: table) }
                    for index in 0..<5_000 {
                        try txn.put(Stores.value16(index), forKey: Stores.key(index % 5), in: dups)
                    }
                    for index in 0..<30 {
                        try txn.put([UInt8](repeating: 1, count: 9000), forKey: Stores.key(index), in: big)
                    }
                }
                // Deletes in many transactions free pages in each; emptying the big table frees over a thousand in one,
                // whose page list then lies on overflow pages itself.
                for round in 0..<10 {
                    try environment.write { txn in
                        for index in stride(from: round, to: 20_000, by: 20) {
                            try txn.delete(forKey: Stores.key(index), in: table)
                        }
                        for index in stride(from: round, to: 5_000, by: 10) {
                            try txn.delete(Stores.value16(index), forKey: Stores.key(index % 5), in: dups)
                        }
                        try txn.delete(forKey: Stores.key(round), in: big)
                    }
                }
                try environment.write { txn in try txn.empty(table) }
                return [table, dups, big]
            }
        ) { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            #expect((report.freePages ?? 0) > 100)
            #expect((report.freeList?.entries ?? 0) > 1)
        }
    }

    @Test func integerAndReversedKeysAreCheckedInTheirOrder() throws {
        try Stores.withClosedStore({ environment in
            let integers = try environment.openTable(named: "int", options: [.integerKey], create: true)
            let reversed = try environment.openTable(named: "rev", options: [.reverseKey], create: true)
            let integerDups = try environment.openTable(
                named: "intdup", options: [.dupSort, .dupFixed, .integerDup], create: true)
            let reversedDups = try environment.openTable(
                named: "revdup", options: [.dupSort, .reverseDup], create: true)
            try environment.write { txn in
                for index in 0..<3000 {
                    try txn.put(
                        Stores.value16(index), forKey: withUnsafeBytes(of: UInt64(index * 7919 % 100_003), Array.init),
                        in: integers)
                    try txn.put(Stores.value16(index), forKey: Stores.key(index * 31 % 3001), in: reversed)
                    try txn.put(
                        withUnsafeBytes(of: UInt32(index * 13 % 3001), Array.init), forKey: Stores.key(index % 3),
                        in: integerDups)
                    try txn.put(Stores.key(index, prefix: "v"), forKey: Stores.key(index % 4), in: reversedDups)
                }
            }
            return [integers, reversed, integerDups, reversedDups]
        }) { path, statistics in
            Stores.expectMatches(try PageCheck.checkFile(path: path), statistics)
        }
    }

    /// Random puts, overwrites and deletes over many transactions, in a plain table with values on both sides of the
    /// overflow threshold and in both kinds of `dupSort` table with few and many values per key: every path that
    /// splits, merges, moves nodes, shrinks sub-pages and turns them into sub-databases and back leaves a clean store.
    @Test(arguments: 1...6)
    func aStoreAfterRandomChurnIsClean(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed))
        // Odd seeds write through a writable map, where LMDB clears the pages' dirty flags in place.
        try Stores.withClosedStore(options: seed % 2 == 1 ? .writeMap : []) { environment in
            let plain = try environment.openTable(named: "plain", create: true)
            let fixed = try environment.openTable(named: "fixed", options: [.dupSort, .dupFixed], create: true)
            let sorted = try environment.openTable(named: "sorted", options: [.dupSort], create: true)
            for round in 0..<60 {
                try environment.write { txn in
                    for _ in 0..<300 {
                        let number = Int.random(in: 0..<400, using: &random)
                        let key = Stores.key(number)
                        // Fewer keys in the dupSort tables: 50 with a few values each, some with hundreds.
                        let dupKey = Stores.key(number % 50, prefix: "d")
                        let size =
                            Bool.random(using: &random)
                            ? Int.random(in: 1...200, using: &random) : Int.random(in: 1...9000, using: &random)
                        switch Int.random(in: 0..<6, using: &random) {
                        case 0, 1:
                            try txn.put([UInt8](repeating: UInt8(round), count: size), forKey: key, in: plain)
                            // An overwrite in the same transaction reuses a dirty overflow run when it is long enough.
                            if size > 3000 {
                                try txn.put([UInt8](repeating: 1, count: size - 1500), forKey: key, in: plain)
                            }
                        case 2:
                            try txn.delete(forKey: key, in: plain)
                        case 3:
                            let range = number % 5 == 0 ? 600 : 6
                            for _ in 0..<8 {
                                let value = Stores.value16(Int.random(in: 0..<range, using: &random))
                                try txn.put(value, forKey: dupKey, in: fixed)
                            }
                        case 4:
                            for _ in 0..<(number % 5 == 0 ? 12 : 1) {
                                let value = Stores.key(
                                    Int.random(in: 0..<300, using: &random),
                                    prefix: String(repeating: "s", count: size % 60))
                                try txn.put(value, forKey: dupKey, in: sorted)
                            }
                        default:
                            for _ in 0..<4 {
                                let value = Stores.value16(
                                    Int.random(in: 0..<(number % 5 == 0 ? 600 : 6), using: &random))
                                try txn.delete(value, forKey: dupKey, in: fixed)
                            }
                            if number % 7 == 0 { try txn.delete(forKey: dupKey, in: sorted) }
                        }
                    }
                }
                if round % 8 == 7 {
                    let report = try environment.checkPages()
                    #expect(report.problems.isEmpty, "seed \(seed), round \(round): \(report.problems)")
                }
            }
            return [plain, fixed, sorted]
        } _: { path, statistics in
            let report = try PageCheck.checkFile(path: path)
            Stores.expectMatches(report, statistics)
            // Both dupSort tables hold keys in sub-pages and keys in sub-databases.
            #expect((report.table(named: "fixed")?.duplicatePages ?? 0) > 10)
            #expect((report.table(named: "sorted")?.duplicatePages ?? 0) > 10)
            #expect((report.table(named: "plain")?.overflowPages ?? 0) > 10)
        }
    }

    @Test func aMissingFileThrowsNoSuchFile() throws {
        let directory = try TemporaryDirectory()
        let error = try #require(throws: LMDBError.self) { try PageCheck.checkFile(path: directory.path) }
        #expect(error == .noSuchFile)
        #expect(error.path == directory.appending("data.mdb"))
    }
}
