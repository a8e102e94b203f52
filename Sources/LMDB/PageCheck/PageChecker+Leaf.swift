extension PageChecker {
    /// Checks a leaf page: its nodes, keys and values.
    func leaf(
        _ window: ByteWindow, page: Int, pending: PendingPage, tree: TreeSpec, tally: inout TreeTally,
        followChildren: Bool
    ) {
        if tree.leavesAreFixed {
            fixedLeaf(window, page: page, pending: pending, tree: tree, tally: &tally)
            return
        }
        guard let count = nodeCount(window, page: page, tree: tree, what: "It") else {
            tally.isIncomplete = true
            return
        }
        let parsed = NodeArea.parse(window, count: count, upper: Int(window.u16(14) ?? 0), isLeaf: true)
        if let failure = parsed.failure {
            damage(.nodeLayout, page: page, owner: tree.owner, failure)
            tally.isIncomplete = true
        }
        let nodes = parsed.nodes.compactMap { $0 }
        let keys = nodes.compactMap { node in window.slice(node.keyOffset, node.keySize).map { (node.index, $0) } }
        checkKeys(keys, page: page, tree: tree, pending: pending, tally: &tally)
        for node in nodes {
            value(of: node, window, page: page, tree: tree, tally: &tally, followChildren: followChildren)
        }
    }

    /// Checks a `P_LEAF2` page: bare keys of `mp_pad` bytes each, packed after the header.
    ///
    /// LMDB counts its keys in `mp_lower` as if each had a 2-byte offset, and moves `mp_upper` down by the key size
    /// less 2 for each, so `mp_upper` is the page size less `count * (keySize - 2)`.
    private func fixedLeaf(
        _ window: ByteWindow, page: Int, pending: PendingPage, tree: TreeSpec, tally: inout TreeTally
    ) {
        guard let keySize = window.u16(8).map(Int.init), let lower = window.u16(12).map(Int.init),
            let upper = window.u16(14).map(Int.init)
        else { return }
        let header = PageLayout.headerSize
        let count = max(0, lower - header) / 2
        guard lower >= header, (lower - header) & 1 == 0, header + count * keySize <= window.count,
            upper == window.count - count * (keySize - 2)
        else {
            damage(
                .pageLayout, page: page, owner: tree.owner,
                "Its mp_lower \(lower), mp_upper \(upper) and key size \(keySize) do not describe \(count) "
                    + "\(keySize)-byte keys in a \(window.count)-byte LEAF2 page.")
            tally.isIncomplete = true
            return
        }
        if let expected = tree.fixedKeySize, expected != keySize {
            damage(
                .pageLayout, page: page, owner: tree.owner,
                "Its values are \(keySize) bytes long, but the record of \(tree.label) says \(expected).")
            tally.isIncomplete = true
        }
        let keys = (0..<count).compactMap { index in
            window.slice(header + index * keySize, keySize).map { (index, $0) }
        }
        checkKeys(keys, page: page, tree: tree, pending: pending, tally: &tally)
        tally.entries += count
    }

    /// Checks one leaf node's value, which depends on the tree and the node's flags.
    private func value(
        of node: Node, _ window: ByteWindow, page: Int, tree: TreeSpec, tally: inout TreeTally, followChildren: Bool
    ) {
        let flags = node.flags
        func invalid(_ detail: String) {
            damage(.nodeLayout, page: page, owner: tree.owner, "Node \(node.index) \(detail)")
            tally.isIncomplete = true
        }
        switch tree.role {
        case .duplicates:
            guard flags == 0, node.dataSize == 0 else {
                invalid(
                    "has flags \(hex(flags)) and \(node.dataSize) bytes of data, but the values of a sub-database "
                        + "of duplicates are bare keys.")
                return
            }
            tally.entries += 1
        case .freeList:
            guard flags & ~PageLayout.bigData == 0 else {
                invalid("has flags \(hex(flags)), which the free list never holds.")
                return
            }
            tally.entries += 1
            freeListEntry(node, window, page: page, tree: tree, tally: &tally)
        case .main, .table:
            let rules = tree.duplicates
            switch flags {
            case 0:
                tally.entries += 1
            case PageLayout.bigData where rules == nil:
                tally.entries += 1
                _ = overflow(of: node, window, page: page, tree: tree, tally: &tally, read: followChildren)
            case PageLayout.subData where tree.role == .main:
                tally.entries += 1
                namedTable(node, window, page: page, tree: tree, tally: &tally)
            case PageLayout.dupData where rules != nil:
                if let rules, let sub = window.window(node.dataOffset, node.dataSize),
                    let count = subPage(sub, node: node, page: page, tree: tree, rules: rules)
                {
                    tally.entries += count
                } else {
                    tally.isIncomplete = true
                }
            case PageLayout.dupData | PageLayout.subData where rules != nil:
                if let rules {
                    subDatabase(node, window, page: page, tree: tree, rules: rules, tally: &tally, walk: followChildren)
                }
            default:
                invalid("has flags \(hex(flags)), which \(tree.label) never holds.")
            }
        }
    }

    /// Records a named table the main table lists, to walk after the main table.
    private func namedTable(_ node: Node, _ window: ByteWindow, page: Int, tree: TreeSpec, tally: inout TreeTally) {
        guard node.dataSize == PageLayout.recordSize, let key = window.slice(node.keyOffset, node.keySize),
            let record = TableRecord(window, at: node.dataOffset)
        else {
            damage(
                .nodeLayout, page: page, owner: tree.owner,
                "Node \(node.index) holds a table record of \(node.dataSize) bytes, not \(PageLayout.recordSize).")
            tally.isIncomplete = true
            return
        }
        namedTables.append(NamedTable(name: String(decoding: key, as: UTF8.self), record: record, page: page))
    }

    /// Checks a sub-page: the duplicates of one key, inline in the node as a small leaf page of their own. Returns
    /// the number of values.
    private func subPage(
        _ sub: ByteWindow, node: Node, page: Int, tree: TreeSpec, rules: TreeSpec.Duplicates
    ) -> Int? {
        func fail(_ reason: String) -> Int? {
            damage(
                .subPage, page: page, owner: tree.owner,
                "The duplicates of node \(node.index), a \(sub.count)-byte sub-page: \(reason)")
            return nil
        }
        let header = PageLayout.headerSize
        guard let flags = sub.u16(10), let lower = sub.u16(12).map(Int.init), let upper = sub.u16(14).map(Int.init),
            let keySize = sub.u16(8).map(Int.init)
        else { return fail("it is shorter than a page header.") }
        let expected = PageLayout.leaf | PageLayout.subPage | (rules.isFixed ? PageLayout.leaf2 : 0)
        guard flags & ~PageLayout.transient == expected else {
            return fail("its flags are \(hex(flags)), not \(hex(expected)).")
        }
        guard lower >= header, (lower - header) & 1 == 0 else {
            return fail("its mp_lower \(lower) does not follow a \(header)-byte header.")
        }
        let count = (lower - header) / 2
        guard count > 0 else { return fail("it holds no values, but LMDB deletes a key with its last value.") }
        var keys: [(index: Int, key: ArraySlice<UInt8>)] = []
        if rules.isFixed {
            guard header + count * keySize <= sub.count, upper == sub.count - count * (keySize - 2) else {
                return fail(
                    "its mp_lower \(lower), mp_upper \(upper) and value size \(keySize) do not describe \(count) "
                        + "values.")
            }
            keys = (0..<count).compactMap { index in sub.slice(header + index * keySize, keySize).map { (index, $0) } }
        } else {
            guard lower <= upper, upper <= sub.count else {
                return fail("its free space runs from offset \(lower) to \(upper).")
            }
            let parsed = NodeArea.parse(sub, count: count, upper: upper, isLeaf: true)
            if let failure = parsed.failure { return fail(failure) }
            for case let value? in parsed.nodes {
                guard value.flags == 0, value.dataSize == 0, let key = sub.slice(value.keyOffset, value.keySize)
                else {
                    return fail(
                        "value \(value.index) has flags \(hex(value.flags)) and \(value.dataSize) bytes of data.")
                }
                keys.append((value.index, key))
            }
        }
        if let long = keys.first(where: { $0.key.count > PageLayout.maxKeySize }) {
            return fail("value \(long.index) is \(long.key.count) bytes long, beyond LMDB's \(PageLayout.maxKeySize).")
        }
        if let failure = orderFailure(keys, order: rules.order, item: "value") {
            return fail(failure)
        }
        return count
    }

    /// Checks a sub-database: the duplicates of one key, in a tree of their own whose record is the node's value.
    private func subDatabase(
        _ node: Node, _ window: ByteWindow, page: Int, tree: TreeSpec, rules: TreeSpec.Duplicates,
        tally: inout TreeTally, walk followChildren: Bool
    ) {
        guard node.dataSize == PageLayout.recordSize, let key = window.slice(node.keyOffset, node.keySize),
            let record = TableRecord(window, at: node.dataOffset)
        else {
            damage(
                .nodeLayout, page: page, owner: tree.owner,
                "Node \(node.index) holds a sub-database record of \(node.dataSize) bytes, not "
                    + "\(PageLayout.recordSize).")
            tally.isIncomplete = true
            return
        }
        let sub = TreeSpec(
            duplicatesIn: tree, rules: rules, record: record,
            label: "the duplicates of key \(render(key)) in \(tree.label)", recordPage: page)
        guard followChildren else {
            // A check of the roots reads no page of a sub-database; its counts stay unknown.
            if checkRecord(of: sub) {
                _ = resolve(record.root, reference: "The root of \(sub.label)", at: page, sub)
            }
            tally.isIncomplete = true
            return
        }
        let found = walk(sub, followChildren: true)
        tally.entries += found.entries
        tally.duplicatePages += found.branchPages + found.leafPages + found.overflowPages
        if found.isIncomplete { tally.isIncomplete = true }
    }

    /// Checks the overflow pages that hold a value too large for a leaf page, and claims them. With `read` false
    /// only the page numbers are checked. Returns the first page when its header is valid.
    func overflow(
        of node: Node, _ window: ByteWindow, page: Int, tree: TreeSpec, tally: inout TreeTally, read: Bool
    ) -> Int? {
        guard let number = window.u64(node.dataOffset) else { return nil }
        let needed = PageLayout.overflowPages(forValueSize: UInt64(node.dataSize), pageSize: pageSize)
        let reference = "The value of node \(node.index)"
        guard let first = resolve(number, reference: reference, at: page, tree) else {
            tally.isIncomplete = true
            return nil
        }
        guard needed - 1 <= UInt64(lastPage - first) else {
            damage(
                .pageOutOfRange, page: page, owner: tree.owner,
                "\(reference) (\(node.dataSize) bytes) needs \(needed) overflow pages from page \(first), past the "
                    + "snapshot's last page \(lastPage).")
            tally.isIncomplete = true
            return nil
        }
        guard read else { return nil }
        guard claim(first, for: tree, from: page) else {
            tally.isIncomplete = true
            return nil
        }
        let header: ByteWindow
        switch file.read(at: first * pageSize, count: PageLayout.headerSize) {
        case .bytes(let bytes):
            header = ByteWindow(bytes)
        case .short:
            damage(.truncatedFile, page: first, owner: tree.owner, "The file ends inside it.")
            tally.isIncomplete = true
            return nil
        case .failed(let code):
            damage(
                .unreadablePage, page: first, owner: tree.owner, "Reading it failed: \(LMDBError(code: code).message).")
            tally.isIncomplete = true
            return nil
        }
        guard let stored = header.u64(0), let flags = header.u16(10), let pages = header.u32(12).map(Int.init) else {
            return nil
        }
        var problem: (PageCheck.Problem.Kind, String)?
        if stored != number {
            problem = (.pageNumber, "Its header says it is page \(stored): it holds a page written elsewhere.")
        } else if flags & ~PageLayout.transient != PageLayout.overflow {
            problem = (
                .pageType,
                "It is \(describePage(flags)), but node \(node.index) of page \(page) puts its value on an overflow "
                    + "page here."
            )
        } else if pages < needed {
            problem = (
                .overflowPage,
                "It starts a run of \(pages) overflow pages, but the value of node \(node.index) of page \(page) "
                    + "(\(node.dataSize) bytes) needs \(needed)."
            )
        } else if pages - 1 > lastPage - first {
            problem = (
                .overflowPage, "Its run of \(pages) overflow pages reaches past the snapshot's last page \(lastPage)."
            )
        }
        if let (kind, message) = problem {
            damage(kind, page: first, owner: tree.owner, message)
            tally.isIncomplete = true
            return nil
        }
        for next in (first + 1)..<(first + pages) {
            guard next < filePages else {
                damage(
                    .truncatedFile, page: next, owner: tree.owner,
                    "The file ends inside the run of overflow pages from page \(first).")
                tally.isIncomplete = true
                return nil
            }
            guard claim(next, for: tree, from: page) else {
                tally.isIncomplete = true
                return nil
            }
        }
        tally.overflowPages += pages
        return first
    }
}
