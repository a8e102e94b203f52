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
