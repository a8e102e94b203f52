/// What the walk of one tree found, to compare with its record.
struct TreeTally {
    var branchPages = 0
    var leafPages = 0
    var overflowPages = 0
    var entries = 0
    /// The pages of the sub-databases of duplicates below the tree's leaves.
    var duplicatePages = 0
    /// Whether damage kept part of the tree from being walked, so that its counts cannot be compared.
    var isIncomplete = false
    /// The first leaf page found at each depth.
    var leafDepths: [Int: Int] = [:]
    /// Whether the root is a branch page, once read.
    var rootIsBranch: Bool?
}
