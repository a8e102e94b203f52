import Foundation
import LMDB
import Testing

@Suite struct TransactionTests {
    @Test func putThenGetInOneAndInLaterTransactions() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn throws in
                try txn.put("one".bytes, forKey: "1".bytes, in: table)
                #expect(try txn.value(forKey: "1".bytes, in: table) == "one".bytes)
            }
            try environment.read { txn throws in
                #expect(try txn.value(forKey: "1".bytes, in: table) == "one".bytes)
                #expect(try txn.containsKey("1".bytes, in: table))
                #expect(try !txn.containsKey("2".bytes, in: table))
                #expect(try txn.value(forKey: "2".bytes, in: table) == nil)
                let length = try txn.withUnsafeBytes(forKey: "1".bytes, in: table) { $0?.count }
                #expect(length == 3)
            }
        }
    }

    @Test func getReturnsNilForMissingKey() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            #expect(try environment.read { txn in try txn.value(forKey: "missing".bytes, in: table) } == nil)
        }
    }

    @Test func putReplacesTheValue() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                try txn.put("a".bytes, forKey: "k".bytes, in: table)
                try txn.put("b".bytes, forKey: "k".bytes, in: table)
            }
            #expect(try environment.read { txn in try txn.value(forKey: "k".bytes, in: table) } == "b".bytes)
        }
    }

    @Test func acceptsDataAndRawBuffersAndEmptyValues() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                try txn.put(Data([1, 2, 3]), forKey: Data("d".utf8), in: table)
                try "raw".bytes.withUnsafeBytes { value throws in
                    try "r".bytes.withUnsafeBytes { key in try txn.put(value, forKey: key, in: table) }
                }
                try txn.put([UInt8](), forKey: "empty".utf8, in: table)
                try txn.put("x".bytes[...], forKey: "slice".bytes.dropFirst(0), in: table)
            }
            try environment.read { txn throws in
                #expect(try txn.value(forKey: "d".bytes, in: table) == [1, 2, 3])
                #expect(try txn.value(forKey: "r".bytes, in: table) == "raw".bytes)
                #expect(try txn.value(forKey: "empty".bytes, in: table) == [])
                #expect(try txn.value(forKey: "slice".bytes, in: table) == "x".bytes)
            }
        }
    }

    @Test func abortDiscardsEverything() throws {
        struct Failure: Error {}
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            #expect(throws: Failure.self) {
                try environment.write { txn throws in
                    try txn.put("v".bytes, forKey: "k".bytes, in: table)
                    throw Failure()
                }
            }
            #expect(try environment.read { txn in try txn.count(of: table) } == 0)
        }
    }

    @Test func noOverwriteRefusesAnExistingKey() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                try txn.put("a".bytes, forKey: "k".bytes, in: table, options: .noOverwrite)
                #expect(throws: LMDBError.keyExists) {
                    try txn.put("b".bytes, forKey: "k".bytes, in: table, options: .noOverwrite)
                }
            }
            #expect(try environment.read { txn in try txn.value(forKey: "k".bytes, in: table) } == "a".bytes)
        }
    }

    @Test func appendRequiresIncreasingKeys() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                for key in ["a", "b", "c"] { try txn.put(key.bytes, forKey: key.bytes, in: table, options: .append) }
                #expect(throws: LMDBError.keyExists) {
                    try txn.put("0".bytes, forKey: "0".bytes, in: table, options: .append)
                }
            }
        }
    }

    @Test func unsafeAppendStoresOnlyKeysAfterTheLastAndReplacesNothing() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                #expect(try append("1", "b", in: table, txn))  // an empty table: any key is after the last
                #expect(try append("2", "c", in: table, txn))
                #expect(try !append("3", "c", in: table, txn))  // the last key itself: not replaced
                #expect(try !append("4", "a", in: table, txn))  // before the last: not written
                #expect(try !append("5", "bb", in: table, txn))  // between two keys: not written
                #expect(try append("6", "cc", in: table, txn))
                #expect(throws: LMDBError.badValueSize) { try append("7", "", in: table, txn) }
            }
            let entries = try environment.read { txn in
                try txn.entries(in: table).map { "\($0.key.string)=\($0.value.string)" }
            }
            #expect(entries == ["b=1", "c=2", "cc=6"])
        }
    }

    /// Appends `value` under `key` through ``Transaction/unsafeAppend(_:forKey:in:)``.
    private func append(_ value: String, _ key: String, in table: Table, _ txn: borrowing Transaction) throws -> Bool {
        try value.bytes.withUnsafeBytes { value in
            try key.bytes.withUnsafeBytes { key in try txn.unsafeAppend(value, forKey: key, in: table) }
        }
    }

    @Test func unsafeAppendRefusesDupSortTablesAndReadTransactions() throws {
        try withEnvironment { environment, _ throws in
            let plain = try environment.openTable(named: "plain", create: true)
            let dups = try environment.openTable(named: "dups", options: .dupSort, create: true)
            let bytes: [UInt8] = [1]
            try environment.write { txn throws in
                let error = #expect(throws: LMDBError.incompatible) {
                    try bytes.withUnsafeBytes { try txn.unsafeAppend($0, forKey: $0, in: dups) }
                }
                #expect(error?.description.contains("appendDuplicate") == true)
            }
            let refused = try environment.read { txn throws in
                #expect(throws: LMDBError.accessDenied) {
                    try bytes.withUnsafeBytes { try txn.unsafeAppend($0, forKey: $0, in: plain) }
                }
            }
            #expect(refused != nil)
            #expect(try environment.read { txn in try txn.entries(in: dups).count + txn.entries(in: plain).count } == 0)
        }
    }

    @Test func ascendingKeysAppendedFillTheirLeaves() throws {
        try withEnvironment { environment, _ throws in
            let appended = try environment.openTable(named: "appended", create: true)
            let shuffled = try environment.openTable(named: "shuffled", create: true)
            let value = [UInt8](repeating: 7, count: 100)
            try environment.write { txn throws in
                for number in 0..<2_000 {
                    // The same keys in another order (7 and 2,000 have no common factor): each lands inside a leaf.
                    for (table, key) in [(appended, number), (shuffled, number * 7 % 2_000)] {
                        var key = UInt32(key).bigEndian
                        try withUnsafeBytes(of: &key) { key in
                            try value.withUnsafeBytes { value in
                                if table == appended {
                                    #expect(try txn.unsafeAppend(value, forKey: key, in: table))
                                } else {
                                    try txn.put(value, forKey: key, in: table)
                                }
                            }
                        }
                    }
                }
            }
            let (appendedLeaves, shuffledLeaves) = try environment.read { txn in
                (try txn.statistics(of: appended).leafPages, try txn.statistics(of: shuffled).leafPages)
            }
            // About 36 entries of 114 bytes (value, key and node header) fit a 4 KiB leaf: 56 leaves when full; a
            // split inside a leaf leaves two halves.
            #expect(appendedLeaves <= 60)
            #expect(Double(shuffledLeaves) >= 1.3 * Double(appendedLeaves))
            let keys = try environment.read { txn in
                (try txn.entries(in: appended).map(\.key), try txn.entries(in: shuffled).map(\.key))
            }
            #expect(keys.0.count == 2_000)
            #expect(keys.0 == keys.1)
        }
    }

    @Test func duplicateOptionsInDupSortTables() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "dups", options: .dupSort, create: true)
            try environment.write { txn throws in
                try txn.put("1".bytes, forKey: "k".bytes, in: table)
                try txn.put("2".bytes, forKey: "k".bytes, in: table, options: .appendDuplicate)
                try txn.put("1".bytes, forKey: "k".bytes, in: table)  // already there: no second copy
                #expect(throws: LMDBError.keyExists) {
                    try txn.put("1".bytes, forKey: "k".bytes, in: table, options: .noDuplicateData)
                }
                #expect(throws: LMDBError.keyExists) {
                    try txn.put("0".bytes, forKey: "k".bytes, in: table, options: .appendDuplicate)
                }
                #expect(throws: LMDBError.keyExists) {
                    try txn.put("3".bytes, forKey: "k".bytes, in: table, options: .noOverwrite)
                }
                try txn.put("3".bytes, forKey: "k".bytes, in: table, options: .noDuplicateData)
            }
            let values = try environment.read { txn in try txn.entries(in: table).map(\.value.string) }
            #expect(values == ["1", "2", "3"])
        }
    }

    @Test func reservedValuesAreFilledInPlace() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                try txn.put(reservingCount: 4, forKey: "k".bytes, in: table) { buffer throws in
                    buffer.copyBytes(from: [9, 8, 7, 6])
                }
            }
            #expect(try environment.read { txn in try txn.value(forKey: "k".bytes, in: table) } == [9, 8, 7, 6])
        }
    }

    @Test func reservingInADupSortTableIsRefused() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "dups", options: .dupSort, create: true)
            _ = try environment.write { txn throws in
                #expect(throws: LMDBError.incompatible) {
                    try txn.put(reservingCount: 1, forKey: "k".bytes, in: table) { _ in }
                }
            }
        }
    }

    @Test func deleteAKeyOrOneDuplicate() throws {
        try withEnvironment { environment, _ throws in
            let plain = try environment.openTable(named: "plain", create: true)
            let dups = try environment.openTable(named: "dups", options: .dupSort, create: true)
            try environment.write { txn throws in
                try txn.put("v".bytes, forKey: "k".bytes, in: plain)
                for value in ["a", "b", "c"] { try txn.put(value.bytes, forKey: "k".bytes, in: dups) }
            }
            try environment.write { txn throws in
                #expect(try txn.delete(forKey: "k".bytes, in: plain))
                #expect(try !txn.delete(forKey: "k".bytes, in: plain))
                #expect(try txn.delete("b".bytes, forKey: "k".bytes, in: dups))
                #expect(try !txn.delete("b".bytes, forKey: "k".bytes, in: dups))
            }
            try environment.read { txn throws in
                #expect(try txn.count(of: plain) == 0)
                #expect(try txn.entries(in: dups).map(\.value.string) == ["a", "c"])
            }
            try environment.write { txn throws in #expect(try txn.delete(forKey: "k".bytes, in: dups)) }
            #expect(try environment.read { txn in try txn.count(of: dups) } == 0)
        }
    }

    @Test func childTransactionsCommitIntoTheParentOrAreDiscarded() throws {
        struct Failure: Error {}
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            try environment.write { txn throws in
                try txn.put("parent".bytes, forKey: "p".bytes, in: table)
                try txn.withChildTransaction { child throws in
                    try child.put("kept".bytes, forKey: "c1".bytes, in: table)
                    #expect(try child.value(forKey: "p".bytes, in: table) == "parent".bytes)
                }
                #expect(throws: Failure.self) {
                    try txn.withChildTransaction { child throws in
                        try child.put("lost".bytes, forKey: "c2".bytes, in: table)
                        try child.withChildTransaction { grandchild throws in
                            try grandchild.put("lost too".bytes, forKey: "c3".bytes, in: table)
                        }
                        throw Failure()
                    }
                }
                #expect(try txn.value(forKey: "c1".bytes, in: table) == "kept".bytes)
                #expect(try txn.value(forKey: "c2".bytes, in: table) == nil)
            }
            let keys = try environment.read { txn in try txn.entries(in: table).map(\.key.string) }
            #expect(keys == ["c1", "p"])
        }
    }

    @Test func readTransactionsHaveNoChildren() throws {
        try withEnvironment { environment, _ throws in
            _ = try environment.read { txn throws in
                #expect(throws: LMDBError.invalidArgument) { try txn.withChildTransaction { _ in } }
            }
        }
    }

    @Test func writeMapEnvironmentsHaveNoChildren() throws {
        let configuration = Environment.Configuration(mapSize: 1 << 20, options: .writeMap)
        try withEnvironment(configuration) { environment, _ throws in
            _ = try environment.write { txn throws in
                #expect(throws: LMDBError.badTransaction) { try txn.withChildTransaction { _ in } }
            }
        }
    }

    @Test func transactionIDsGrowWithCommits() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: nil)
            let first = try environment.write { txn throws in
                try txn.put("1".bytes, forKey: "k".bytes, in: table)
                return txn.id
            }
            let second = try environment.write { txn throws in
                try txn.put("2".bytes, forKey: "k".bytes, in: table)
                return txn.id
            }
            #expect(second == first + 1)
            #expect(try environment.read { txn in txn.id } == second)
            #expect(try environment.info().lastTransactionID == second)
        }
    }

    @Test func emptyKeepsTheTableButRemovesItsEntries() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "t", create: true)
            try environment.write { txn throws in
                for index in 0..<10 { try txn.put([1], forKey: "\(index)".bytes, in: table) }
            }
            try environment.write { txn in try txn.empty(table) }
            #expect(try environment.read { txn in try txn.count(of: table) } == 0)
            try environment.write { txn in try txn.put([1], forKey: "again".bytes, in: table) }
            #expect(try environment.read { txn in try txn.count(of: table) } == 1)
        }
    }
}
