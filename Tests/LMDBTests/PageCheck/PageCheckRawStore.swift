import Foundation
import LMDB

/// A closed store's data file as bytes, with just enough of LMDB 0.9's layout (from mdb.c) to find the pages a test
/// damages. Independent of the page check it tests; it trusts the file, which a test damages only after reading.
struct RawStore {
    let file: String
    var bytes: [UInt8]

    init(path: String) throws {
        file = PageCheckStores.dataFile(path)
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// Writes the bytes back, replacing the file.
    func save() throws {
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }

    // MARK: Integers

    func integer(_ offset: Int, _ length: Int) -> Int {
        (0..<length).reversed().reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
    }

    mutating func set(_ offset: Int, _ length: Int, to value: Int) {
        for index in 0..<length { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    // MARK: Meta pages

    var pageSize: Int { integer(16 + 24, 4) }

    func transactionID(slot: Int) -> Int { integer(slot * pageSize + 16 + 128, 8) }

    /// The slot LMDB reads: the larger transaction ID.
    var newestSlot: Int { transactionID(slot: 0) < transactionID(slot: 1) ? 1 : 0 }

    /// The offset of the newest meta page's `MDB_meta`.
    var meta: Int { newestSlot * pageSize + 16 }

    var freeListRoot: Int { integer(meta + 24 + 40, 8) }
    var mainRoot: Int { integer(meta + 72 + 40, 8) }
    var lastPage: Int { integer(meta + 120, 8) }

    // MARK: Pages and nodes

    func offset(ofPage page: Int) -> Int { page * pageSize }
    func flags(ofPage page: Int) -> Int { integer(offset(ofPage: page) + 10, 2) }
    func isBranch(_ page: Int) -> Bool { flags(ofPage: page) & 0x01 != 0 }
    func isLeaf2(_ page: Int) -> Bool { flags(ofPage: page) & 0x20 != 0 }
    func keyCount(ofPage page: Int) -> Int { (integer(offset(ofPage: page) + 12, 2) - 16) / 2 }

    /// The offset in the file of node `index` of the page (or sub-page) at `base`.
    func node(_ index: Int, at base: Int) -> Int { base + integer(base + 16 + 2 * index, 2) }
    func node(_ index: Int, ofPage page: Int) -> Int { node(index, at: offset(ofPage: page)) }
    func nodeFlags(_ node: Int) -> Int { integer(node + 4, 2) }
    func keySize(_ node: Int) -> Int { integer(node + 6, 2) }
    func key(_ node: Int) -> [UInt8] { Array(bytes[(node + 8)..<(node + 8 + keySize(node))]) }
    func dataOffset(_ node: Int) -> Int { node + 8 + keySize(node) }
    func dataSize(_ node: Int) -> Int { integer(node, 4) }
    func child(_ node: Int) -> Int { integer(node, 4) | integer(node + 4, 2) << 32 }

    mutating func setChild(_ node: Int, to page: Int) {
        set(node, 4, to: page & 0xFFFF_FFFF)
        set(node + 4, 2, to: page >> 32)
    }

    /// Every page of the tree rooted at `root`, depth first, parents before children.
    func pages(from root: Int) -> [Int] {
        var pages: [Int] = []
        var pending = [root]
        while let page = pending.popLast() {
            pages.append(page)
            if isBranch(page) {
                pending += (0..<keyCount(ofPage: page)).reversed().map { child(node($0, ofPage: page)) }
            }
        }
        return pages
    }

    /// The leaf nodes of the tree rooted at `root`.
    func leafNodes(from root: Int) -> [Int] {
        pages(from: root).filter { !isBranch($0) && !isLeaf2($0) }.flatMap { page in
            (0..<keyCount(ofPage: page)).map { node($0, ofPage: page) }
        }
    }

    /// The offset of the `MDB_db` record of the table `name`, in a leaf of the main table.
    func record(of name: String) -> Int? {
        leafNodes(from: mainRoot).first { key($0) == Array(name.utf8) }.map(dataOffset)
    }

    /// The root page of table `name`.
    func root(of name: String) -> Int? {
        record(of: name).map { integer($0 + 40, 8) }
    }
}
