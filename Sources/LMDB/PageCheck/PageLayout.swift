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
}
