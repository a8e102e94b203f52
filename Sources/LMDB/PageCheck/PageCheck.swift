/// A bounds-checked reader of LMDB 0.9 data files, which finds damage that would make LMDB crash.
///
/// LMDB trusts its pages: a damaged page makes it read out of bounds, loop, or abort. A page check reads the data
/// file itself, with `pread` at explicit offsets, never through LMDB's memory map and never calling LMDB on the
/// pages it checks. Every offset is checked before it is used, every page is visited at most once, the depth of a
/// tree is capped at LMDB's own limit of 32 and every count at the number of pages in the file, so no byte pattern
/// makes it crash, hang or allocate more than a small multiple of the file's page count.
///
/// There are two entry points:
/// - ``checkFile(path:options:)`` checks a data file that no environment of this process has open, for instance
///   before handing a possibly damaged file to LMDB.
/// - ``Environment/checkPages(scope:maxProblems:)`` checks the snapshot of a read transaction of an open
///   environment, while other threads and processes go on writing.
///
/// ```swift
/// let report = try PageCheck.checkFile(path: "/var/lib/app/store")
/// if !report.isClean {
///     for problem in report.problems where problem.severity == .damage { print(problem) }
/// }
/// ```
///
/// What is validated: both meta pages (magic, version, page size, last page, transaction ID, map size); every page
/// reachable from the chosen meta page's free list and main table, the named tables the main table lists, and the
/// sub-pages and sub-databases of their duplicates (page number, flags, bounds of the free space, every node's
/// offset and size, overflow pages); keys in strictly ascending order under the table's comparison, within the
/// bounds their branch pages set; equal depth on every path, equal to the table's record, and the record's entry
/// and page counts; the free list's transaction IDs and page lists; and that every page of the snapshot is used
/// once: never reached twice, never both reached and free, and otherwise reported as leaked.
///
/// What is not: the content of values (records carry their own checksums one layer up); free pages themselves;
/// pages past the snapshot's last page; the trees of the older meta page (only its header fields); the key of a
/// branch page's first node, which LMDB ignores; unused bytes between nodes; that the keys of an `integerKey` table
/// all have one size (keys of different sizes are ordered as zero-extended numbers); the `md_pad` of a table's own
/// record, which LMDB leaves 0. Files are read as written by a 64-bit little-endian LMDB 0.9 with its default key
/// size limit (511 bytes), the only kind this platform writes.
public enum PageCheck {
    /// How much of a file a check reads.
    public enum Scope: Hashable, Sendable {
        /// The meta pages, the whole main table (whose entries are the named tables' records), and the root page of
        /// the free list and of each named table: a few pages, cheap enough for every open of a store.
        case roots
        /// Every page reachable from the meta page, the free list's page lists, and the accounting of every page.
        case full
    }

    /// Settings of a check.
    public struct Options: Hashable, Sendable {
        /// How much of the file to read. The default is ``Scope/full``.
        public var scope: Scope

        /// The most problems a report lists; the rest are counted in ``Report/omittedProblemCount``. The default is
        /// 1000, which keeps a report of a thoroughly damaged file small.
        public var maxProblems: Int

        /// Creates options.
        ///
        /// - Parameters:
        ///   - scope: How much of the file to read.
        ///   - maxProblems: The most problems a report lists; negative values count as zero.
        public init(scope: Scope = .full, maxProblems: Int = 1000) {
            self.scope = scope
            self.maxProblems = max(0, maxProblems)
        }
    }

    /// Checks the data file at `path`, which no environment of this process may have open.
    ///
    /// `path` is either an environment's directory, whose `data.mdb` is checked, or a data file itself (the layout
    /// of ``Environment/Options/noSubdirectory``). The check reads the newer valid meta page, as LMDB does, and walks
    /// the snapshot it names. It never writes and takes no lock: when another process writes the file meanwhile, the
    /// pages it reads may belong to different transactions, and the report may show damage that is not there. The
    /// report describes one consistent snapshot only when no writer runs; for a live store, use
    /// ``Environment/checkPages(scope:maxProblems:)``.
    ///
    /// - Parameters:
    ///   - path: The environment's directory or its data file.
    ///   - options: How much to read and how many problems to list.
    /// - Returns: The report: what the file holds and the problems found. Damage is reported, never thrown.
    /// - Throws: ``LMDBError`` only when the file cannot be read at all: ``LMDBError/noSuchFile`` when it does not
    ///   exist, ``LMDBError/accessDenied`` without permission, ``LMDBError/invalidArgument`` when it is not a regular
    ///   file, ``LMDBError/ioError`` (or the system's error) when its first page cannot be read.
    public static func checkFile(path: String, options: Options = Options()) throws(LMDBError) -> Report {
        let file = try DataFile.open(path: path)
        return try PageChecker.check(file, options: options)
    }
}
