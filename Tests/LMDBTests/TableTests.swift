import LMDB
import Testing

@Suite struct TableTests {
    @Test func openingAMissingTableWithoutCreateThrowsNotFound() throws {
        try withEnvironment { environment, _ throws in
            let error = try #require(throws: LMDBError.self) { try environment.openTable(named: "missing") }
            #expect(error == .notFound)
            #expect(error.table == "missing")
        }
    }

    @Test func tablesAreCreatedWithTheirOptionsAndReopenedFromTheCache() throws {
        try withEnvironment { environment, _ throws in
            let options: Table.Options = [.dupSort, .dupFixed]
            let created = try environment.openTable(named: "index", options: options, create: true)
            #expect(created.options == options)
            #expect(created.name == "index")
            #expect(try environment.openTable(named: "index", options: options) == created)
        }
    }

    @Test func reopeningWithOtherOptionsThrowsIncompatible() throws {
        let directory = try TemporaryDirectory()
        do {
            let environment = try Environment.open(path: directory.path)
            _ = try environment.openTable(named: "dups", options: .dupSort, create: true)
            #expect(throws: LMDBError.incompatible) { try environment.openTable(named: "dups") }
            try environment.close()
        }
        // The same check holds when the table is first opened from the file rather than from the cache.
        let environment = try Environment.open(path: directory.path)
        defer { try? environment.close() }
        let error = try #require(throws: LMDBError.self) { try environment.openTable(named: "dups", create: true) }
        #expect(error == .incompatible)
        #expect(error.description.contains("dups"))
    }

    @Test func openingATableInsideATransactionThrowsInsteadOfDeadlocking() throws {
        try withEnvironment { environment, _ throws in
            let existing = try environment.openTable(named: "existing", create: true)
            try environment.write { _ throws in
                #expect(throws: LMDBError.busy) { try environment.openTable(named: "new", create: true) }
                // Tables already open come from the cache.
                #expect(try environment.openTable(named: "existing") == existing)
            }
        }
    }

    @Test func tableSlotsGrowWhenTheyRunOutAndOpenHandlesStayValid() throws {
        try withEnvironment(Environment.Configuration(mapSize: 1 << 20, maxTables: 2)) { environment, path throws in
            let a = try environment.openTable(named: "a", create: true)
            let b = try environment.openTable(named: "b", create: true)
            try environment.write { txn in
                try txn.put("in a".bytes, forKey: "k".bytes, in: a)
                try txn.put("in b".bytes, forKey: "k".bytes, in: b)
            }
            var more: [Table] = []
            for index in 0..<40 { more.append(try environment.openTable(named: "t\(index)", create: true)) }
            // A second handle asking for more slots than the environment has gets them too.
            let wider = try Environment.open(
                path: path, configuration: Environment.Configuration(mapSize: 1 << 20, maxTables: 200))
            defer { try? wider.close() }
            for index in 40..<150 { more.append(try wider.openTable(named: "t\(index)", create: true)) }
            try environment.write { txn in
                for (index, table) in more.enumerated() { try txn.put("\(index)".bytes, forKey: "k".bytes, in: table) }
            }
            try environment.read { txn throws in
                #expect(try txn.value(forKey: "k".bytes, in: a) == "in a".bytes)
                #expect(try txn.value(forKey: "k".bytes, in: b) == "in b".bytes)
                for (index, table) in more.enumerated() {
                    #expect(try txn.value(forKey: "k".bytes, in: table) == "\(index)".bytes)
                    #expect(try txn.count(of: table) == 1)
                }
            }
        }
    }

    @Test func dropDeletesTheTable() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn in try txn.put([1], forKey: [1], in: table) }
            try environment.dropTable(table)
            #expect(throws: LMDBError.notFound) { try environment.openTable(named: "t") }
            let recreated = try environment.openTable(named: "t", create: true)
            #expect(try environment.read { txn in try txn.count(of: recreated) } == 0)
            // LMDB gives the dropped table's MDB_dbi to the next table opened: the old handle must not reach it.
            #expect(throws: LMDBError.badTable) {
                try environment.write { txn in try txn.put([2], forKey: [2], in: table) }
            }
            #expect(try environment.read { txn in try txn.count(of: recreated) } == 0)
        }
    }

    @Test func theMainTableCannotBeDropped() throws {
        try withEnvironment { environment, _ throws in
            let main = try environment.openTable(named: nil)
            #expect(throws: LMDBError.invalidArgument) { try environment.dropTable(main) }
        }
    }

    @Test func mainTableListsTheNamedTables() throws {
        try withEnvironment { environment, _ throws in
            for name in ["b", "a", "c"] { _ = try environment.openTable(named: name, create: true) }
            let main = try environment.openTable(named: nil)
            let names = try environment.read { txn in try txn.entries(in: main).map(\.key.string) }
            #expect(names == ["a", "b", "c"])
        }
    }

    @Test func integerKeysSortAsNumbers() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "ints", options: .integerKey, create: true)
            try environment.write { txn throws in
                for number: UInt64 in [300, 2, 70_000, 1] {
                    try withUnsafeBytes(of: number) { key in try txn.put(key, forKey: key, in: table) }
                }
                #expect(throws: LMDBError.badValueSize) { try txn.put([1], forKey: [1, 2, 3], in: table) }
            }
            let numbers = try environment.read { txn throws in
                try txn.entries(in: table).map { entry in entry.key.withUnsafeBytes { $0.load(as: UInt64.self) } }
            }
            #expect(numbers == [1, 2, 300, 70_000])
        }
    }

    @Test func reverseKeyTablesCompareFromTheLastByte() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "reverse", options: .reverseKey, create: true)
            try environment.write { txn throws in
                for key in ["ab", "ba", "ca"] { try txn.put([], forKey: key.bytes, in: table) }
            }
            #expect(try environment.read { txn in try txn.entries(in: table).map(\.key.string) } == ["ba", "ca", "ab"])
        }
    }

    @Test func integerDupAndReverseDupOrderValues() throws {
        try withEnvironment { environment, _ throws in
            let numbers = try environment.openTable(
                named: "intdup", options: [.dupSort, .dupFixed, .integerDup], create: true)
            let reversed = try environment.openTable(named: "revdup", options: [.dupSort, .reverseDup], create: true)
            try environment.write { txn throws in
                for number: UInt32 in [256, 3, 1] {
                    try txn.put(withUnsafeBytes(of: number) { Array($0) }, forKey: "k".bytes, in: numbers)
                }
                for value in ["ab", "ba"] { try txn.put(value.bytes, forKey: "k".bytes, in: reversed) }
                #expect(throws: LMDBError.badValueSize) { try txn.put([1, 2, 3], forKey: "k".bytes, in: numbers) }
            }
            try environment.read { txn throws in
                let values = try txn.entries(in: numbers).map { $0.value.withUnsafeBytes { $0.load(as: UInt32.self) } }
                #expect(values == [1, 3, 256])
                #expect(try txn.entries(in: reversed).map(\.value.string) == ["ba", "ab"])
            }
        }
    }
}
