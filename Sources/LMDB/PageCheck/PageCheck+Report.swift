extension PageCheck {
    /// A table's record, as the snapshot's pages hold it: what LMDB's `mdb_stat` reports.
    public struct TableSummary: Hashable, Sendable {
        /// The table's name, or `nil` for the main table and the free list.
        public var name: String?
        /// The root page of the table's B+tree, or `nil` when the table is empty.
        public var rootPage: Int?
        /// The depth of the B+tree: 0 when empty, 1 when the root is a leaf.
        public var depth: Int
        /// The number of entries, counting each duplicate of a `dupSort` table.
        public var entries: Int
        /// The number of branch pages.
        public var branchPages: Int
        /// The number of leaf pages.
        public var leafPages: Int
        /// The number of overflow pages, which hold values too large for a leaf page.
        public var overflowPages: Int
        /// The pages of the sub-databases that hold the duplicates of keys with many values. LMDB counts them in
        /// each sub-database's own record, not in the table's. `nil` when the check did not walk the table.
        public var duplicatePages: Int?
        /// The table's flags as stored. For the free list these are LMDB's environment flags.
        public var options: Table.Options
    }

    /// What a page check found: the snapshot it read, its tables, and the problems.
    ///
    /// Counts in ``tables`` are the records the pages hold; a full check compares them with what the trees hold and
    /// reports any difference as a ``Problem/Kind/treeCounts`` problem.
    public struct Report: Hashable, Sendable {
        /// The path of the data file that was read.
        public var path: String
        /// How much was read.
        public var scope: Scope
        /// The size of the file in bytes when the check began.
        public var fileSize: Int
        /// The page size the meta pages name, or 0 when no meta page is valid.
        public var pageSize: Int
        /// The meta page the snapshot comes from (0 or 1), or `nil` when neither is valid.
        public var metaPage: Int?
        /// The transaction ID of the snapshot.
        public var transactionID: Int
        /// The last page the snapshot uses; its pages are 0 through this one.
        public var lastPageNumber: Int
        /// The map size the meta page records, in bytes (LMDB uses the larger of it and the configured size).
        public var mapSize: Int
        /// The main table first, then the named tables in the main table's order. Empty when no meta page is
        /// valid.
        public var tables: [TableSummary]
        /// The free list's own tree.
        public var freeList: TableSummary?
        /// The number of pages the free list lists, or `nil` after a ``Scope/roots`` check.
        public var freePages: Int?
        /// The number of pages of the snapshot neither reached nor free, or `nil` after a ``Scope/roots`` check.
        public var leakedPages: Int?
        /// The problems found, at most ``Options/maxProblems`` of them, damage and notes in the order found.
        public var problems: [Problem]
        /// The number of problems found beyond ``Options/maxProblems``, which ``problems`` omits.
        public var omittedProblemCount: Int
        /// Whether an omitted problem was damage.
        public var omitsDamage: Bool
        /// Each page a damage problem names, with what it belongs to: the first owner found when two trees share it.
        public var damagedPages: [Int: Owner]

        /// Whether no damage was found; notes such as leaked pages may remain.
        public var isClean: Bool {
            !omitsDamage && !problems.contains { $0.severity == .damage }
        }

        /// The damaged pages that belong to `owner`, in ascending order.
        ///
        /// - Parameter owner: A table, the free list or the meta pages.
        /// - Returns: The page numbers.
        public func damagedPages(of owner: Owner) -> [Int] {
            damagedPages.filter { $0.value == owner }.keys.sorted()
        }

        /// The summary of the table named `name` (`nil` for the main table), if the snapshot has it.
        ///
        /// - Parameter name: The table's name, or `nil` for the main table.
        /// - Returns: Its record, or `nil` when there is no such table.
        public func table(named name: String?) -> TableSummary? {
            tables.first { $0.name == name }
        }
    }
}
