import CLMDB

#if canImport(Glibc)
    import Glibc
#endif

extension Environment {
    /// Checks, right after `mdb_env_open`, that the data file holds every page its meta page names.
    ///
    /// LMDB maps the data file and trusts its meta page: a data file cut short (a copy that stopped halfway, a
    /// truncation) opens without an error, and the first read of a page past its end raises SIGBUS and kills the
    /// process. Committed pages are always written before the meta page that names them, so a shorter file is
    /// damaged.
    ///
    /// - Throws: ``LMDBError/corrupted`` naming both lengths.
    static func checkDataFileLength(_ handle: OpaquePointer, path: String) throws(LMDBError) {
        var descriptor: mdb_filehandle_t = -1
        try check(mdb_env_get_fd(handle, &descriptor), "mdb_env_get_fd", path: path)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw LMDBError(code: errno, operation: "fstat", path: path) }
        let length = Int(status.st_size)
        // The two meta pages come first; reading them through the map is only safe once they are known to exist.
        let systemPageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard length >= 2 * systemPageSize else {
            throw truncated(length: length, needed: 2 * systemPageSize, path: path)
        }
        var info = MDB_envinfo()
        try check(mdb_env_info(handle, &info), "mdb_env_info", path: path)
        var statistics = MDB_stat()
        try check(mdb_env_stat(handle, &statistics), "mdb_env_stat", path: path)
        let needed = (Int(info.me_last_pgno) + 1) * Int(statistics.ms_psize)
        guard length >= needed else { throw truncated(length: length, needed: needed, path: path) }
    }

    private static func truncated(length: Int, needed: Int, path: String) -> LMDBError {
        LMDBError(
            code: MDB_CORRUPTED, operation: "mdb_env_open", path: path,
            detail: "The data file is \(length) bytes long but its pages reach byte \(needed): it was truncated")
    }
}
