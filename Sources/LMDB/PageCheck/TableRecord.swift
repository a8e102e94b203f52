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
