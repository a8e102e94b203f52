import Foundation
import LMDB
import Testing

/// Real stores for the page check's tests: made with the binding in a fresh temporary directory, closed, then
/// handed to the test with LMDB's own statistics of each table.
enum PageCheckStores {
    /// LMDB's statistics of each table of a closed store, by name (`nil` for the main table).
    typealias Statistics = [String?: Environment.Statistics]

    /// Makes a store with `fill`, which returns the tables it wrote, closes it, and runs `body` with the path of the
    /// store (the directory, or the file with `singleFile`) and the statistics LMDB gave before closing.
    static func withClosedStore<R>(
        singleFile: Bool = false,
        options: Environment.Options = [],
        maxTables: Int = 300,
        _ fill: (Environment) throws -> [Table],
        _ body: (_ path: String, _ statistics: Statistics) throws -> R
    ) throws -> R {
        let directory = try TemporaryDirectory()
        let path = singleFile ? directory.appending("store.mdb") : directory.path
        var statistics: Statistics = [:]
        do {
            let environment = try Environment.open(
                path: path,
                configuration: .init(
                    mapSize: 64 << 20, maxTables: maxTables, options: options.union(singleFile ? .noSubdirectory : [])))
            let tables = try fill(environment)
            statistics[nil] = try environment.statistics()
            try environment.read { txn in
                for table in tables { statistics[table.name] = try txn.statistics(of: table) }
            }
            try environment.close()
        }
        return try body(path, statistics)
    }

    /// The data file of a store at `path`.
    static func dataFile(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        return isDirectory.boolValue ? path + "/data.mdb" : path
    }

    /// A big-endian key for `index`, so that keys sort in the order of the numbers.
    static func key(_ index: Int, prefix: String = "k") -> [UInt8] {
        Array(prefix.utf8) + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init)
    }

    /// A 16-byte value for `index`, like the UUIDs KVStore's indexes hold.
    static func value16(_ index: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt64(index).bigEndian, Array.init) + [UInt8](repeating: 0xA5, count: 8)
    }

    /// One table `t` of `count` entries with values of `valueSize` bytes.
    static func oneTable(count: Int, valueSize: Int = 40) -> (Environment) throws -> [Table] {
        { environment in
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn in
                for index in 0..<count {
                    try txn.put(
                        [UInt8](repeating: UInt8(index & 0xFF), count: valueSize), forKey: key(index), in: table)
                }
            }
            return [table]
        }
    }

    /// A `dupSort|dupFixed` table `index` of `keys` keys with `duplicates` 16-byte values each.
    static func duplicates(keys: Int, duplicates: Int, fixed: Bool = true) -> (Environment) throws -> [Table] {
        { environment in
            let options: Table.Options = fixed ? [.dupSort, .dupFixed] : [.dupSort]
            let table = try environment.openTable(named: "index", options: options, create: true)
            try environment.write { txn in
                for key in 0..<keys {
                    for value in 0..<duplicates {
                        // Variable-size values of the plain dupSort table: distinct, 5 to 44 bytes.
                        let bytes =
                            fixed
                            ? value16(value * 7 + key)
                            : Self.key(value, prefix: String(repeating: "v", count: 1 + value % 40))
                        try txn.put(bytes, forKey: Self.key(key), in: table)
                    }
                }
            }
            return [table]
        }
    }

    /// Checks a clean report against LMDB's statistics: every table LMDB knows has the same counts, and nothing is
    /// wrong, not even a leaked page.
    static func expectMatches(
        _ report: PageCheck.Report, _ statistics: Statistics, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(report.isClean, "\(report.problems)", sourceLocation: sourceLocation)
        #expect(report.problems.isEmpty, "\(report.problems)", sourceLocation: sourceLocation)
        #expect(report.omittedProblemCount == 0, sourceLocation: sourceLocation)
        if report.scope == .full {
            #expect(report.leakedPages == 0, sourceLocation: sourceLocation)
        }
        for (name, expected) in statistics {
            guard let table = report.table(named: name) else {
                Issue.record("The report lacks table \(name ?? "(main)")", sourceLocation: sourceLocation)
                continue
            }
            #expect(report.pageSize == expected.pageSize, sourceLocation: sourceLocation)
            #expect(table.depth == expected.depth, "depth of \(name ?? "(main)")", sourceLocation: sourceLocation)
            #expect(table.entries == expected.entries, "entries of \(name ?? "(main)")", sourceLocation: sourceLocation)
            #expect(table.branchPages == expected.branchPages, sourceLocation: sourceLocation)
            #expect(table.leafPages == expected.leafPages, sourceLocation: sourceLocation)
            #expect(table.overflowPages == expected.overflowPages, sourceLocation: sourceLocation)
        }
    }
}
