import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension Environment {
    /// Checks, right before `mdb_env_open`, the meta pages' page size and last page, which LMDB trusts as it opens.
    ///
    /// LMDB reads both meta pages with `pread`, takes the page size of the newer, and maps the file: a page size of 0
    /// divides by zero inside `mdb_env_open`, and a page size or last page past the file's end makes the first read
    /// of a meta page through the map raise SIGBUS. This reads the meta pages as `mdb_env_read_header` does and
    /// refuses what LMDB would accept but could not read. What LMDB itself refuses (no P_META flag, another magic
    /// number or version, a file too short to hold them) is left to LMDB, whose errors say so; so are a missing file
    /// and paths that are not regular files.
    ///
    /// - Throws: ``LMDBError/corrupted`` naming the page size or lengths found.
    static func checkMetaPages(at path: String, options: Options) throws(LMDBError) {
        let dataPath = options.contains(.noSubdirectory) ? path : path + "/data.mdb"
        guard Path.fileType(dataPath) == S_IFREG, let file = try? DataFile.open(path: dataPath) else { return }
        let length = PageLayout.headerSize + PageLayout.metaSize
        func meta(at offset: Int) -> MetaPage? {
            guard case .bytes(let bytes) = file.read(at: offset, count: length) else { return nil }
            return MetaPage(bytes, slot: offset == 0 ? 0 : 1).flatMap { $0.lmdbAccepts ? $0 : nil }
        }
        func damaged(_ detail: String) -> LMDBError {
            LMDBError(code: MDB_CORRUPTED, operation: "mdb_env_open", path: path, detail: detail)
        }
        guard let first = meta(at: 0) else { return }
        // LMDB looks for the second meta page one page after the first, at the page size the first names.
        guard PageLayout.pageSizes.contains(first.pageSize) else {
            throw damaged(
                "Meta page 0 names a page size of \(first.pageSize) bytes, which LMDB never writes: it is damaged")
        }
        guard let second = meta(at: first.pageSize) else { return }
        guard second.pageSize == first.pageSize else {
            throw damaged(
                "The meta pages name page sizes of \(first.pageSize) and \(second.pageSize) bytes: one is damaged")
        }
        let newest = second.transactionID > first.transactionID ? second : first
        let (pages, pastPages) = newest.lastPage.addingReportingOverflow(1)
        let (bytes, pastBytes) = pages.multipliedReportingOverflow(by: UInt64(newest.pageSize))
        guard !pastPages, !pastBytes, bytes <= UInt64(Int.max) else {
            throw damaged(
                "Meta page \(newest.slot) names page \(newest.lastPage) as the last in use, beyond any file: it is "
                    + "damaged")
        }
        let needed = Int(max(bytes, 2 * UInt64(newest.pageSize)))
        // The length is read after the meta pages: a writer that committed since the file was opened has grown it
        // before it wrote the meta page read here, while the size taken at the open may predate both.
        let fileLength = file.currentSize() ?? file.size
        guard fileLength >= needed else {
            guard fileLength >= 2 * newest.pageSize, tailIsFree(dataPath) else {
                throw truncated(length: fileLength, needed: needed, path: path)
            }
            return
        }
    }

    /// Whether the pages of the data file's newest snapshot past the file's end are all free, so that no reader
    /// reads one: LMDB does not write the pages a transaction allocated and freed again (see
    /// `PageChecker.isTailFree`). A roots check of the file reads the free list to find out.
    private static func tailIsFree(_ dataPath: String) -> Bool {
        guard let file = try? DataFile.open(path: dataPath),
            let report = try? PageChecker.check(file, options: PageCheck.Options(scope: .roots, maxProblems: 100))
        else { return false }
        return !report.problems.contains { $0.kind == .truncatedFile && $0.severity == .damage }
    }

    /// Checks, right after `mdb_env_open`, that the data file holds every page its meta page names.
    ///
    /// LMDB maps the data file and trusts its meta page: a data file cut short (a copy that stopped halfway, a
    /// truncation) opens without an error, and the first read of a page past its end raises SIGBUS and kills the
    /// process. Committed pages are written before the meta page that names them, except those a transaction
    /// allocated and freed again, which go to the free list unwritten: a shorter file is damaged unless every page
    /// past its end is free.
    ///
    /// - Throws: ``LMDBError/corrupted`` naming both lengths.
    static func checkDataFileLength(_ handle: OpaquePointer, path: String) throws(LMDBError) {
        var descriptor: mdb_filehandle_t = -1
        try unsafe check(mdb_env_get_fd(handle, &descriptor), "mdb_env_get_fd", path: path)
        var status = stat()
        guard unsafe fstat(descriptor, &status) == 0 else {
            throw LMDBError(code: errno, operation: "fstat", path: path)
        }
        let length = Int(status.st_size)
        // The two meta pages come first; reading them through the map is only safe once they are known to exist.
        let systemPageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard length >= 2 * systemPageSize else {
            throw truncated(length: length, needed: 2 * systemPageSize, path: path)
        }
        var info = unsafe MDB_envinfo()
        try unsafe check(mdb_env_info(handle, &info), "mdb_env_info", path: path)
        var statistics = MDB_stat()
        try unsafe check(mdb_env_stat(handle, &statistics), "mdb_env_stat", path: path)
        // A damaged meta page may name any last page: the product is computed without trapping.
        let (pages, pastPages) = unsafe UInt(bitPattern: info.me_last_pgno).addingReportingOverflow(1)
        let (bytes, pastBytes) = pages.multipliedReportingOverflow(by: UInt(statistics.ms_psize))
        guard !pastPages, !pastBytes, bytes <= UInt(Int.max) else {
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "mdb_env_open", path: path,
                detail:
                    unsafe "The meta page names page \(info.me_last_pgno) as the last in use, beyond any file: it is "
                    + "damaged")
        }
        let needed = Int(bytes)
        // The length is read again after the meta page: another process's writer may have committed since the first
        // `fstat`, growing the file before it wrote the meta page `mdb_env_info` read.
        guard unsafe fstat(descriptor, &status) == 0 else {
            throw LMDBError(code: errno, operation: "fstat", path: path)
        }
        let current = Int(status.st_size)
        guard current >= needed else {
            guard tailIsFree(path) else { throw truncated(length: current, needed: needed, path: path) }
            return
        }
    }

    private static func truncated(length: Int, needed: Int, path: String) -> LMDBError {
        LMDBError(
            code: MDB_CORRUPTED, operation: "mdb_env_open", path: path,
            detail: "The data file is \(length) bytes long but its pages reach byte \(needed): it was truncated, or "
                + "its meta page is damaged")
    }
}
