/// Walks one snapshot of a data file: the trees its meta page names, the free list, and the use of every page.
///
/// Every page number is checked against the snapshot and the file before it is read, every page is claimed in
/// ``PageUsage`` before it is walked (so a cycle or a shared page is reported, not walked again), trees are walked
/// with an explicit stack capped at LMDB's 32 levels, and every offset inside a page goes through ``ByteWindow``.
final class PageChecker {
    let file: DataFile
    let options: PageCheck.Options
    let meta: MetaPage
    let pageSize: Int
    /// The snapshot's last page, clamped to `Int`.
    let lastPage: Int
    /// The whole pages the file holds.
    let filePages: Int
    /// Whether the whole snapshot is walked, rather than the roots.
    let isFull: Bool
    /// Whether the free list's page lists are read: in a full check, and whenever the file ends before the
    /// snapshot's last page, to find whether the pages past its end are all free (see ``isTailFree``).
    let readsFreeLists: Bool
    /// The pages past the end of the file that the free list lists.
    var freeTail: Set<Int> = []
    /// The meta page's report that the file ends before the snapshot's last page: damage unless every page past
    /// the end is free (``isTailFree``), added once the free list is read.
    var deferredTruncation: PageCheck.Problem?

    var usage: PageUsage
    var problems: ProblemList
    /// What each ``PageUsage/Code`` stands for; codes 0 and 1 are unused and free.
    private(set) var owners: [PageCheck.Owner] = [.freeList, .freeList]
    /// The number of pages the free list lists.
    var freePageCount = 0

    /// A named table the main table lists, to walk once the main table is done.
    struct NamedTable {
        let name: String
        let record: TableRecord
        /// The main table's leaf page that holds the record.
        let page: Int
    }

    var namedTables: [NamedTable] = []

    private init(file: DataFile, options: PageCheck.Options, meta: MetaPage, pageSize: Int) {
        self.file = file
        self.options = options
        self.meta = meta
        self.pageSize = pageSize
        lastPage = Int(clamping: meta.lastPage)
        filePages = file.size / pageSize
        isFull = options.scope == .full
        readsFreeLists = isFull || Int(clamping: meta.lastPage) >= file.size / pageSize
        // Pages past the end of the file are never read, so they need no entry.
        usage = PageUsage(pageCount: lastPage < filePages ? lastPage + 1 : filePages, dense: isFull)
        problems = ProblemList(limit: options.maxProblems)
    }

    /// The pages the snapshot holds that exist in the file.
    var existingPages: Int { lastPage < filePages ? lastPage + 1 : filePages }

    /// Whether every page of the snapshot past the end of the file is free, so that no reader reads one.
    ///
    /// LMDB writes the pages a commit dirtied, but not those it allocated and freed again before the commit (loose
    /// pages, the overflow pages of a value inserted and deleted in one transaction): they go to the free list
    /// unwritten, and when they are the highest the snapshot has, the file ends before its last page. Such a file is
    /// whole. A file cut short loses pages that trees reach, which the free list does not list.
    var isTailFree: Bool {
        // `lastPage` may be as large as `Int.max` (a damaged meta page): the count of the tail is not formed.
        lastPage < filePages || freeTail.count - 1 == lastPage - filePages
    }

    /// Checks `file`, reading the snapshot of the newest usable meta page, as LMDB does.
    ///
    /// - Throws: ``LMDBError`` when the first page of the file cannot be read at all.
    static func check(_ file: DataFile, options: PageCheck.Options) throws(LMDBError) -> PageCheck.Report {
        let reading = try MetaReading.read(file)
        return report(file, reading: reading, chosen: reading.newest, options: options)
    }

    /// Checks `file` from the meta page `chosen`, or reports only the meta pages' problems when it is `nil`.
    ///
    /// - Parameters:
    ///   - missing: Why there is no snapshot when `chosen` is `nil`, if not because neither meta page is valid.
    ///   - severity: The severity of that problem: a snapshot that writers replaced is a note, not damage.
    static func report(
        _ file: DataFile, reading: MetaReading, chosen: MetaPage?, options: PageCheck.Options,
        missing: String = "Neither meta page is valid: there is no snapshot to check.",
        severity: PageCheck.Problem.Severity = .damage
    ) -> PageCheck.Report {
        guard let chosen, let pageSize = reading.pageSize else {
            var problems = ProblemList(limit: options.maxProblems)
            if severity == .damage {
                for problem in reading.problems(chosen: nil) { problems.add(problem) }
            }
            problems.add(
                PageCheck.Problem(
                    severity: severity, kind: .metaPage, page: nil, owner: .meta,
                    message: missing))
            return PageCheck.Report(
                path: file.path, scope: options.scope, fileSize: file.size, pageSize: reading.pageSize ?? 0,
                metaPage: nil, transactionID: 0, lastPageNumber: 0, mapSize: 0, tables: [], freeList: nil,
                freePages: nil, leakedPages: nil, problems: problems.listed, omittedProblemCount: problems.omitted,
                omitsDamage: problems.omitsDamage, damagedPages: problems.damagedPages)
        }
        let checker = PageChecker(file: file, options: options, meta: chosen, pageSize: pageSize)
        for problem in reading.problems(chosen: chosen) {
            // The file's end before the snapshot's last page is damage only if a page past it is not free: decided
            // once the free list is read.
            if problem.kind == .truncatedFile, problem.owner == .meta, checker.deferredTruncation == nil {
                checker.deferredTruncation = problem
            } else {
                checker.problems.add(problem)
            }
        }
        return checker.run()
    }

    private func run() -> PageCheck.Report {
        usage.set(0, to: addOwner(.meta))
        usage.set(1, to: usage.owner(of: 0))
        let freeCode = addOwner(.freeList)
        let mainCode = addOwner(.main)

        let freeTree = TreeSpec(
            role: .freeList, owner: .freeList, code: freeCode, record: meta.freeList, label: "the free list",
            recordPage: meta.slot)
        // The free list's problems come after the file's end when that is damage, as the meta page's problems come
        // first: they are kept apart until the free list says which it is.
        let found = problems
        problems = ProblemList(limit: options.maxProblems)
        let freeTally = walk(freeTree, followChildren: readsFreeLists)
        let freeListProblems = problems
        problems = found
        if let deferredTruncation {
            if isTailFree {
                note(
                    .truncatedFile, page: filePages, owner: .meta,
                    "The file ends before the snapshot's last page \(lastPage), and the \(freeTail.count) "
                        + "page\(freeTail.count == 1 ? "" : "s") past its end are free: a transaction allocated and "
                        + "freed them, and LMDB never wrote them. No reader reads them.")
            } else {
                problems.add(deferredTruncation)
            }
        }
        problems.add(freeListProblems)

        let mainTree = TreeSpec(
            role: .main, owner: .main, code: mainCode, record: meta.main, label: "the main table",
            recordPage: meta.slot)
        // The main table is walked whole in both scopes: its entries are the named tables' records.
        let mainTally = walk(mainTree, followChildren: true)

        var summaries = [meta.main.summary(name: nil, duplicatePages: isFull ? mainTally.duplicatePages : nil)]
        for table in namedTables {
            let owner = PageCheck.Owner.table(table.name)
            let tree = TreeSpec(
                role: .table, owner: owner, code: addOwner(owner), record: table.record,
                label: "table \(table.name)", recordPage: table.page)
            let tally = walk(tree, followChildren: isFull)
            summaries.append(
                table.record.summary(name: table.name, duplicatePages: isFull ? tally.duplicatePages : nil))
        }

        var leaked: Int?
        if isFull {
            leaked = reportLeakedPages()
        }
        return PageCheck.Report(
            path: file.path, scope: options.scope, fileSize: file.size, pageSize: pageSize, metaPage: meta.slot,
            transactionID: Int(clamping: meta.transactionID), lastPageNumber: lastPage,
            mapSize: Int(clamping: meta.mapSize), tables: summaries,
            freeList: meta.freeList.summary(name: nil, duplicatePages: isFull ? freeTally.duplicatePages : nil),
            freePages: isFull ? freePageCount : nil, leakedPages: leaked, problems: problems.listed,
            omittedProblemCount: problems.omitted, omitsDamage: problems.omitsDamage,
            damagedPages: problems.damagedPages)
    }

    /// Reports the runs of pages that no tree reaches and the free list does not list.
    ///
    /// In a committed snapshot every page from 2 to `mm_last_pg` is either reached or free: a commit writes the pages
    /// it freed under its own transaction ID, and puts back the free pages it took but did not use, before it writes
    /// the meta page; mdb.c's compacting copy relies on it, failing with `MDB_INCOMPATIBLE` ("page leak or corrupt
    /// DB") otherwise. Pages past `mm_last_pg` are not the snapshot's: a transaction that had not committed (or, on a
    /// live store, one that committed later) wrote them, and with `MDB_WRITEMAP` the file is as long as the map. A
    /// crash leaves only such pages, or reused free pages that the older meta page still lists as free. A leak is
    /// therefore a note, not damage: LMDB bugs of the past (ITS#8174) left some, and no reader goes wrong.
    private func reportLeakedPages() -> Int {
        var total = 0
        for run in usage.unusedRuns(in: 2..<max(2, existingPages)) {
            total += run.count
            let pages = run.count == 1 ? "It is" : "Pages \(run.first) through \(run.first + run.count - 1) are"
            note(
                .leakedPages, page: run.first, owner: .freeList,
                "\(pages) neither used by a table nor listed as free: LMDB cannot reuse "
                    + "\(run.count == 1 ? "it" : "them") until a compacting copy.")
        }
        return total
    }

    /// Registers an owner and returns its code.
    private func addOwner(_ owner: PageCheck.Owner) -> PageUsage.Code {
        owners.append(owner)
        return PageUsage.Code(owners.count - 1)
    }

    /// The owner a code stands for.
    func owner(of code: PageUsage.Code) -> PageCheck.Owner {
        let index = Int(code)
        return owners.indices.contains(index) ? owners[index] : .freeList
    }

    func damage(_ kind: PageCheck.Problem.Kind, page: Int?, owner: PageCheck.Owner, _ message: String) {
        problems.add(PageCheck.Problem(severity: .damage, kind: kind, page: page, owner: owner, message: message))
    }

    func note(_ kind: PageCheck.Problem.Kind, page: Int?, owner: PageCheck.Owner, _ message: String) {
        problems.add(PageCheck.Problem(severity: .note, kind: kind, page: page, owner: owner, message: message))
    }
}
