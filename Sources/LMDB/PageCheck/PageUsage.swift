/// Which owner each page of a snapshot was found used by, so that no page is walked twice and every page is
/// accounted for.
///
/// A full check keeps one 4-byte entry per page of the file, so its memory is bounded by the file's size (a 1 GiB
/// file of 4 KiB pages takes 1 MiB). A check of the roots keeps only the pages it visits.
struct PageUsage {
    /// An owner's number: ``unused``, ``free``, or an index into the checker's owners.
    typealias Code = UInt32

    static let unused: Code = 0
    /// Listed in the free list.
    static let free: Code = 1

    private var dense: [Code]
    private var sparse: [Int: Code]
    private let isDense: Bool

    /// Tracks pages `0..<pageCount`, densely when `dense`.
    init(pageCount: Int, dense: Bool) {
        isDense = dense
        self.dense = dense ? [Code](repeating: Self.unused, count: max(0, pageCount)) : []
        sparse = [:]
    }

    /// The owner of `page`, ``unused`` when none.
    func owner(of page: Int) -> Code {
        if isDense {
            return dense.indices.contains(page) ? dense[page] : Self.unused
        }
        return sparse[page] ?? Self.unused
    }

    /// Records that `owner` uses `page`.
    mutating func set(_ page: Int, to owner: Code) {
        if isDense {
            if dense.indices.contains(page) { dense[page] = owner }
        } else {
            sparse[page] = owner
        }
    }

    /// Runs of consecutive unused pages in `range`, as (first page, count).
    func unusedRuns(in range: Range<Int>) -> [(first: Int, count: Int)] {
        var runs: [(first: Int, count: Int)] = []
        var start: Int?
        for page in range {
            if owner(of: page) == Self.unused {
                if start == nil { start = page }
            } else if let first = start {
                runs.append((first, page - first))
                start = nil
            }
        }
        if let first = start { runs.append((first, range.upperBound - first)) }
        return runs
    }
}
