extension PageCheck {
    /// What a page belongs to: a meta page, the free list, the main table or a named table.
    public enum Owner: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The two meta pages, 0 and 1, and the file as a whole.
        case meta
        /// The free list (LMDB's `FREE_DBI`): its own tree and the pages it lists.
        case freeList
        /// The main (unnamed) table, whose entries name the other tables.
        case main
        /// A named table, including the sub-pages and sub-databases of its duplicates. The name is the main table's
        /// key decoded as UTF-8 (bytes that are not valid UTF-8 become U+FFFD).
        case table(String)

        /// `(meta)`, `(free)`, `(main)` or the table's name, as messages show it.
        public var description: String {
            switch self {
            case .meta: "(meta)"
            case .freeList: "(free)"
            case .main: "(main)"
            case .table(let name): name
            }
        }

        /// The name of a named table, `nil` for the others.
        public var tableName: String? {
            if case .table(let name) = self { return name }
            return nil
        }
    }

    /// One thing wrong with a data file, with where it is.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// How bad a problem is.
        public enum Severity: Hashable, Sendable, Comparable {
            /// Worth knowing, but no reader goes wrong: pages that are neither used nor free, which LMDB reclaims
            /// only by a compacting copy.
            case note
            /// The file is damaged: LMDB may return wrong data, fail, or crash on this page.
            case damage
        }

        /// What kind of problem it is.
        public enum Kind: String, Hashable, Sendable, CaseIterable {
            /// A meta page is damaged: flags, magic number, version, page size or transaction ID.
            case metaPage
            /// The file ends before the last page its snapshot uses.
            case truncatedFile
            /// A meta page names a map size no address space holds.
            case mapSize
            /// A reference points at a page outside the snapshot: past its last page, or at a meta page.
            case pageOutOfRange
            /// Reading a page failed.
            case unreadablePage
            /// A page's header names another page number than its position in the file.
            case pageNumber
            /// A page's flags are unknown, or say another kind of page than its place needs.
            case pageType
            /// A page's bounds of free space are outside the page or inconsistent with its entries.
            case pageLayout
            /// A node's offset, size or flags are invalid, or nodes overlap.
            case nodeLayout
            /// Keys are not in strictly ascending order, or lie outside the bounds their branch page sets.
            case keyOrder
            /// Paths from the root have different lengths, differ from the recorded depth, or exceed 32 levels.
            case treeDepth
            /// A table's recorded entry or page counts differ from what its pages hold.
            case treeCounts
            /// A table record (`MDB_db`) has invalid flags or values that contradict each other.
            case tableRecord
            /// An overflow page's header is invalid, or its pages reach past the snapshot.
            case overflowPage
            /// A sub-page holding a key's duplicates is invalid.
            case subPage
            /// A free list entry has an invalid transaction ID or page list.
            case freeList
            /// A page is reached twice: the trees share it, or a tree has a cycle.
            case pageReachedTwice
            /// A page is both reached from a tree and listed as free, or listed as free twice.
            case pageUsedAndFree
            /// Pages of the snapshot are neither reached nor free (a note).
            case leakedPages
        }

        /// How bad the problem is.
        public var severity: Severity
        /// What kind of problem it is.
        public var kind: Kind
        /// The page the problem is on, or `nil` when it concerns no single page.
        public var page: Int?
        /// What the page belongs to: the table whose records a damaged page may hold. For a damaged table record,
        /// the table it describes (the record itself lies on a page of the main table).
        public var owner: Owner
        /// A sentence that says what is wrong.
        public var message: String

        /// Creates a problem.
        public init(severity: Severity, kind: Kind, page: Int?, owner: Owner, message: String) {
            self.severity = severity
            self.kind = kind
            self.page = page
            self.owner = owner
            self.message = message
        }

        /// For example `damage: page 12 of users: key 3 is not greater than key 2.`
        public var description: String {
            let place = page.map { "page \($0) of \(owner)" } ?? "\(owner)"
            return "\(severity == .damage ? "damage" : "note"): \(place): \(message)"
        }
    }
}
