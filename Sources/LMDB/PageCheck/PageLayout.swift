import CLMDB

/// The on-disk layout of LMDB 0.9 on a 64-bit little-endian machine, from `mdb.c` (`MDB_page`, `MDB_node`,
/// `MDB_db`, `MDB_meta`). None of it is in lmdb.h, which keeps the format private.
enum PageLayout {
    /// `PAGEHDRSZ`: `mp_pgno` (8 bytes), `mp_pad` (2), `mp_flags` (2), then `mp_lower` and `mp_upper` (2 each), or
    /// `mp_pages` (4) on an overflow page.
    static let headerSize = 16
    /// `NODESIZE`: `mn_lo`, `mn_hi`, `mn_flags`, `mn_ksize`, 2 bytes each; key and data follow.
    static let nodeHeaderSize = 8
    /// `sizeof(MDB_db)`.
    static let recordSize = 48
    /// `sizeof(MDB_meta)`, which follows the page header on a meta page.
    static let metaSize = 136

    /// `MDB_MAGIC`.
    static let magic: UInt32 = 0xBEEF_C0DE
    /// `MDB_DATA_VERSION` of LMDB 0.9.
    static let dataVersion: UInt32 = 1
    /// `P_INVALID`: the root of an empty tree.
    static let invalidPage = UInt64.max
    /// `CURSOR_STACK`: LMDB's cursors hold 32 levels; a deeper tree fails with `MDB_CURSOR_FULL`.
    static let maxDepth = 32
    /// `MDB_MAXKEYSIZE` of Debian's build.
    static let maxKeySize = 511
    /// Page sizes LMDB writes: the system's page size, a power of two, at most `MAX_PAGESIZE` (32 KiB in 0.9).
    static let pageSizes = [4096, 512, 1024, 2048, 8192, 16384, 32768]

    // Page flags (`mp_flags`).
    static let branch: UInt16 = 0x01
    static let leaf: UInt16 = 0x02
    static let overflow: UInt16 = 0x04
    static let meta: UInt16 = 0x08
    /// `P_DIRTY` and `P_KEEP` are transient marks of a write transaction. LMDB clears them before writing a page, but
    /// writes sub-pages with `P_DIRTY` set, and ignores both when reading.
    static let transient: UInt16 = 0x10 | 0x8000
    static let leaf2: UInt16 = 0x20
    static let subPage: UInt16 = 0x40

    // Node flags (`mn_flags` of a leaf node).
    static let bigData: UInt16 = 0x01
    static let subData: UInt16 = 0x02
    static let dupData: UInt16 = 0x04

    // Table flags (`md_flags`), as lmdb.h names them for `mdb_dbi_open`.
    static let reverseKey = UInt16(MDB_REVERSEKEY)
    static let dupSort = UInt16(MDB_DUPSORT)
    static let integerKey = UInt16(MDB_INTEGERKEY)
    static let dupFixed = UInt16(MDB_DUPFIXED)
    static let integerDup = UInt16(MDB_INTEGERDUP)
    static let reverseDup = UInt16(MDB_REVERSEDUP)
    /// The flags a table record may hold (`PERSISTENT_FLAGS` that `mdb_dbi_open` accepts).
    static let tableFlags: UInt16 = reverseKey | dupSort | integerKey | dupFixed | integerDup | reverseDup
    /// The flags the free list's record holds on a meta page: `MDB_INTEGERKEY` and the environment flags that fit
    /// in 16 bits (`MDB_FIXEDMAP`, `MDB_NOSUBDIR`).
    static let metaFlags: UInt16 = integerKey | UInt16(MDB_FIXEDMAP) | UInt16(MDB_NOSUBDIR)

    /// `OVPAGES`: the overflow pages a value of `size` bytes takes.
    static func overflowPages(forValueSize size: UInt64, pageSize: Int) -> UInt64 {
        (UInt64(headerSize) - 1 + size) / UInt64(pageSize) + 1
    }

    /// `EVEN`: nodes are 2-byte aligned.
    static func even(_ size: Int) -> Int {
        size + (size & 1)
    }
}

/// Little-endian reads from a window of a byte array, which return `nil` instead of trapping past its end.
struct ByteWindow {
    let bytes: [UInt8]
    /// Where the window starts in `bytes`.
    let base: Int
    /// The window's length.
    let count: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        base = 0
        count = bytes.count
    }

    private init(bytes: [UInt8], base: Int, count: Int) {
        self.bytes = bytes
        self.base = base
        self.count = count
    }

    /// Whether `length` bytes at `offset` lie inside the window.
    func contains(_ offset: Int, _ length: Int) -> Bool {
        offset >= 0 && length >= 0 && length <= count && offset <= count - length
    }

    /// The window of `length` bytes at `offset`, or `nil` when it does not fit.
    func window(_ offset: Int, _ length: Int) -> ByteWindow? {
        guard contains(offset, length) else { return nil }
        return ByteWindow(bytes: bytes, base: base + offset, count: length)
    }

    /// The `length` bytes at `offset`, or `nil` when they do not fit.
    func slice(_ offset: Int, _ length: Int) -> ArraySlice<UInt8>? {
        guard contains(offset, length) else { return nil }
        return bytes[(base + offset)..<(base + offset + length)]
    }

    private func integer(_ offset: Int, _ length: Int) -> UInt64? {
        guard contains(offset, length) else { return nil }
        var value: UInt64 = 0
        for index in stride(from: length - 1, through: 0, by: -1) {
            value = value << 8 | UInt64(bytes[base + offset + index])
        }
        return value
    }

    func u16(_ offset: Int) -> UInt16? { integer(offset, 2).map { UInt16(truncatingIfNeeded: $0) } }
    func u32(_ offset: Int) -> UInt32? { integer(offset, 4).map { UInt32(truncatingIfNeeded: $0) } }
    func u64(_ offset: Int) -> UInt64? { integer(offset, 8) }
}

/// An `MDB_db` record: a table's root, depth, flags and counts.
struct TableRecord: Hashable {
    /// `md_pad`: the page size in the free list's record on a meta page, the value size of a `dupFixed`
    /// sub-database.
    var pad: UInt32
    var flags: UInt16
    var depth: UInt16
    var branchPages: UInt64
    var leafPages: UInt64
    var overflowPages: UInt64
    var entries: UInt64
    var root: UInt64

    init?(_ window: ByteWindow, at offset: Int) {
        guard let pad = window.u32(offset), let flags = window.u16(offset + 4), let depth = window.u16(offset + 6),
            let branch = window.u64(offset + 8), let leaf = window.u64(offset + 16),
            let overflow = window.u64(offset + 24), let entries = window.u64(offset + 32),
            let root = window.u64(offset + 40)
        else { return nil }
        self.pad = pad
        self.flags = flags
        self.depth = depth
        branchPages = branch
        leafPages = leaf
        overflowPages = overflow
        self.entries = entries
        self.root = root
    }

    var isEmpty: Bool { root == PageLayout.invalidPage }

    /// The summary a report shows, with counts clamped to `Int`.
    func summary(name: String?, duplicatePages: Int?) -> PageCheck.TableSummary {
        PageCheck.TableSummary(
            name: name, rootPage: isEmpty ? nil : Int(clamping: root), depth: Int(depth),
            entries: Int(clamping: entries), branchPages: Int(clamping: branchPages),
            leafPages: Int(clamping: leafPages), overflowPages: Int(clamping: overflowPages),
            duplicatePages: duplicatePages, options: Table.Options(rawValue: UInt32(flags)))
    }
}

/// A meta page: `MDB_meta` after a page header.
struct MetaPage {
    /// The slot it was read from, 0 or 1.
    let slot: Int
    let pageNumber: UInt64
    let pageFlags: UInt16
    let magic: UInt32
    let version: UInt32
    let mapSize: UInt64
    let freeList: TableRecord
    let main: TableRecord
    let lastPage: UInt64
    let transactionID: UInt64
    /// The bytes it was parsed from, to tell whether a second read saw the same.
    let bytes: [UInt8]

    /// The page size, which LMDB keeps in the free list record's `md_pad`.
    var pageSize: Int { Int(freeList.pad) }

    /// Parses the first `headerSize + metaSize` bytes of a page; `nil` when there are fewer.
    init?(_ bytes: [UInt8], slot: Int) {
        let window = ByteWindow(bytes)
        let meta = PageLayout.headerSize
        guard let pageNumber = window.u64(0), let pageFlags = window.u16(10), let magic = window.u32(meta),
            let version = window.u32(meta + 4), let mapSize = window.u64(meta + 16),
            let freeList = TableRecord(window, at: meta + 24), let main = TableRecord(window, at: meta + 72),
            let lastPage = window.u64(meta + 120), let transactionID = window.u64(meta + 128)
        else { return nil }
        self.slot = slot
        self.pageNumber = pageNumber
        self.pageFlags = pageFlags
        self.magic = magic
        self.version = version
        self.mapSize = mapSize
        self.freeList = freeList
        self.main = main
        self.lastPage = lastPage
        self.transactionID = transactionID
        self.bytes = bytes
    }

    /// Whether `mdb_env_read_header` accepts the page: `P_META` set, the magic number, the version.
    var lmdbAccepts: Bool {
        pageFlags & PageLayout.meta != 0 && magic == PageLayout.magic && version == PageLayout.dataVersion
    }

    /// Whether the page can be used: LMDB accepts it and it names a page size LMDB writes.
    var isUsable: Bool {
        lmdbAccepts && PageLayout.pageSizes.contains(pageSize)
    }
}
