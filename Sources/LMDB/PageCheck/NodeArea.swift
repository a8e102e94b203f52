/// An `MDB_node` of a branch or leaf page (or of a sub-page), located and bounds-checked.
struct Node {
    /// Its index in the page's array of node offsets (`mp_ptrs`).
    let index: Int
    /// Where it starts in its page.
    let offset: Int
    /// `mn_flags`: on a leaf `F_BIGDATA`, `F_SUBDATA`, `F_DUPDATA`; on a branch the top 16 bits of the child's page
    /// number.
    let flags: UInt16
    /// `mn_ksize`.
    let keySize: Int
    /// `NODEDSZ`: on a leaf the value's size (also when the value is on overflow pages).
    let dataSize: Int
    /// `NODEPGNO`: on a branch the child's page number.
    let childPage: UInt64

    var keyOffset: Int { offset + PageLayout.nodeHeaderSize }
    var dataOffset: Int { keyOffset + keySize }
    var isBigData: Bool { flags & PageLayout.bigData != 0 }
}

/// The nodes of a page: the array of offsets after the header, and the nodes from `mp_upper` to the end.
enum NodeArea {
    /// Locates `count` nodes of `window`, which must lie between `upper` and the window's end without overlapping.
    ///
    /// Returns one entry per node, `nil` for a node that is out of bounds or overlaps another, and a sentence about
    /// the first such node.
    static func parse(
        _ window: ByteWindow, count: Int, upper: Int, isLeaf: Bool
    ) -> (nodes: [Node?], failure: String?) {
        var nodes: [Node?] = []
        nodes.reserveCapacity(count)
        var failure: String?
        for index in 0..<count {
            guard let offset = window.u16(PageLayout.headerSize + 2 * index).map(Int.init) else {
                nodes.append(nil)
                continue
            }
            guard offset >= upper, offset & 1 == 0, window.contains(offset, PageLayout.nodeHeaderSize),
                let low = window.u16(offset), let high = window.u16(offset + 2), let flags = window.u16(offset + 4),
                let keySize = window.u16(offset + 6).map(Int.init)
            else {
                failure =
                    failure
                    ?? "Node \(index) lies at offset \(offset), outside the node area from \(upper) to \(window.count)"
                    + (offset & 1 == 0 ? "." : ", and is not 2-byte aligned.")
                nodes.append(nil)
                continue
            }
            let dataSize = Int(low) | Int(high) << 16
            let extent =
                PageLayout.nodeHeaderSize + keySize
                + (isLeaf ? (flags & PageLayout.bigData != 0 ? 8 : dataSize) : 0)
            guard window.contains(offset, extent) else {
                failure =
                    failure
                    ?? "Node \(index) at offset \(offset) takes \(extent) bytes, past the end of the "
                    + "\(window.count)-byte page."
                nodes.append(nil)
                continue
            }
            let child = UInt64(low) | UInt64(high) << 16 | UInt64(flags) << 32
            nodes.append(
                Node(
                    index: index, offset: offset, flags: flags, keySize: keySize, dataSize: dataSize,
                    childPage: child))
        }
        // Nodes are packed from mp_upper to the end of the page; two that overlap cannot both be right.
        let extents = nodes.compactMap { $0 }.map { node in
            (
                index: node.index, start: node.offset,
                end: node.dataOffset + (isLeaf ? (node.isBigData ? 8 : node.dataSize) : 0)
            )
        }.sorted { $0.start < $1.start }
        for (earlier, later) in zip(extents, extents.dropFirst()) where later.start < earlier.end {
            failure = failure ?? "Nodes \(earlier.index) and \(later.index) overlap at offset \(later.start)."
            nodes[earlier.index] = nil
            nodes[later.index] = nil
        }
        return (nodes, failure)
    }
}
