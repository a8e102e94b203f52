import Foundation
import LMDB
import Testing

@Suite struct BadInputTests {
    @Test func aMissingDirectoryIsReportedWithItsPath() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.appending("missing")
        let error = try #require(throws: LMDBError.self) { try Environment.open(path: missing) }
        #expect(error == .noSuchFile)
        #expect(error.path == missing)
        #expect(error.description.contains("does not exist"))
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aRegularFileWhereADirectoryIsExpectedIsReported() throws {
        let directory = try TemporaryDirectory()
        let file = directory.appending("file")
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
        let error = try #require(throws: LMDBError.self) { try Environment.open(path: file) }
        #expect(error == .notDirectory)
        #expect(error.description.contains("noSubdirectory"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("not a directory".utf8))
    }

    @Test(arguments: [
        [UInt8](repeating: 0, count: 8192),
        [UInt8](repeating: 0xAB, count: 3),
        Array("This is a text file, not a database. It goes on for a while to fill a page.".utf8),
    ])
    func aFileThatIsNotLMDBIsRefusedAndLeftAlone(contents: [UInt8]) throws {
        let directory = try TemporaryDirectory()
        let file = directory.appending("data.mdb")
        try Data(contents).write(to: URL(fileURLWithPath: file))
        let error = try #require(throws: LMDBError.self) {
            try Environment.open(path: directory.path, configuration: .init(options: .readOnly))
        }
        #expect(error == .invalid)
        #expect(error.description.contains("not an LMDB environment"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(contents))
    }

    @Test func aDirectoryWithoutAStoreOpenedReadOnlyIsReported() throws {
        let directory = try TemporaryDirectory()
        let error = try #require(throws: LMDBError.self) {
            try Environment.open(path: directory.path, configuration: .init(options: .readOnly))
        }
        #expect(error == .noSuchFile)
        #expect(error.description.contains("holds no LMDB environment"))
    }

    @Test func aPathWithoutPermissionIsReported() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("locked")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        _ = chmod(path, 0o000)
        // Root ignores permissions, so the attempt runs in a child process that gives up root first.
        await #expect(processExitsWith: .success) { [path = path as String] in
            if getuid() == 0 {
                guard setgid(65534) == 0, setuid(65534) == 0 else { exit(2) }
            }
            do {
                _ = try Environment.open(path: path)
                exit(3)
            } catch let error as LMDBError where error == .accessDenied && error.path == path {
                exit(0)
            } catch {
                exit(4)
            }
        }
    }

    @Test func emptyAndOversizedKeysAreRejectedBeforeLMDBSeesThem() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            let longest = [UInt8](repeating: 1, count: environment.maxKeySize)
            try environment.write { txn throws in
                try txn.put([1], forKey: longest, in: table)
                for key in [[], longest + [1]] {
                    let error = try #require(throws: LMDBError.self) { try txn.put([1], forKey: key, in: table) }
                    #expect(error == .badValueSize)
                    #expect(error.description.contains("this one has \(key.count)"))
                    #expect(throws: LMDBError.badValueSize) { try txn.value(forKey: key, in: table) }
                    #expect(throws: LMDBError.badValueSize) { try txn.delete(forKey: key, in: table) }
                    try txn.withCursor(on: table) { cursor throws in
                        #expect(throws: LMDBError.badValueSize) { try cursor.seek(to: key) }
                        #expect(throws: LMDBError.badValueSize) { try cursor.put([1], forKey: key) }
                    }
                }
            }
            #expect(try environment.read { txn in try txn.count(of: table) } == 1)
        }
    }

    @Test func oversizedValuesOfADupSortTableAreRejected() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "dups", options: .dupSort, create: true)
            try environment.write { txn throws in
                try txn.put([UInt8](repeating: 1, count: environment.maxKeySize), forKey: [1], in: table)
                let error = try #require(throws: LMDBError.self) {
                    try txn.put([UInt8](repeating: 1, count: environment.maxKeySize + 1), forKey: [1], in: table)
                }
                #expect(error == .badValueSize)
                #expect(error.table == "dups")
            }
            #expect(try environment.read { txn in try txn.count(of: table) } == 1)
        }
    }

    @Test func aReadOnlyEnvironmentRefusesToWrite() throws {
        let directory = try TemporaryDirectory()
        do {
            let writable = try Environment.open(path: directory.path)
            let table = try writable.openTable(named: "t", create: true)
            try writable.write { txn in try txn.put([1], forKey: [1], in: table) }
            try writable.close()
        }
        let environment = try Environment.open(path: directory.path, configuration: .init(options: .readOnly))
        defer { try? environment.close() }
        #expect(environment.isReadOnly)
        let table = try environment.openTable(named: "t")
        let error = try #require(throws: LMDBError.self) { try environment.write { _ in } }
        #expect(error == .accessDenied)
        #expect(error.description.contains("read-only"))
        #expect(throws: LMDBError.accessDenied) { try environment.openTable(named: "new", create: true) }
        #expect(try environment.read { txn in try txn.value(forKey: [1], in: table) } == [1])
        // The environment is open read-only in this process, so a writable open must not pretend otherwise.
        #expect(throws: LMDBError.accessDenied) { try Environment.open(path: directory.path) }
    }

    @Test func aReadTransactionRefusesToWrite() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.read { txn throws in
                let error = try #require(throws: LMDBError.self) { try txn.put([1], forKey: [1], in: table) }
                #expect(error == .accessDenied)
                #expect(error.description.contains("read-only"))
                #expect(throws: LMDBError.accessDenied) { try txn.delete(forKey: [1], in: table) }
                #expect(throws: LMDBError.accessDenied) { try txn.delete([1], forKey: [1], in: table) }
                #expect(throws: LMDBError.accessDenied) { try txn.empty(table) }
                #expect(throws: LMDBError.accessDenied) {
                    try txn.put(reservingCount: 1, forKey: [1], in: table) { _ in }
                }
            }
        }
    }

    @Test(arguments: [
        Environment.Configuration(mapSize: 0),
        Environment.Configuration(mapSize: 1 << 20, maxMapSize: 1 << 19),
        Environment.Configuration(maxReaders: 0),
        Environment.Configuration(fileMode: 0o1777),
    ])
    func badConfigurationsAreRejected(configuration: Environment.Configuration) throws {
        let directory = try TemporaryDirectory()
        #expect(throws: LMDBError.invalidArgument) {
            try Environment.open(path: directory.path, configuration: configuration)
        }
        #expect(throws: LMDBError.invalidArgument) { try Environment.open(path: "") }
    }

    @Test func errorsDescribeCodeOperationTableAndPath() throws {
        try withEnvironment { environment, path throws in
            let table = try environment.openTable(named: "things", create: true)
            try environment.write { txn throws in
                try txn.put([1], forKey: [1], in: table)
                let error = try #require(throws: LMDBError.self) {
                    try txn.put([2], forKey: [1], in: table, options: .noOverwrite)
                }
                #expect(error.name == "MDB_KEYEXIST")
                #expect(error.operation == "mdb_put")
                #expect(error.table == "things")
                #expect(error.path == path)
                #expect(
                    error.description == "MDB_KEYEXIST: Key/data pair already exists (mdb_put, table 'things', \(path))"
                )
            }
        }
        #expect(LMDBError(code: ENOSPC).description == "ENOSPC: No space left on device")
        #expect(LMDBError(code: 12345).name == nil)
    }
}
