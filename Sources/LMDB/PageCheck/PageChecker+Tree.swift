extension PageChecker {
    /// A page to visit, with the key bounds its parent sets for it.
    struct PendingPage {
        let number: UInt64
        /// 1 for the root.
        let level: Int
        /// The smallest key the page may hold (inclusive), `nil` for no bound.
        let lower: ArraySlice<UInt8>?
        /// The key every key of the page must sort before, `nil` for no bound.
        let upper: ArraySlice<UInt8>?
        /// The branch page that points here and the index of its node, `nil` for the root.
        let parent: (page: Int, node: Int)?
    }

    /// Walks `tree` depth first and compares what it holds with its record. With `followChildren` false only the
    /// root page is read.
    func walk(_ tree: TreeSpec, followChildren: Bool) -> TreeTally {
        var tally = TreeTally()
        guard checkRecord(of: tree) else { return tally }
        var stack: [(children: [PendingPage], next: Int)] = []
        let root = PendingPage(number: tree.record.root, level: 1, lower: nil, upper: nil, parent: nil)
        if let children = visit(root, in: tree, tally: &tally, followChildren: followChildren) {
            stack.append((children, 0))
        }
        while !stack.isEmpty {
            let top = stack.count - 1
            guard stack[top].next < stack[top].children.count else {
                stack.removeLast()
                continue
            }
            let child = stack[top].children[stack[top].next]
            stack[top].next += 1
            if let children = visit(child, in: tree, tally: &tally, followChildren: true) {
                stack.append((children, 0))
            }
        }
        finish(tree, tally: tally, followedChildren: followChildren)
        return tally
    }

    /// Checks a tree's record before its pages. Returns whether there is a root page to walk.
    func checkRecord(of tree: TreeSpec) -> Bool {
        let record = tree.record
        let place = tree.recordPage
        switch tree.role {
        case .main, .table:
            if record.flags & ~PageLayout.tableFlags != 0 {
                damage(
                    .tableRecord, page: place, owner: tree.owner,
                    "The record of \(tree.label) has flags \(hex(record.flags)), beyond those LMDB stores.")
            }
        case .duplicates:
            let fixed = tree.leavesAreFixed
            let expected: UInt16 =
                fixed ? PageLayout.dupFixed | (tree.keyOrder == .integer ? PageLayout.integerKey : 0) : 0
            if record.flags != expected {
                damage(
                    .tableRecord, page: place, owner: tree.owner,
                    "The record of \(tree.label) has flags \(hex(record.flags)), not \(hex(expected)).")
            }
        case .freeList:
            break
        }
        if record.isEmpty {
            if tree.role == .duplicates {
                damage(
                    .tableRecord, page: place, owner: tree.owner,
                    "The record of \(tree.label) has no root page, but LMDB deletes a key with its last value.")
            } else if record.depth != 0 || record.entries != 0 || record.branchPages != 0 || record.leafPages != 0
                || record.overflowPages != 0
            {
                damage(
                    .tableRecord, page: place, owner: tree.owner,
                    "The record of \(tree.label) has no root page, but says depth \(record.depth), "
                        + "\(record.entries) entries and \(record.branchPages), \(record.leafPages) and "
                        + "\(record.overflowPages) branch, leaf and overflow pages.")
            }
            return false
        }
        if record.depth == 0 || Int(record.depth) > PageLayout.maxDepth {
            damage(
                .treeDepth, page: place, owner: tree.owner,
                "The record of \(tree.label) says depth \(record.depth), but a tree with a root has depth 1 to "
                    + "\(PageLayout.maxDepth).")
        }
        return true
    }

    /// Reads and checks one page of `tree`. Returns the children to visit when it is a branch page and
    /// `followChildren` is set.
    private func visit(
        _ pending: PendingPage, in tree: TreeSpec, tally: inout TreeTally, followChildren: Bool
    ) -> [PendingPage]? {
        let reference =
            pending.parent.map { "Node \($0.node) of branch page \($0.page)" } ?? "The root of \(tree.label)"
        guard
            let page = resolve(pending.number, reference: reference, at: pending.parent?.page ?? tree.recordPage, tree)
        else {
            tally.isIncomplete = true
            return nil
        }
        guard claim(page, for: tree, from: pending.parent?.page),
            let bytes = readPage(page, of: tree)
        else {
            tally.isIncomplete = true
            return nil
        }
        let window = ByteWindow(bytes)
        guard let isBranch = checkHeader(window, page: page, tree: tree) else {
            tally.isIncomplete = true
            return nil
        }
        if pending.parent == nil { tally.rootIsBranch = isBranch }
        if isBranch {
            return branch(
                window, page: page, pending: pending, tree: tree, tally: &tally, followChildren: followChildren)
        }
        tally.leafPages += 1
        if tally.leafDepths[pending.level] == nil { tally.leafDepths[pending.level] = page }
        leaf(window, page: page, pending: pending, tree: tree, tally: &tally, followChildren: followChildren)
        return nil
    }

    /// Checks that a reference names a page of the snapshot that the file holds. `at` is the page the reference is
    /// on, which a problem names.
    func resolve(_ number: UInt64, reference: String, at source: Int, _ tree: TreeSpec) -> Int? {
        if number < 2 {
            damage(.pageOutOfRange, page: source, owner: tree.owner, "\(reference) points at meta page \(number).")
            return nil
        }
        guard number <= UInt64(lastPage) else {
            damage(
                .pageOutOfRange, page: source, owner: tree.owner,
                "\(reference) points at page \(number), past the snapshot's last page \(lastPage).")
            return nil
        }
        let page = Int(number)
        guard page < filePages else {
            damage(
                .truncatedFile, page: page, owner: tree.owner,
                "\(reference) points at it, but the file ends after \(filePages) pages.")
            return nil
        }
        return page
    }

    /// Records that `tree` uses `page`. Returns whether to walk it: not when another tree, or this one, reached it
    /// already.
    func claim(_ page: Int, for tree: TreeSpec, from source: Int?) -> Bool {
        let previous = usage.owner(of: page)
        let via = source.map { " (from page \($0))" } ?? ""
        switch previous {
        case PageUsage.unused:
            usage.set(page, to: tree.code)
            return true
        case PageUsage.free:
            damage(
                .pageUsedAndFree, page: page, owner: tree.owner,
                "\(tree.label.capitalizedFirst) uses it\(via), but the free list lists it as free.")
            usage.set(page, to: tree.code)
            return true
        case tree.code:
            damage(
                .pageReachedTwice, page: page, owner: tree.owner,
                "\(tree.label.capitalizedFirst) reaches it a second time\(via): the tree has a cycle, or two of its "
                    + "nodes point at one page.")
            return false
        default:
            damage(
                .pageReachedTwice, page: page, owner: tree.owner,
                "\(tree.label.capitalizedFirst) reaches it\(via), but it belongs to \(owner(of: previous)) already.")
            return false
        }
    }

    /// Reads a whole page the file holds.
    func readPage(_ page: Int, of tree: TreeSpec) -> [UInt8]? {
        switch file.read(at: page * pageSize, count: pageSize) {
        case .bytes(let bytes):
            return bytes
        case .short:
            damage(.truncatedFile, page: page, owner: tree.owner, "The file ends inside it.")
        case .failed(let code):
            damage(
                .unreadablePage, page: page, owner: tree.owner,
                "Reading it failed: \(LMDBError(code: code).message).")
        }
        return nil
    }

    /// Checks a tree page's number and flags. Returns whether it is a branch page, or `nil` when it is neither a
    /// branch page nor the leaf page the tree needs.
    private func checkHeader(_ window: ByteWindow, page: Int, tree: TreeSpec) -> Bool? {
        guard let number = window.u64(0), let flags = window.u16(10) else { return nil }
        guard number == UInt64(page) else {
            damage(
                .pageNumber, page: page, owner: tree.owner,
                "Its header says it is page \(number): it holds a page written elsewhere, or was overwritten.")
            return nil
        }
        let kind = flags & ~PageLayout.transient
        let leafKind = tree.leavesAreFixed ? PageLayout.leaf | PageLayout.leaf2 : PageLayout.leaf
        if kind == PageLayout.branch { return true }
        if kind == leafKind { return false }
        damage(
            .pageType, page: page, owner: tree.owner,
            "It is \(describePage(flags)), but \(tree.label) needs a branch page or "
                + "\(tree.leavesAreFixed ? "a LEAF2 leaf page" : "a leaf page") here.")
        return nil
    }

    /// Checks a branch page and returns its children.
    private func branch(
        _ window: ByteWindow, page: Int, pending: PendingPage, tree: TreeSpec, tally: inout TreeTally,
        followChildren: Bool
    ) -> [PendingPage]? {
        tally.branchPages += 1
        guard pending.level < PageLayout.maxDepth else {
            damage(
                .treeDepth, page: page, owner: tree.owner,
                "It is a branch page at depth \(pending.level), LMDB's limit: LMDB cannot read its children.")
            tally.isIncomplete = true
            return nil
        }
        guard let count = nodeCount(window, page: page, tree: tree, what: "It") else {
            tally.isIncomplete = true
            return nil
        }
        guard count > 0 else {
            damage(.pageLayout, page: page, owner: tree.owner, "It is a branch page without children.")
            tally.isIncomplete = true
            return nil
        }
        let upperBound = Int(window.u16(14) ?? 0)
        let parsed = NodeArea.parse(window, count: count, upper: upperBound, isLeaf: false)
        if let failure = parsed.failure {
            damage(.nodeLayout, page: page, owner: tree.owner, failure)
            tally.isIncomplete = true
        }
        // The key of a branch page's first node is not used: everything below the bound of the page's parent goes
        // to the first child.
        var keys: [(index: Int, key: ArraySlice<UInt8>)] = []
        for case let node? in parsed.nodes where node.index > 0 {
            guard let key = window.slice(node.keyOffset, node.keySize) else { continue }
            keys.append((node.index, key))
        }
        checkKeys(keys, page: page, tree: tree, pending: pending, tally: &tally)

        var children: [PendingPage] = []
        var nextKey = keys.makeIterator()
        var upcoming = nextKey.next()
        for case let node? in parsed.nodes {
            while let key = upcoming, key.index <= node.index { upcoming = nextKey.next() }
            let lower = node.index == 0 ? pending.lower : window.slice(node.keyOffset, node.keySize)
            let child = PendingPage(
                number: node.childPage, level: pending.level + 1, lower: lower, upper: upcoming?.key ?? pending.upper,
                parent: (page, node.index))
            if followChildren {
                children.append(child)
            } else if resolve(child.number, reference: "Node \(node.index)", at: page, tree) == nil {
                tally.isIncomplete = true
            }
        }
        return followChildren ? children : nil
    }

    /// Checks a page's bounds of free space, `mp_lower` and `mp_upper`, for a page whose nodes lie between `upper`
    /// and the end. Returns the number of nodes.
    func nodeCount(_ window: ByteWindow, page: Int, tree: TreeSpec, what: String) -> Int? {
        guard let lower = window.u16(12).map(Int.init), let upper = window.u16(14).map(Int.init) else { return nil }
        let header = PageLayout.headerSize
        guard lower >= header, (lower - header) & 1 == 0, lower <= upper, upper <= window.count else {
            damage(
                .pageLayout, page: page, owner: tree.owner,
                "\(what) has its free space from offset \(lower) to \(upper), which does not fit a "
                    + "\(window.count)-byte page with a \(header)-byte header.")
            return nil
        }
        return (lower - header) / 2
    }

    /// Checks that keys ascend strictly and lie within the bounds of the page's parent, and that their sizes are ones
    /// the tree holds. Reports the first problem of each kind.
    func checkKeys(
        _ keys: [(index: Int, key: ArraySlice<UInt8>)], page: Int, tree: TreeSpec, pending: PendingPage,
        tally: inout TreeTally
    ) {
        if let bad = keys.first(where: { !tree.keySizes.contains($0.key.count) }) {
            damage(
                .nodeLayout, page: page, owner: tree.owner,
                "Key \(bad.index) is \(bad.key.count) bytes long; \(tree.label) holds keys of "
                    + "\(tree.keySizes.lowerBound) to \(tree.keySizes.upperBound) bytes.")
            tally.isIncomplete = true
        }
        let parent = pending.parent.map { "branch page \($0.page)" } ?? "its parent"
        if let failure = orderFailure(
            keys, order: tree.keyOrder, lower: pending.lower, upper: pending.upper, boundsFrom: parent)
        {
            damage(.keyOrder, page: page, owner: tree.owner, failure)
            tally.isIncomplete = true
        }
    }

    /// The first key out of order, described, or `nil` when all are in order.
    func orderFailure(
        _ keys: [(index: Int, key: ArraySlice<UInt8>)], order: KeyOrder, lower: ArraySlice<UInt8>? = nil,
        upper: ArraySlice<UInt8>? = nil, boundsFrom parent: String = "", item: String = "key"
    ) -> String? {
        let title = item.capitalizedFirst
        var previous: (index: Int, key: ArraySlice<UInt8>)?
        for entry in keys {
            if let lower, order.precedes(entry.key, lower) {
                return "\(title) \(entry.index) (\(render(entry.key))) sorts before \(render(lower)), the bound "
                    + "\(parent) sets."
            }
            if let upper, !order.precedes(entry.key, upper) {
                return "\(title) \(entry.index) (\(render(entry.key))) does not sort before \(render(upper)), the next "
                    + "bound \(parent) sets."
            }
            if let previous, !order.precedes(previous.key, entry.key) {
                return "\(title) \(entry.index) (\(render(entry.key))) does not sort after \(item) \(previous.index) "
                    + "(\(render(previous.key)))."
            }
            previous = entry
        }
        return nil
    }

    /// Compares what the walk found with the tree's record.
    private func finish(_ tree: TreeSpec, tally: TreeTally, followedChildren: Bool) {
        let record = tree.record
        let root = Int(clamping: record.root)
        let depths = tally.leafDepths.keys.sorted()
        if depths.count > 1, let deepest = depths.last, let page = tally.leafDepths[deepest] {
            damage(
                .treeDepth, page: page, owner: tree.owner,
                "It is a leaf at depth \(deepest), but \(tree.label) has leaves at depths "
                    + "\(depths.map(String.init).joined(separator: ", ")): every path from the root must be as long.")
        } else if let depth = depths.first, depth != Int(record.depth), record.depth != 0,
            Int(record.depth) <= PageLayout.maxDepth
        {
            damage(
                .treeDepth, page: root, owner: tree.owner,
                "Every leaf of \(tree.label) lies at depth \(depth), but its record says depth \(record.depth).")
        } else if !followedChildren, tally.rootIsBranch == true, record.depth == 1 {
            damage(
                .treeDepth, page: root, owner: tree.owner,
                "The root of \(tree.label) is a branch page, but its record says depth 1.")
        }
        guard followedChildren, !tally.isIncomplete else { return }
        let recorded = [record.branchPages, record.leafPages, record.overflowPages, record.entries]
        let found = [tally.branchPages, tally.leafPages, tally.overflowPages, tally.entries].map { UInt64($0) }
        if recorded != found {
            damage(
                .treeCounts, page: root, owner: tree.owner,
                "The record of \(tree.label) counts \(recorded[0]) branch, \(recorded[1]) leaf and \(recorded[2]) "
                    + "overflow pages and \(recorded[3]) entries, but its pages hold \(found[0]), \(found[1]), "
                    + "\(found[2]) and \(found[3]).")
        }
    }

    /// A short description of a page's kind from its flags, for messages.
    func describePage(_ flags: UInt16) -> String {
        switch flags & ~PageLayout.transient {
        case PageLayout.branch: "a branch page"
        case PageLayout.leaf: "a leaf page"
        case PageLayout.leaf | PageLayout.leaf2: "a LEAF2 leaf page"
        case PageLayout.overflow: "an overflow page"
        case PageLayout.meta: "a meta page"
        default: "a page with flags \(hex(flags))"
        }
    }
}
