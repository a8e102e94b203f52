/// Both meta pages of a data file, read and judged before any other page.
struct MetaReading {
    /// The meta pages by slot; `nil` where the file is too short or no page size could be found.
    var metas: [MetaPage?]
    /// The page size both agree on, or that the one usable meta page names; `nil` when neither is usable.
    var pageSize: Int?
    let fileSize: Int

    /// Reads both meta pages of `file`.
    ///
    /// The second meta page lies one page after the first, and the page size is in the first. When the first is
    /// damaged, or no valid meta page lies where its page size puts the second, the second is looked for at each page
    /// size LMDB writes: it must say it is page 1 of that size.
    ///
    /// - Throws: ``LMDBError`` when the first page cannot be read at all (an I/O error, not a short file).
    static func read(_ file: DataFile) throws(LMDBError) -> MetaReading {
        let length = PageLayout.headerSize + PageLayout.metaSize
        var first: MetaPage?
        switch file.read(at: 0, count: length) {
        case .bytes(let bytes): first = MetaPage(bytes, slot: 0)
        case .short: first = nil
        case .failed(let code):
            throw LMDBError(code: code, operation: "pread", path: file.path, detail: "Cannot read the first meta page")
        }
        func second(at pageSize: Int) -> MetaPage? {
            guard case .bytes(let bytes) = file.read(at: pageSize, count: length) else { return nil }
            return MetaPage(bytes, slot: 1)
        }
        var named: MetaPage?
        if let first, first.isUsable {
            named = second(at: first.pageSize)
            if let named, named.isUsable, named.pageSize == first.pageSize {
                return MetaReading(metas: [first, named], pageSize: first.pageSize, fileSize: file.size)
            }
        }
        // A second meta page where its own page size puts it outweighs a page size the first names alone.
        for size in PageLayout.pageSizes {
            if let meta = second(at: size), meta.isUsable, meta.pageSize == size, meta.pageNumber == 1 {
                return MetaReading(metas: [first, meta], pageSize: size, fileSize: file.size)
            }
        }
        if let first, first.isUsable {
            return MetaReading(metas: [first, named], pageSize: first.pageSize, fileSize: file.size)
        }
        return MetaReading(metas: [first, nil], pageSize: nil, fileSize: file.size)
    }

    /// The usable meta page LMDB would read: the one with the larger transaction ID, the first on a tie
    /// (`mdb_env_pick_meta`).
    var newest: MetaPage? {
        let usable = metas.compactMap { $0 }.filter { $0.isUsable && $0.pageSize == pageSize }
        guard let first = usable.first else { return nil }
        guard usable.count == 2 else { return first }
        return usable[0].transactionID < usable[1].transactionID ? usable[1] : usable[0]
    }

    /// The problems of both meta pages, given the one the snapshot is read from.
    func problems(chosen: MetaPage?) -> [PageCheck.Problem] {
        var problems: [PageCheck.Problem] = []
        func add(
            _ slot: Int, _ kind: PageCheck.Problem.Kind, _ message: String,
            severity: PageCheck.Problem.Severity = .damage
        ) {
            problems.append(
                PageCheck.Problem(severity: severity, kind: kind, page: slot, owner: .meta, message: message))
        }
        for slot in 0..<2 {
            guard let meta = metas[slot] else {
                let reason =
                    slot == 1 && pageSize == nil
                    ? "No page size could be found, so meta page 1 cannot be located."
                    : "The file is \(fileSize) bytes long, too short to hold meta page \(slot)."
                add(slot, .metaPage, reason)
                continue
            }
            let refusal = "LMDB refuses to open the file while this meta page is damaged."
            if meta.pageFlags & PageLayout.meta == 0 {
                add(
                    slot, .metaPage, "Its flags (\(hex(meta.pageFlags))) lack P_META: it is not a meta page. \(refusal)"
                )
            } else if meta.pageFlags & ~PageLayout.transient != PageLayout.meta {
                add(slot, .metaPage, "Its flags (\(hex(meta.pageFlags))) hold bits beside P_META.")
            }
            if meta.magic != PageLayout.magic {
                add(slot, .metaPage, "Its magic number is \(hex(meta.magic)), not 0xbeefc0de. \(refusal)")
            }
            if meta.version != PageLayout.dataVersion {
                add(slot, .metaPage, "Its format version is \(meta.version), not 1 (LMDB 0.9). \(refusal)")
            }
            guard meta.lmdbAccepts else { continue }
            if !PageLayout.pageSizes.contains(meta.pageSize) {
                add(slot, .metaPage, "It names a page size of \(meta.pageSize) bytes, which LMDB never writes.")
                continue
            }
            if let pageSize, meta.pageSize != pageSize {
                add(slot, .metaPage, "It names a page size of \(meta.pageSize) bytes, the other meta page \(pageSize).")
                continue
            }
            if meta.pageNumber != UInt64(slot) {
                add(slot, .metaPage, "Its header says it is page \(meta.pageNumber).")
            }
            if meta.transactionID != 0 && meta.transactionID & 1 != UInt64(slot) {
                add(
                    slot, .metaPage,
                    "It records transaction \(meta.transactionID), but LMDB writes each transaction to the meta page "
                        + "of its parity.")
            }
            if meta.freeList.flags & ~PageLayout.metaFlags != 0 || meta.freeList.flags & PageLayout.integerKey == 0 {
                add(slot, .metaPage, "Its environment flags (\(hex(meta.freeList.flags))) are not ones LMDB writes.")
            }
            let filePages = fileSize / meta.pageSize
            if meta.lastPage < 1 {
                add(slot, .metaPage, "Its last page is \(meta.lastPage), but pages 0 and 1 are the meta pages.")
            } else if meta.lastPage >= UInt64(filePages) {
                if meta.slot == chosen?.slot {
                    add(
                        filePages, .truncatedFile,
                        "The file holds \(filePages) pages (\(fileSize) bytes), but the snapshot's last page is "
                            + "\(meta.lastPage): the file was cut short, or the meta page is damaged.")
                } else if let chosen, meta.isUsable, meta.pageSize == chosen.pageSize,
                    meta.transactionID > chosen.transactionID
                {
                    // A commit newer than the snapshot checked grew the file after its size was read: no damage.
                } else {
                    add(
                        slot, .metaPage,
                        "Its last page \(meta.lastPage) lies past the end of the file (\(filePages) pages).")
                }
            }
            // x86-64 maps at most 2^47 bytes for a process; a map size beyond it cannot be a real one.
            if meta.mapSize > 1 << 47 {
                add(slot, .mapSize, "It records a map size of \(meta.mapSize) bytes, more than an address space holds.")
            } else if meta.lastPage < UInt64.max / UInt64(meta.pageSize),
                meta.mapSize < (meta.lastPage + 1) * UInt64(meta.pageSize)
            {
                add(
                    slot, .mapSize,
                    "It records a map size of \(meta.mapSize) bytes, less than its pages use; LMDB maps the larger.",
                    severity: .note)
            }
        }
        if let zero = metas[0], let one = metas[1], zero.isUsable, one.isUsable,
            zero.pageSize == one.pageSize, zero.transactionID != 0 || one.transactionID != 0
        {
            let (older, newer) = zero.transactionID < one.transactionID ? (zero, one) : (one, zero)
            if newer.transactionID - older.transactionID != 1 {
                add(
                    older.slot, .metaPage,
                    "It records transaction \(older.transactionID) and the other meta page \(newer.transactionID): "
                        + "LMDB writes consecutive transactions to them in turn, so commits were lost or an ID is "
                        + "damaged.", severity: .note)
            }
        }
        return problems
    }
}
