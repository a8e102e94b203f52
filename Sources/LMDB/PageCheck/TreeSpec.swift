/// One B+tree of a snapshot and the rules its pages follow: the free list, the main table, a named table, or the
/// sub-database that holds one key's duplicates.
struct TreeSpec {
    enum Role {
        /// `FREE_DBI`: keys are transaction IDs, values lists of the pages each freed.
        case freeList
        /// `MAIN_DBI`: its `F_SUBDATA` entries are the named tables' records.
        case main
        /// A named table.
        case table
        /// A key's duplicates: the values are the keys of this tree, and its nodes hold no data.
        case duplicates
    }

    /// How a `dupSort` table keeps its values.
    struct Duplicates {
        let order: KeyOrder
        /// `MDB_DUPFIXED`: sub-pages and sub-database leaves are `P_LEAF2` pages of bare values.
        let isFixed: Bool
        /// `MDB_INTEGERDUP`.
        let isInteger: Bool

        init(_ flags: UInt16) {
            order = KeyOrder(duplicatesOf: flags)
            isFixed = flags & PageLayout.dupFixed != 0
            isInteger = flags & PageLayout.integerDup != 0
        }
    }

    let role: Role
    let owner: PageCheck.Owner
    let code: PageUsage.Code
    let record: TableRecord
    /// How messages name the tree, such as "table users".
    let label: String
    /// The page that holds the tree's record: a meta page, a leaf of the main table, or a leaf of the table whose
    /// duplicates the tree holds.
    let recordPage: Int
    let keyOrder: KeyOrder
    /// Whether the leaves are `P_LEAF2` pages of bare keys.
    let leavesAreFixed: Bool
    /// For a `dupFixed` sub-database, the value size its record names.
    let fixedKeySize: Int?
    /// For a `dupSort` table, how its values are kept.
    let duplicates: Duplicates?
    /// The key sizes LMDB writes in this tree.
    let keySizes: ClosedRange<Int>

    /// A tree whose rules come from its own record's flags: the free list, the main table or a named table.
    init(
        role: Role, owner: PageCheck.Owner, code: PageUsage.Code, record: TableRecord, label: String,
        recordPage: Int
    ) {
        self.role = role
        self.owner = owner
        self.code = code
        self.record = record
        self.label = label
        self.recordPage = recordPage
        fixedKeySize = nil
        switch role {
        case .freeList:
            // The free list's record holds the environment's flags; its keys are always 8-byte transaction IDs.
            keyOrder = .integer
            leavesAreFixed = false
            duplicates = nil
            keySizes = 8...8
        case .main, .table, .duplicates:
            let flags = record.flags
            keyOrder = KeyOrder(keysOf: flags)
            // mdb_cursor_put makes a new root a LEAF2 page when a table is DUPFIXED without DUPSORT.
            leavesAreFixed = flags & (PageLayout.dupSort | PageLayout.dupFixed) == PageLayout.dupFixed
            duplicates = flags & PageLayout.dupSort != 0 ? Duplicates(flags) : nil
            keySizes = 1...PageLayout.maxKeySize
        }
    }

    /// The sub-database that holds one key's duplicates in `table`.
    init(duplicatesIn table: TreeSpec, rules: Duplicates, record: TableRecord, label: String, recordPage: Int) {
        role = .duplicates
        owner = table.owner
        code = table.code
        self.record = record
        self.label = label
        self.recordPage = recordPage
        keyOrder = rules.order
        leavesAreFixed = rules.isFixed
        fixedKeySize = rules.isFixed ? Int(record.pad) : nil
        duplicates = nil
        // A dupSort table may hold empty values.
        keySizes = 0...PageLayout.maxKeySize
    }
}
