import Foundation
import LMDB
import Testing

/// Real stores with real bytes damaged after they were closed: the page check names the page, the table and the
/// kind of each damage, and never crashes.
@Suite struct PageCheckDamageTests {
    typealias Stores = PageCheckStores
    typealias Kind = PageCheck.Problem.Kind

    /// A store of every shape the damage needs, written in several transactions: table `t` with a branch root,
    /// `index` (`dupSort|dupFixed`) with keys in sub-pages and keys in sub-databases of LEAF2 pages, `big` with
    /// overflow values, and a free list.
    static func fill(_ environment: Environment) throws -> [Table] {
        let table = try environment.openTable(named: "t", create: true)
        let index = try environment.openTable(named: "index", options: [.dupSort, .dupFixed], create: true)
        let big = try environment.openTable(named: "big", create: true)
        try environment.write { txn in
            for key in 0..<2000 {
                try txn.put(Stores.value16(key) + Stores.value16(key), forKey: Stores.key(key), in: table)
            }
            for value in 0..<600 {
                try txn.put(Stores.value16(value), forKey: Stores.key(0, prefix: "many"), in: index)
            }
            for key in 0..<50 {
                for value in 0..<3 {
                    try txn.put(Stores.value16(value), forKey: Stores.key(key, prefix: "few"), in: index)
                }
            }
            for key in 0..<5 { try txn.put([UInt8](repeating: 7, count: 10_000), forKey: Stores.key(key), in: big) }
        }
        for round in 0..<3 {
            try environment.write { txn in
                for key in stride(from: round, to: 2000, by: 7) { try txn.delete(forKey: Stores.key(key), in: table) }
            }
        }
        return [table, index, big]
    }

    /// Makes the store, lets `damage` change its bytes, and returns the report of a full check.
    static func check(
        singleFile: Bool = false, _ damage: (inout RawStore) throws -> Void
    ) throws -> PageCheck.Report {
        try Stores.withClosedStore(singleFile: singleFile, fill) { path, statistics in
            let clean = try PageCheck.checkFile(path: path)
            Stores.expectMatches(clean, statistics)
            var store = try RawStore(path: path)
            try damage(&store)
            try store.save()
            return try PageCheck.checkFile(path: path)
        }
    }

    /// The damage problems of a report, as (kind, page, owner).
    static func damage(_ report: PageCheck.Report) -> [Found] {
        report.problems.filter { $0.severity == .damage }.map { Found(kind: $0.kind, page: $0.page, owner: $0.owner) }
    }

    struct Found: Hashable, CustomStringConvertible {
        let kind: Kind
        let page: Int?
        let owner: PageCheck.Owner
        var description: String { "\(kind) on page \(page.map(String.init) ?? "-") of \(owner)" }
    }

    // MARK: Meta pages

    @Test func aDamagedNewestMetaPageIsReportedAndTheOtherOneIsUsed() throws {
        var slot = 0
        var olderTransaction = 0
        let report = try Self.check { store in
            slot = store.newestSlot
            olderTransaction = store.transactionID(slot: 1 - slot)
            store.set(slot * store.pageSize + 16, 4, to: 0x1234_5678)
        }
        #expect(Self.damage(report) == [Found(kind: .metaPage, page: slot, owner: .meta)])
        #expect(report.problems.first?.message.contains("magic number is 0x12345678") == true)
        #expect(report.problems.first?.message.contains("LMDB refuses to open") == true)
        #expect(report.metaPage == 1 - slot)
        #expect(report.transactionID == olderTransaction)
        #expect(report.damagedPages == [slot: .meta])
    }

    @Test func aMetaPageOfAnotherVersionIsReported() throws {
        var slot = 0
        let report = try Self.check { store in
            slot = 1 - store.newestSlot
            store.set(slot * store.pageSize + 16 + 4, 4, to: 2)
        }
        #expect(Self.damage(report) == [Found(kind: .metaPage, page: slot, owner: .meta)])
        #expect(report.problems.first?.message.contains("format version is 2") == true)
        #expect(report.metaPage == 1 - slot)
    }

    @Test func aFirstMetaPageOfGarbageStillFindsTheSecond() throws {
        let report = try Self.check { store in
            for offset in 0..<store.pageSize { store.bytes[offset] = UInt8(truncatingIfNeeded: offset &* 31) }
        }
        #expect(Self.damage(report).contains(Found(kind: .metaPage, page: 0, owner: .meta)))
        #expect(Self.damage(report).allSatisfy { $0.page == 0 && $0.owner == .meta })
        #expect(report.metaPage == 1)
        #expect(report.pageSize == 4096)
    }

    @Test func aFirstMetaPageNamingAnotherPageSizeIsOutvotedByTheSecond() throws {
        let report = try Self.check { store in store.set(16 + 24, 4, to: 8192) }
        #expect(Self.damage(report) == [Found(kind: .metaPage, page: 0, owner: .meta)])
        #expect(report.problems.first?.message.contains("page size of 8192 bytes, the other meta page 4096") == true)
        #expect(report.metaPage == 1)
        #expect(report.pageSize == 4096)
    }

    @Test func twoDamagedMetaPagesLeaveNoSnapshot() throws {
        let report = try Self.check { store in
            store.set(16, 4, to: 0)
            store.set(store.pageSize + 16, 4, to: 0)
        }
        #expect(
            Self.damage(report) == [
                Found(kind: .metaPage, page: 0, owner: .meta), Found(kind: .metaPage, page: 1, owner: .meta),
                Found(kind: .metaPage, page: nil, owner: .meta),
            ])
        #expect(report.metaPage == nil)
        #expect(report.tables.isEmpty)
        #expect(!report.isClean)
    }

    @Test func aHugeMapSizeIsReportedAsAValue() throws {
        var slot = 0
        let report = try Self.check { store in
            slot = store.newestSlot
            store.set(store.meta + 16, 8, to: Int.max)
        }
        #expect(Self.damage(report) == [Found(kind: .mapSize, page: slot, owner: .meta)])
        #expect(report.mapSize == Int.max)
    }

    // MARK: Tree pages

    @Test func aBranchPageWithDamagedBoundsIsReported() throws {
        var root = 0
        let report = try Self.check { store in
            root = try #require(store.root(of: "t"))
            #expect(store.isBranch(root))
            store.set(store.offset(ofPage: root) + 12, 2, to: 0xFFF0)
        }
        #expect(Self.damage(report) == [Found(kind: .pageLayout, page: root, owner: .table("t"))])
        #expect(report.damagedPages(of: .table("t")) == [root])
        // The pages below it are no longer reached.
        #expect((report.leakedPages ?? 0) > 10)
        #expect(report.problems.contains { $0.kind == .leakedPages && $0.severity == .note })
    }

    @Test func aLeafNodeOffsetOutsideThePageIsReported() throws {
        var leaf = 0
        let report = try Self.check { store in
            let root = try #require(store.root(of: "t"))
            leaf = store.pages(from: root)[3]
            #expect(!store.isBranch(leaf))
            store.set(store.offset(ofPage: leaf) + 16 + 2, 2, to: store.pageSize - 2)
        }
        #expect(Self.damage(report) == [Found(kind: .nodeLayout, page: leaf, owner: .table("t"))])
        #expect(report.problems.first?.message.hasPrefix("Node 1 lies at offset 4094") == true)
    }

    @Test func twoLeafNodesAtOneOffsetAreReported() throws {
        var leaf = 0
        let report = try Self.check { store in
            let root = try #require(store.root(of: "t"))
            leaf = store.pages(from: root)[2]
            let first = store.integer(store.offset(ofPage: leaf) + 16, 2)
            store.set(store.offset(ofPage: leaf) + 18, 2, to: first)
        }
        #expect(Self.damage(report).first == Found(kind: .nodeLayout, page: leaf, owner: .table("t")))
        #expect(report.problems.first?.message.contains("overlap") == true)
    }

    @Test func keysOutOfOrderInALeafAreReported() throws {
        var leaf = 0
        let report = try Self.check { store in
            let root = try #require(store.root(of: "t"))
            leaf = store.pages(from: root)[5]
            // Swap the offsets of nodes 3 and 4.
            let base = store.offset(ofPage: leaf) + 16
            let third = store.integer(base + 6, 2)
            store.set(base + 6, 2, to: store.integer(base + 8, 2))
            store.set(base + 8, 2, to: third)
        }
        #expect(Self.damage(report) == [Found(kind: .keyOrder, page: leaf, owner: .table("t"))])
        #expect(report.problems.first?.message.contains("Key 4") == true)
    }

    @Test func aKeyBeyondItsParentsBoundIsReported() throws {
        var leaf = 0
        let report = try Self.check { store in
            let root = try #require(store.root(of: "t"))
            leaf = store.pages(from: root)[2]
            // The leaf's last key becomes larger than every key of the table.
            let last = store.node(store.keyCount(ofPage: leaf) - 1, ofPage: leaf)
            store.bytes[last + 8] = UInt8(ascii: "z")
        }
        #expect(Self.damage(report) == [Found(kind: .keyOrder, page: leaf, owner: .table("t"))])
        #expect(report.problems.first?.message.contains("does not sort before") == true)
    }

    @Test func aLeafWithAForeignPageNumberIsReported() throws {
        var leaf = 0
        let report = try Self.check { store in
            let root = try #require(store.root(of: "t"))
            leaf = store.pages(from: root)[4]
            store.set(store.offset(ofPage: leaf), 8, to: leaf + 1)
        }
        #expect(Self.damage(report) == [Found(kind: .pageNumber, page: leaf, owner: .table("t"))])
    }

    @Test func twoSwappedPagesAreBothReported() throws {
        var pages: [Int] = []
        let report = try Self.check { store in
            let root = try #require(store.root(of: "t"))
            pages = Array(store.pages(from: root)[2...3])
            let (first, second) = (store.offset(ofPage: pages[0]), store.offset(ofPage: pages[1]))
            let size = store.pageSize
            let saved = Array(store.bytes[first..<(first + size)])
            store.bytes.replaceSubrange(first..<(first + size), with: store.bytes[second..<(second + size)])
            store.bytes.replaceSubrange(second..<(second + size), with: saved)
        }
        #expect(Set(Self.damage(report)) == Set(pages.map { Found(kind: .pageNumber, page: $0, owner: .table("t")) }))
        #expect(Self.damage(report).count == 2)
    }

    @Test func aChildPointerBeyondTheFileIsReported() throws {
        var root = 0
        let report = try Self.check { store in
            root = try #require(store.root(of: "t"))
            store.setChild(store.node(1, ofPage: root), to: 0xFF_FFFF)
        }
        #expect(Self.damage(report) == [Found(kind: .pageOutOfRange, page: root, owner: .table("t"))])
        #expect(report.problems.first?.message.contains("points at page 16777215") == true)
    }

    @Test func aChildPointerAtAMetaPageIsReported() throws {
        var root = 0
        let report = try Self.check { store in
            root = try #require(store.root(of: "t"))
            store.setChild(store.node(2, ofPage: root), to: 1)
        }
        #expect(Self.damage(report) == [Found(kind: .pageOutOfRange, page: root, owner: .table("t"))])
    }

    @Test func aBranchPointingAtItsAncestorIsACycleNotALoop() throws {
        var root = 0
        let report = try Self.check { store in
            root = try #require(store.root(of: "t"))
            store.setChild(store.node(1, ofPage: root), to: root)
        }
        #expect(Self.damage(report) == [Found(kind: .pageReachedTwice, page: root, owner: .table("t"))])
        #expect(report.problems.first?.message.contains("cycle") == true)
    }

    @Test func twoTablesSharingAPageAreReported() throws {
        var shared = 0
        let report = try Self.check { store in
            let root = try #require(store.root(of: "t"))
            shared = store.pages(from: root)[1]
            // Table big's root becomes a leaf of table t.
            store.set(try #require(store.record(of: "big")) + 40, 8, to: shared)
        }
        #expect(Self.damage(report).contains(Found(kind: .pageReachedTwice, page: shared, owner: .table("t"))))
        #expect(!report.isClean)
    }

    @Test func aTableRootBeyondTheSnapshotIsReported() throws {
        var recordPage = 0
        let report = try Self.check { store in
            let record = try #require(store.record(of: "big"))
            recordPage = record / store.pageSize
            store.set(record + 40, 8, to: store.lastPage + 1)
        }
        #expect(Self.damage(report) == [Found(kind: .pageOutOfRange, page: recordPage, owner: .table("big"))])
    }

    @Test func unknownTableFlagsAreReported() throws {
        var recordPage = 0
        let report = try Self.check { store in
            let record = try #require(store.record(of: "t"))
            recordPage = record / store.pageSize
            store.set(record + 4, 2, to: 0x0100)
        }
        #expect(Self.damage(report) == [Found(kind: .tableRecord, page: recordPage, owner: .table("t"))])
    }

    @Test func aWrongEntryCountIsReported() throws {
        var root = 0
        let report = try Self.check { store in
            let record = try #require(store.record(of: "t"))
            root = store.integer(record + 40, 8)
            store.set(record + 32, 8, to: 5)
        }
        #expect(Self.damage(report) == [Found(kind: .treeCounts, page: root, owner: .table("t"))])
        #expect(report.problems.first?.message.contains("5 entries") == true)
    }

    @Test func aWrongDepthIsReported() throws {
        var root = 0
        let report = try Self.check { store in
            let record = try #require(store.record(of: "t"))
            root = store.integer(record + 40, 8)
            store.set(record + 6, 2, to: 3)
        }
        #expect(Self.damage(report) == [Found(kind: .treeDepth, page: root, owner: .table("t"))])
    }

    // MARK: Values

    @Test func anOverflowPageWithTooFewPagesIsReported() throws {
        var overflow = 0
        let report = try Self.check { store in
            let bigRoot = try #require(store.root(of: "big"))
            let node = try #require(store.leafNodes(from: bigRoot).first)
            overflow = store.integer(store.dataOffset(node), 8)
            #expect(store.integer(store.offset(ofPage: overflow) + 12, 4) == 3)
            store.set(store.offset(ofPage: overflow) + 12, 4, to: 1)
        }
        #expect(Self.damage(report) == [Found(kind: .overflowPage, page: overflow, owner: .table("big"))])
        #expect(report.problems.first?.message.contains("needs 3") == true)
    }

    @Test func anOverflowRunPastTheSnapshotIsReported() throws {
        var overflow = 0
        let report = try Self.check { store in
            let bigRoot = try #require(store.root(of: "big"))
            let node = try #require(store.leafNodes(from: bigRoot).last)
            overflow = store.integer(store.dataOffset(node), 8)
            store.set(store.offset(ofPage: overflow) + 12, 4, to: 0xFFFF_FFFF)
        }
        #expect(Self.damage(report) == [Found(kind: .overflowPage, page: overflow, owner: .table("big"))])
    }

    @Test func anOverflowPointerAtALeafIsReported() throws {
        var leaf = 0
        let report = try Self.check { store in
            let nodes = store.leafNodes(from: try #require(store.root(of: "big")))
            let root = try #require(store.root(of: "t"))
            leaf = store.pages(from: root)[1]
            // The value of big's first node now starts on a leaf of t, which t reaches first or later.
            store.set(store.dataOffset(nodes[0]), 8, to: leaf)
        }
        let found = Self.damage(report)
        #expect(found.contains { $0.page == leaf && [.pageType, .pageReachedTwice].contains($0.kind) })
    }

    @Test func aDamagedLEAF2PageIsReported() throws {
        var page = 0
        let report = try Self.check { store in
            let indexRoot = try #require(store.root(of: "index"))
            let node = try #require(store.leafNodes(from: indexRoot).first { store.nodeFlags($0) == 6 })
            let subRoot = store.integer(store.dataOffset(node) + 40, 8)
            page = try #require(store.pages(from: subRoot).first { store.isLeaf2($0) })
            // Swap the first two 16-byte values.
            let first = store.offset(ofPage: page) + 16
            let saved = Array(store.bytes[first..<(first + 16)])
            store.bytes.replaceSubrange(first..<(first + 16), with: store.bytes[(first + 16)..<(first + 32)])
            store.bytes.replaceSubrange((first + 16)..<(first + 32), with: saved)
        }
        #expect(Self.damage(report) == [Found(kind: .keyOrder, page: page, owner: .table("index"))])
        #expect(report.problems.first?.message.contains("duplicates of key") != true)
    }

    @Test func aLEAF2PageWithAnotherValueSizeIsReported() throws {
        var page = 0
        let report = try Self.check { store in
            let indexRoot = try #require(store.root(of: "index"))
            let node = try #require(store.leafNodes(from: indexRoot).first { store.nodeFlags($0) == 6 })
            let subRoot = store.integer(store.dataOffset(node) + 40, 8)
            page = try #require(store.pages(from: subRoot).first { store.isLeaf2($0) })
            store.set(store.offset(ofPage: page) + 8, 2, to: 15)
        }
        #expect(Self.damage(report) == [Found(kind: .pageLayout, page: page, owner: .table("index"))])
    }

    @Test func aDamagedSubPageIsReported() throws {
        var page = 0
        let report = try Self.check { store in
            let indexRoot = try #require(store.root(of: "index"))
            let node = try #require(store.leafNodes(from: indexRoot).first { store.nodeFlags($0) == 4 })
            page = node / store.pageSize
            // The sub-page's mp_lower becomes odd.
            store.set(store.dataOffset(node) + 12, 2, to: 17)
        }
        #expect(Self.damage(report) == [Found(kind: .subPage, page: page, owner: .table("index"))])
    }

    @Test func aFreeListEntryBeyondTheSnapshotIsReported() throws {
        var page = 0
        let report = try Self.check { store in
            let node = try #require(store.leafNodes(from: store.freeListRoot).first { store.nodeFlags($0) == 0 })
            page = node / store.pageSize
            #expect(store.integer(store.dataOffset(node), 8) > 0)
            store.set(store.dataOffset(node) + 8, 8, to: store.lastPage + 50)
        }
        #expect(Self.damage(report) == [Found(kind: .freeList, page: page, owner: .freeList)])
    }

    @Test func aPageBothUsedAndFreeIsReported() throws {
        var leaf = 0
        let report = try Self.check { store in
            let node = try #require(store.leafNodes(from: store.freeListRoot).first { store.nodeFlags($0) == 0 })
            let root = try #require(store.root(of: "t"))
            leaf = store.pages(from: root)[1]
            // The free list's first page number names a leaf of t, whose own page is then leaked; order is kept
            // descending by writing it where it fits.
            let count = store.integer(store.dataOffset(node), 8)
            let numbers = (1...count).map { store.integer(store.dataOffset(node) + 8 * $0, 8) }
            var changed = numbers
            changed[changed.count - 1] = leaf
            changed.sort(by: >)
            for (index, number) in changed.enumerated() {
                store.set(store.dataOffset(node) + 8 * (index + 1), 8, to: number)
            }
        }
        let found = Self.damage(report)
        #expect(found.contains(Found(kind: .pageUsedAndFree, page: leaf, owner: .table("t"))))
    }

    // MARK: The file

    @Test(arguments: [false, true])
    func aTruncatedFileIsReported(singleFile: Bool) throws {
        var pages = 0
        let report = try Self.check(singleFile: singleFile) { store in
            pages = store.bytes.count / store.pageSize / 2
            store.bytes.removeLast(store.bytes.count - pages * store.pageSize - 100)
        }
        let found = Self.damage(report)
        #expect(found.contains(Found(kind: .truncatedFile, page: pages, owner: .meta)))
        #expect(found.allSatisfy { [.truncatedFile, .metaPage].contains($0.kind) })
        #expect(report.problems.first { $0.kind == .truncatedFile }?.message.contains("cut short") == true)
    }

    @Test func aLastPageOfIntMaxInAFileShorterThanAPageIsDamageNotAnOverflow() throws {
        // Found by FuzzPageCheck: a file shorter than its page size whose meta page names the largest last page
        // overflowed the count of the pages past the file's end. The input, as its spans of non-zero bytes.
        let spans: [(offset: Int, bytes: [UInt8])] = [
            (10, [0x08]), (16, [0xDE, 0xC0, 0xEF, 0xBE, 0x01]), (34, [0x80]), (41, [0x10, 0x00, 0x00, 0x01]),
            (51, [0x0C, 0x08]), (77, [0xFF, 0xFF, 0xFF, 0xFF]), (92, [UInt8](repeating: 0xFF, count: 8)),
            (140, [UInt8](repeating: 0xFF, count: 8) + [0x01]), (351, [0x91]), (1457, [0xFF, 0xFA]), (1894, [0x01]),
            (2079, [0xF6, 0xFF]), (3339, [0x01]), (3346, [0x0C]), (3516, [0x3A]),
        ]
        var bytes = [UInt8](repeating: 0, count: 4063)
        for span in spans { bytes.replaceSubrange(span.offset..<(span.offset + span.bytes.count), with: span.bytes) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pagecheck-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        for scope in [PageCheck.Scope.full, .roots] {
            let report = try PageCheck.checkFile(path: path, options: .init(scope: scope, maxProblems: 20))
            #expect(report.problems.contains { $0.severity == .damage })
        }
    }

    @Test func aTransactionIDPastIntMaxInAnOpenStoreIsCheckedWithoutATrap() throws {
        // Found by FuzzStoreCheck: LMDB opens a store whose newest meta page has a transaction ID past Int.max, and
        // the check of the open environment converted the ID it read back (negative as an Int) and trapped.
        try Stores.withClosedStore(Self.fill) { path, _ in
            var store = try RawStore(path: path)
            let slot = store.newestSlot
            store.set(slot * store.pageSize + 16 + 128, 8, to: Int(bitPattern: 0x8000_0000_0000_0005))
            try store.save()
            do {
                let environment = try Environment.open(path: path)
                defer { try? environment.close() }
                let report = try environment.checkPages(scope: .full)
                #expect(report.transactionID == Int.max)  // the report clamps what an Int cannot hold
            } catch let error as LMDBError {
                // LMDB may refuse the meta page itself; an error is as good as a report, a trap is not.
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test func problemsBeyondTheLimitAreCountedNotListed() throws {
        try Stores.withClosedStore(Self.fill) { path, _ in
            var store = try RawStore(path: path)
            store.bytes.removeLast(store.bytes.count / 2)
            try store.save()
            let all = try PageCheck.checkFile(path: path)
            let limited = try PageCheck.checkFile(path: path, options: .init(maxProblems: 2))
            #expect(all.problems.count > 3)
            #expect(limited.problems == Array(all.problems.prefix(2)))
            #expect(limited.omittedProblemCount == all.problems.count - 2)
            #expect(limited.omitsDamage)
            #expect(!limited.isClean)
            #expect(limited.damagedPages == all.damagedPages)
        }
    }

    @Test func aFileTooShortForAMetaPageIsReportedNotThrown() throws {
        let report = try Self.check { store in store.bytes.removeLast(store.bytes.count - 60) }
        #expect(Self.damage(report).contains(Found(kind: .metaPage, page: 0, owner: .meta)))
        #expect(report.metaPage == nil)
    }

    @Test func anEmptyFileIsReportedNotThrown() throws {
        let report = try Self.check { store in store.bytes = [] }
        #expect(report.fileSize == 0)
        #expect(!report.isClean)
        #expect(report.tables.isEmpty)
    }
}
