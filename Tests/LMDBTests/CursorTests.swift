import LMDB
import Testing

@Suite struct CursorTests {
    /// Keys "a" to "e", each with the value of its uppercase letter.
    @discardableResult
    private func withLetters<R>(_ body: (Environment, Table) throws -> R) throws -> R {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "letters", create: true)
            try environment.write { txn throws in
                for letter in ["a", "b", "c", "d", "e"] {
                    try txn.put(letter.uppercased().bytes, forKey: letter.bytes, in: table)
                }
            }
            return try body(environment, table)
        }
    }

    private func key(_ cursor: borrowing Cursor) throws -> String? {
        try cursor.current()?.key.string
    }

    private func pair(_ cursor: borrowing Cursor) throws -> String? {
        try cursor.current().map { $0.key.string + $0.value.string }
    }

    @Test func movesFirstLastNextPrevious() throws {
        try withLetters { environment, table throws in
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(try cursor.current() == nil)  // not positioned yet
                    #expect(try cursor.first())
                    #expect(try cursor.current() == Entry(key: "a".bytes, value: "A".bytes))
                    #expect(try cursor.next())
                    #expect(try key(cursor) == "b")
                    #expect(try cursor.previous())
                    #expect(try key(cursor) == "a")
                    #expect(try !cursor.previous())
                    #expect(try cursor.last())
                    #expect(try key(cursor) == "e")
                    #expect(try !cursor.next())
                }
            }
        }
    }

    @Test func seeksExactlyOrAtOrAfter() throws {
        try withLetters { environment, table throws in
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(try cursor.seek(to: "c".bytes))
                    #expect(
                        try cursor.withCurrent { key, value in (Array(key).string, Array(value).string) }! == ("c", "C")
                    )
                    #expect(try !cursor.seek(to: "cc".bytes))
                    #expect(try cursor.seek(atOrAfter: "cc".bytes))
                    #expect(try key(cursor) == "d")
                    #expect(try !cursor.seek(atOrAfter: "z".bytes))
                }
            }
        }
    }

    @Test func emptyTableHasNoFirstOrLast() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "empty", create: true)
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(try !cursor.first())
                    #expect(try !cursor.last())
                    #expect(try !cursor.next())
                }
            }
        }
    }

    @Test(arguments: [
        (KeyRange.all, false, ["a", "b", "c", "d", "e"]),
        (KeyRange.all, true, ["e", "d", "c", "b", "a"]),
        (KeyRange.from("b".bytes), false, ["b", "c", "d", "e"]),
        (KeyRange.from("bb".bytes), true, ["e", "d", "c"]),
        (KeyRange.upTo("c".bytes), false, ["a", "b"]),
        (KeyRange.upTo("c".bytes), true, ["b", "a"]),
        (KeyRange.upTo("zz".bytes), true, ["e", "d", "c", "b", "a"]),
        (KeyRange(from: "b".bytes, upTo: "d".bytes), false, ["b", "c"]),
        (KeyRange(from: "b".bytes, upTo: "d".bytes), true, ["c", "b"]),
        (KeyRange(from: "d".bytes, upTo: "b".bytes), false, []),
        (KeyRange(from: "x".bytes, upTo: nil), true, []),
    ])
    func scansRanges(range: KeyRange, reverse: Bool, expected: [String]) throws {
        try withLetters { environment, table throws in
            let keys = try environment.read { txn throws in
                try txn.entries(in: table, range: range, reverse: reverse).map(\.key.string)
            }
            #expect(keys == expected)
        }
    }

    @Test(arguments: [false, true])
    func scansPrefixes(reverse: Bool) throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "paths", create: true)
            let keys = ["a", "user/", "user/1", "user/2", "user0", "users", "v", "\u{FF}", "\u{FF}\u{FF}"]
            try environment.write { txn throws in
                for key in keys { try txn.put([], forKey: key.bytes, in: table) }
                try txn.put([], forKey: [0xFF], in: table)
                try txn.put([], forKey: [0xFF, 0xFF], in: table)
                try txn.put([], forKey: [0xFF, 0xFF, 0x01], in: table)
            }
            try environment.read { txn throws in
                let users = try txn.entries(in: table, range: .prefix("user/".bytes), reverse: reverse).map(
                    \.key.string)
                #expect(users == (reverse ? ["user/2", "user/1", "user/"] : ["user/", "user/1", "user/2"]))
                let high = try txn.entries(in: table, range: .prefix([0xFF, 0xFF]), reverse: reverse).map(\.key)
                #expect(
                    high == (reverse ? [[0xFF, 0xFF, 0x01], [0xFF, 0xFF]] : [[0xFF, 0xFF], [0xFF, 0xFF, 0x01]]))
                #expect(try txn.entries(in: table, range: .prefix("zzz".bytes), reverse: reverse).isEmpty)
                #expect(try txn.entries(in: table, range: .prefix([UInt8]()), reverse: reverse).count == 12)
            }
        }
    }

    @Test func scanStopsWhenTheBodySaysSo() throws {
        try withLetters { environment, table throws in
            var seen: [String] = []
            try environment.read { txn throws in
                try txn.scan(table) { key, _ throws in
                    seen.append(Array(key).string)
                    return seen.count < 2
                }
            }
            #expect(seen == ["a", "b"])
            #expect(try environment.read { txn in try txn.entries(in: table, limit: 3).count } == 3)
            #expect(try environment.read { txn in try txn.entries(in: table, limit: 0).count } == 0)
        }
    }

    @Test func prefixRangesNeedByteWiseOrder() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "reverse", options: .reverseKey, create: true)
            _ = try environment.read { txn throws in
                #expect(throws: LMDBError.incompatible) { try txn.entries(in: table, range: .prefix("a".bytes)) }
            }
        }
    }

    @Test func boundsFollowTheTablesOrder() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "ints", options: .integerKey, create: true)
            func key(_ number: UInt64) -> [UInt8] { withUnsafeBytes(of: number) { Array($0) } }
            try environment.write { txn throws in
                for number: UInt64 in [1, 5, 256, 1000] { try txn.put([], forKey: key(number), in: table) }
            }
            let found = try environment.read { txn throws in
                try txn.entries(in: table, range: KeyRange(from: key(2), upTo: key(1000))).count
            }
            #expect(found == 2)
        }
    }

    @Test func navigatesDuplicates() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "dups", options: .dupSort, create: true)
            try environment.write { txn throws in
                for (key, value) in [("a", "1"), ("b", "1"), ("b", "2"), ("b", "3"), ("c", "1")] {
                    try txn.put(value.bytes, forKey: key.bytes, in: table)
                }
            }
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(try cursor.seek(to: "b".bytes))
                    #expect(try cursor.duplicateCount() == 3)
                    #expect(try pair(cursor) == "b1")
                    #expect(try cursor.nextDuplicate())
                    #expect(try pair(cursor) == "b2")
                    #expect(try cursor.lastDuplicate())
                    #expect(try pair(cursor) == "b3")
                    #expect(try !cursor.nextDuplicate())
                    #expect(try cursor.previousDuplicate())
                    #expect(try pair(cursor) == "b2")
                    #expect(try cursor.firstDuplicate())
                    #expect(try pair(cursor) == "b1")
                    #expect(try cursor.nextKey())
                    #expect(try pair(cursor) == "c1")
                    #expect(try cursor.previousKey())
                    #expect(try pair(cursor) == "b3")
                    // The move to another key and the read of its entry in one call, both ways, and off either end.
                    func text(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> String {
                        String(decoding: unsafe key, as: UTF8.self) + String(decoding: unsafe value, as: UTF8.self)
                    }
                    #expect(try cursor.withNextKey(text) == "c1")
                    #expect(try cursor.withNextKey(text) == nil)
                    #expect(try cursor.last())
                    #expect(try cursor.withNextKey(reverse: true, text) == "b3")
                    #expect(try cursor.withNextKey(reverse: true, text) == "a1")
                    #expect(try cursor.withNextKey(reverse: true, text) == nil)
                    #expect(try cursor.seek(to: "b".bytes))
                    struct Stop: Error {}
                    var thrown = false
                    do { _ = try cursor.withNextKey { _, _ in throw Stop() } } catch is Stop { thrown = true }
                    #expect(thrown)
                    #expect(try pair(cursor) == "c1")
                    #expect(try cursor.seek(to: "b".bytes, value: "2".bytes))
                    #expect(try pair(cursor) == "b2")
                    #expect(try !cursor.seek(to: "b".bytes, value: "9".bytes))
                    #expect(try cursor.seek(to: "b".bytes, valueAtOrAfter: "25".bytes))
                    #expect(try pair(cursor) == "b3")
                }
                let all = try txn.entries(in: table).map { $0.key.string + $0.value.string }
                #expect(all == ["a1", "b1", "b2", "b3", "c1"])
                let reversed = try txn.entries(in: table, reverse: true).map { $0.key.string + $0.value.string }
                #expect(reversed == ["c1", "b3", "b2", "b1", "a1"])
            }
        }
    }

    /// The keys `forEachKey(reverse:_:)` visits from where `cursor` is, each followed by its count, up to `stop`.
    private func keyCounts(
        _ cursor: borrowing Cursor, reverse: Bool = false, until stop: String? = nil
    ) throws -> [String] {
        var seen: [String] = []
        try cursor.forEachKey(reverse: reverse) { key, count in
            let key = String(decoding: unsafe key, as: UTF8.self)
            seen.append("\(key)\(count)")
            return key != stop
        }
        return seen
    }

    /// The walk over distinct keys gives each key once with its number of values, from where the cursor is, both
    /// ways, stops when told, goes on after the body moved among the key's values, and passes errors through.
    @Test func walksDistinctKeysWithTheirCounts() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "dups", options: .dupSort, create: true)
            let entries = [("a", "1"), ("b", "1"), ("b", "2"), ("b", "3"), ("c", "1"), ("d", "1"), ("d", "2")]
            try environment.write { txn throws in
                for (key, value) in entries { try txn.put(value.bytes, forKey: key.bytes, in: table) }
            }
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(try keyCounts(cursor) == [])  // not positioned yet: nothing
                    #expect(try cursor.first())
                    #expect(try keyCounts(cursor) == ["a1", "b3", "c1", "d2"])
                    #expect(try cursor.seek(to: "b".bytes, value: "2".bytes))
                    #expect(try keyCounts(cursor, until: "c") == ["b3", "c1"])
                    #expect(try pair(cursor) == "c1")  // left on the key the body stopped at
                    #expect(try cursor.last())
                    #expect(try keyCounts(cursor, reverse: true) == ["d2", "c1", "b3", "a1"])
                    #expect(try cursor.seek(to: "c".bytes))
                    #expect(try keyCounts(cursor, reverse: true, until: "b") == ["c1", "b3"])
                    // The body reads every value of its key through the cursor; the walk goes on to the next key.
                    #expect(try cursor.first())
                    var pairs: [String] = []
                    try cursor.forEachKey { _, _ in
                        var more = try cursor.firstDuplicate()
                        while more {
                            pairs.append(try pair(cursor) ?? "?")
                            more = try cursor.nextDuplicate()
                        }
                        return true
                    }
                    #expect(pairs == entries.map { $0.0 + $0.1 })
                    struct Stop: Error {}
                    #expect(try cursor.first())
                    #expect(throws: Stop.self) { try cursor.forEachKey { _, _ in throw Stop() } }
                }
            }
        }
    }

    /// What `countValues(reverse:upTo:includingBound:limit:)` counts from where `cursor` is, up to `bound`.
    private func valueCount(
        _ cursor: borrowing Cursor, reverse: Bool = false, upTo bound: String?, including: Bool = false,
        limit: Int = .max
    ) throws -> Int? {
        guard let bound else {
            return try unsafe cursor.countValues(reverse: reverse, upTo: nil, includingBound: including, limit: limit)
        }
        return try unsafe Array(bound.utf8).withUnsafeBytes { bound in
            try unsafe cursor.countValues(reverse: reverse, upTo: bound, includingBound: including, limit: limit)
        }
    }

    /// A count of values walks the keys from the cursor's, either way, up to a bound (a stored key or not, included
    /// or not) or the end, gives up past its limit, and leaves the cursor on the first key it did not count.
    @Test func countsValuesUpToABound() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "dups", options: .dupSort, create: true)
            let plain = try environment.openTable(named: "plain", create: true)
            let entries = [("a", "1"), ("b", "1"), ("b", "2"), ("b", "3"), ("c", "1"), ("d", "1"), ("d", "2")]
            try environment.write { txn throws in
                for (key, value) in entries {
                    try txn.put(value.bytes, forKey: key.bytes, in: table)
                    try txn.put(value.bytes, forKey: key.bytes, in: plain)
                }
            }
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(try valueCount(cursor, upTo: nil) == 0)  // not positioned yet: nothing
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: nil) == 7)
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: "c") == 4)
                    #expect(try pair(cursor) == "c1")  // left on the bound, not counted
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: "c", including: true) == 5)
                    #expect(try pair(cursor) == "d1")
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: "bb", including: true) == 4)  // a bound between keys
                    #expect(try cursor.seek(to: "b".bytes, value: "3".bytes))
                    #expect(try valueCount(cursor, upTo: "d") == 4)  // the whole of the cursor's key
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: "a") == 0)
                    #expect(try cursor.last())
                    #expect(try valueCount(cursor, reverse: true, upTo: "b") == 3)
                    #expect(try pair(cursor) == "b3")
                    #expect(try cursor.last())
                    #expect(try valueCount(cursor, reverse: true, upTo: "b", including: true) == 6)
                    #expect(try cursor.last())
                    #expect(try valueCount(cursor, reverse: true, upTo: nil) == 7)
                    // Past the limit: nil, whether the count would have gone on or stopped at the bound.
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: nil, limit: 3) == nil)
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: "c", limit: 4) == 4)
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: "c", limit: 3) == nil)
                    // A bound no key can be.
                    #expect(try cursor.first())
                    #expect(throws: LMDBError.badValueSize) { try valueCount(cursor, upTo: "") }
                }
                // A table that is not dupSort: each key counts one.
                try txn.withCursor(on: plain) { cursor throws in
                    #expect(try cursor.first())
                    #expect(try valueCount(cursor, upTo: "d") == 3)
                    #expect(try cursor.last())
                    #expect(try valueCount(cursor, reverse: true, upTo: "a", including: true) == 4)
                }
            }
        }
    }

    @Test func duplicateCountNeedsADupSortTable() throws {
        try withLetters { environment, table throws in
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    _ = try cursor.first()
                    #expect(throws: LMDBError.invalidArgument) { try cursor.duplicateCount() }
                    #expect(throws: LMDBError.invalidArgument) { try cursor.forEachKey { _, _ in true } }
                }
            }
        }
    }

    @Test func readsDupFixedValuesAPageAtATime() throws {
        try withEnvironment(Environment.Configuration(mapSize: 8 << 20)) { environment, _ throws in
            let table = try environment.openTable(named: "index", options: [.dupSort, .dupFixed], create: true)
            let count = 5000  // 16-byte values: several pages' worth
            try environment.write { txn throws in
                for number in 0..<count {
                    var value = [UInt8](repeating: 0, count: 16)
                    withUnsafeBytes(of: UInt64(number).bigEndian) { value.replaceSubrange(8..<16, with: $0) }
                    try txn.put(value, forKey: "k".bytes, in: table, options: .appendDuplicate)
                }
                try txn.put([UInt8](repeating: 1, count: 16), forKey: "other".bytes, in: table)
            }
            var pages = 0
            var numbers: [UInt64] = []
            let found = try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    try cursor.forEachDuplicatePage(ofKey: "k".bytes) { page throws in
                        pages += 1
                        #expect(page.count % 16 == 0)
                        for offset in stride(from: 0, to: page.count, by: 16) {
                            numbers.append(
                                UInt64(bigEndian: page.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                        }
                    }
                }
            }
            #expect(found)
            #expect(pages > 1)
            #expect(numbers == (0..<UInt64(count)).map { $0 })
            // A key with one value has no duplicate subtree in LMDB; it is still one page of one value.
            let single = try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    var pages: [[UInt8]] = []
                    try cursor.forEachDuplicatePage(ofKey: "other".bytes) { pages.append(Array($0)) }
                    return pages
                }
            }
            #expect(single == [[UInt8](repeating: 1, count: 16)])
            let missing = try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor in try cursor.forEachDuplicatePage(ofKey: "none".bytes) { _ in }
                }
            }
            #expect(!missing)
        }
    }

    @Test func duplicatePagesNeedADupFixedTable() throws {
        try withLetters { environment, table throws in
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(throws: LMDBError.incompatible) {
                        try cursor.forEachDuplicatePage(ofKey: "a".bytes) { _ in }
                    }
                }
            }
        }
    }

    @Test func putsAndDeletesThroughTheCursor() throws {
        try withLetters { environment, table throws in
            try environment.write { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    try cursor.put("F".bytes, forKey: "f".bytes)
                    #expect(try key(cursor) == "f")
                    #expect(try cursor.seek(to: "c".bytes))
                    try cursor.deleteCurrent()
                    #expect(throws: LMDBError.keyExists) {
                        try cursor.put("X".bytes, forKey: "a".bytes, options: .noOverwrite)
                    }
                }
            }
            let keys = try environment.read { txn in try txn.entries(in: table).map(\.key.string) }
            #expect(keys == ["a", "b", "d", "e", "f"])
        }
    }

    @Test func deletesAllDuplicatesOfTheCurrentKey() throws {
        try withEnvironment { environment, _ throws in
            let table = try environment.openTable(named: "dups", options: .dupSort, create: true)
            try environment.write { txn throws in
                for value in ["1", "2", "3"] { try txn.put(value.bytes, forKey: "k".bytes, in: table) }
                try txn.put("1".bytes, forKey: "z".bytes, in: table)
            }
            try environment.write { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(try cursor.seek(to: "k".bytes))
                    try cursor.deleteCurrent(allDuplicates: true)
                }
            }
            #expect(try environment.read { txn in try txn.entries(in: table).map(\.key.string) } == ["z"])
        }
    }

    @Test func cursorsOfReadTransactionsCannotWrite() throws {
        try withLetters { environment, table throws in
            try environment.read { txn throws in
                try txn.withCursor(on: table) { cursor throws in
                    #expect(throws: LMDBError.accessDenied) { try cursor.put("X".bytes, forKey: "x".bytes) }
                    _ = try cursor.first()
                    #expect(throws: LMDBError.accessDenied) { try cursor.deleteCurrent() }
                }
            }
        }
    }
}
