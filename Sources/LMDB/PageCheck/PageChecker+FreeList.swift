extension PageChecker {
    /// Checks one entry of the free list: its key, the ID of the transaction that freed the pages, and its value, an
    /// IDL (`MDB_IDL`): a count, then that many page numbers in descending order, each 8 bytes. LMDB reserves room
    /// for an entry before it fills it, so the value may be longer than its count needs.
    ///
    /// A check of the roots reads no page list (it only checks where the list lies), unless the file ends before the
    /// snapshot's last page: the lists then say whether the pages past the end are free.
    func freeListEntry(_ node: Node, _ window: ByteWindow, page: Int, tree: TreeSpec, tally: inout TreeTally) {
        guard let key = window.window(node.keyOffset, node.keySize), key.count == 8, let transaction = key.u64(0) else {
            return
        }
        if transaction == 0 || transaction > meta.transactionID {
            damage(
                .freeList, page: page, owner: .freeList,
                "Node \(node.index) lists the pages freed by transaction \(transaction), but the snapshot's "
                    + "transactions are 1 to \(meta.transactionID).")
        }
        let source: ValueSource
        if node.isBigData {
            guard
                let first = overflow(of: node, window, page: page, tree: tree, tally: &tally, read: readsFreeLists)
            else {
                return
            }
            source = .pages(firstByte: first * pageSize + PageLayout.headerSize)
        } else {
            guard readsFreeLists, let value = window.window(node.dataOffset, node.dataSize) else { return }
            source = .inline(value)
        }
        readPageList(source, size: node.dataSize, transaction: transaction, page: page, node: node.index)
    }

    /// Where a value's bytes are.
    enum ValueSource {
        /// In the leaf page, after the key.
        case inline(ByteWindow)
        /// On overflow pages, from this offset in the file (after the first page's header).
        case pages(firstByte: Int)
    }

    /// The number of page numbers read at once from overflow pages, which bounds the memory a long list takes.
    private static let chunkLength = 8192

    /// Reads a page list a chunk at a time, checks each page number and records the page as free.
    private func readPageList(_ source: ValueSource, size: Int, transaction: UInt64, page: Int, node: Int) {
        let what = "The page list of transaction \(transaction) (node \(node))"
        let slots = size / 8
        if size % 8 != 0 || slots == 0 {
            damage(
                .freeList, page: page, owner: .freeList,
                "\(what) is \(size) bytes long, not a whole number of 8-byte page numbers.")
        }
        var limit = slots
        var index = 0
        var previous: UInt64?
        var outOfRange: (first: UInt64, count: Int)?
        var misordered: UInt64?
        while index < limit {
            let length = min(Self.chunkLength, limit - index)
            let chunk: ByteWindow
            switch source {
            case .inline(let value):
                guard let part = value.window(index * 8, length * 8) else { return }
                chunk = part
            case .pages(let firstByte):
                guard case .bytes(let bytes) = file.read(at: firstByte + index * 8, count: length * 8) else {
                    damage(
                        .truncatedFile, page: page, owner: .freeList,
                        "\(what) cannot be read whole: the file ends, or a read fails, inside its overflow pages.")
                    return
                }
                chunk = ByteWindow(bytes)
            }
            for slot in 0..<length {
                guard let number = chunk.u64(slot * 8) else { return }
                defer { index += 1 }
                if index == 0 {
                    if number > UInt64(slots - 1) {
                        damage(
                            .freeList, page: page, owner: .freeList,
                            "\(what) counts \(number) pages, but has room for \(slots - 1).")
                    }
                    limit = 1 + Int(min(number, UInt64(slots - 1)))
                    continue
                }
                guard index < limit else { break }
                if let last = previous, number >= last, misordered == nil { misordered = number }
                previous = number
                guard number >= 2, number <= UInt64(lastPage) else {
                    outOfRange = (outOfRange?.first ?? number, (outOfRange?.count ?? 0) + 1)
                    continue
                }
                markFree(Int(number), transaction: transaction)
            }
        }
        if let outOfRange {
            damage(
                .freeList, page: page, owner: .freeList,
                "\(what) lists \(outOfRange.count == 1 ? "a page" : "\(outOfRange.count) pages") outside the "
                    + "snapshot's pages 2 to \(lastPage): \(outOfRange.count == 1 ? "" : "the first is ")page "
                    + "\(outOfRange.first).")
        }
        if let misordered {
            damage(
                .freeList, page: page, owner: .freeList,
                "\(what) is not in strictly descending order, as LMDB keeps it: \(misordered) follows a smaller or "
                    + "equal page number.")
        }
    }

    /// Records a page the free list lists.
    private func markFree(_ page: Int, transaction: UInt64) {
        // A page past the end of the file is counted toward the file's end being harmless (`isTailFree`).
        guard page < existingPages else {
            if page >= filePages { freeTail.insert(page) }
            return
        }
        let previous = usage.owner(of: page)
        switch previous {
        case PageUsage.unused:
            usage.set(page, to: PageUsage.free)
            freePageCount += 1
        case PageUsage.free:
            damage(
                .pageUsedAndFree, page: page, owner: .freeList,
                "The free list lists it twice, the second time among the pages of transaction \(transaction).")
        default:
            damage(
                .pageUsedAndFree, page: page, owner: owner(of: previous),
                "The free list lists it among the pages freed by transaction \(transaction), but "
                    + "\(owner(of: previous)) uses it.")
        }
    }
}
