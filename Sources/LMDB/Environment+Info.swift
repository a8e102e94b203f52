import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension Environment {
    /// Facts about an environment's memory map and readers.
    public struct Info: Hashable, Sendable {
        /// The size of the memory map in bytes.
        public var mapSize: Int
        /// The number of the last page used in the data file; the file's used size is `(lastPageNumber + 1)` pages.
        public var lastPageNumber: Int
        /// The ID of the last committed transaction.
        public var lastTransactionID: Int
        /// The number of reader slots.
        public var maxReaders: Int
        /// The number of reader slots in use, across all processes.
        public var readersInUse: Int
    }

    /// Page and entry counts of a table's B+tree.
    public struct Statistics: Hashable, Sendable {
        /// The size of a page in bytes.
        public var pageSize: Int
        /// The depth of the B+tree.
        public var depth: Int
        /// The number of internal (branch) pages.
        public var branchPages: Int
        /// The number of leaf pages.
        public var leafPages: Int
        /// The number of overflow pages, which hold values too large for a leaf page.
        public var overflowPages: Int
        /// The number of entries, counting each duplicate of a `dupSort` table.
        public var entries: Int

        init(_ stat: MDB_stat) {
            pageSize = Int(stat.ms_psize)
            depth = Int(stat.ms_depth)
            branchPages = stat.ms_branch_pages
            leafPages = stat.ms_leaf_pages
            overflowPages = stat.ms_overflow_pages
            entries = stat.ms_entries
        }
    }

    /// A reader slot in use, from the environment's lock file.
    public struct Reader: Hashable, Sendable {
        /// The process that holds the slot.
        public var processID: Int32
        /// The thread that began the slot's transaction, as the C library numbers it.
        public var thread: UInt
        /// The snapshot the reader reads, or `nil` when the slot is held but no transaction is active.
        public var transactionID: Int?
    }

    /// The environment's map size, last page and transaction, and reader counts.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``.
    ///
    /// The corresponding LMDB function is `mdb_env_info`.
    public func info() throws -> Info {
        try withOpenEnvironment("mdb_env_info") {
            var info = unsafe MDB_envinfo()
            try unsafe check(mdb_env_info(handle, &info), "mdb_env_info", path: path)
            return unsafe Info(
                mapSize: info.me_mapsize, lastPageNumber: info.me_last_pgno, lastTransactionID: info.me_last_txnid,
                maxReaders: Int(info.me_maxreaders), readersInUse: Int(info.me_numreaders))
        }
    }

    /// Statistics of the environment's main (unnamed) table, whose entries are the named tables when there are any.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``.
    ///
    /// The corresponding LMDB function is `mdb_env_stat`.
    public func statistics() throws -> Statistics {
        try withOpenEnvironment("mdb_env_stat") {
            var stat = MDB_stat()
            try unsafe check(mdb_env_stat(handle, &stat), "mdb_env_stat", path: path)
            return Statistics(stat)
        }
    }

    /// Copies the environment to `destination` as a consistent snapshot, while other threads and processes go on
    /// reading and writing.
    ///
    /// For a directory environment `destination` is a directory, created if missing, that must not hold a
    /// `data.mdb` yet; for a ``Options/noSubdirectory`` environment it is a file that must not exist yet. Nothing is
    /// ever overwritten. The copy gets the environment's ``Configuration/fileMode``.
    ///
    /// - Parameters:
    ///   - destination: Where to write the copy.
    ///   - compacting: Whether to omit free pages and renumber the rest, which makes the copy as small as the data.
    ///     It is slower and uses more CPU.
    /// - Throws: ``LMDBError/fileExists`` when the destination holds a data file, ``LMDBError/environmentClosed`` after
    ///   ``close()``, or the ``LMDBError`` with the `errno` of a failed `mkdir`, write or `chmod` (``LMDBError/noSpace``
    ///   for a full disk).
    ///
    /// The corresponding LMDB function is `mdb_env_copy2`.
    public func copy(to destination: String, compacting: Bool = false) throws {
        try withOpenEnvironment("mdb_env_copy2") {
            let single = configuration.options.contains(.noSubdirectory)
            if !single, Path.fileType(destination) == nil, unsafe mkdir(destination, 0o700) != 0 {
                throw LMDBError(
                    code: errno, operation: "mkdir", path: destination, detail: "Cannot create the copy's directory")
            }
            let code = unsafe mdb_env_copy2(handle, destination, compacting ? UInt32(MDB_CP_COMPACT) : 0)
            if code != 0 {
                throw LMDBError(
                    code: code, operation: "mdb_env_copy2", path: destination,
                    detail: code == EEXIST ? "The destination already holds a data file" : nil)
            }
            let file = single ? destination : destination + "/data.mdb"
            if unsafe chmod(file, mode_t(configuration.fileMode)) != 0 {
                throw LMDBError(code: errno, operation: "chmod", path: file)
            }
        }
    }

    /// Writes a consistent copy of the environment's data file to an open file descriptor.
    ///
    /// Unlike ``copy(to:compacting:)``, this creates no file: the caller opens the descriptor (a temporary file it
    /// renames into place once the copy is complete, say), and flushes it to disk and closes it. LMDB writes the
    /// copy sequentially from the descriptor's current offset, retrying short writes; what it wrote before a failure
    /// stays in the file, so the caller removes it.
    ///
    /// - Parameters:
    ///   - descriptor: A descriptor open for writing, such as of a new, empty file.
    ///   - compacting: Whether to leave free pages out and renumber the rest, as ``copy(to:compacting:)`` does.
    /// - Throws: ``LMDBError`` with the `errno` of a failed write (`ENOSPC` for a full disk), or
    ///   ``LMDBError/environmentClosed`` after ``close()``.
    ///
    /// The corresponding LMDB function is `mdb_env_copyfd2`.
    public func copy(toDescriptor descriptor: Int32, compacting: Bool = false) throws {
        try withOpenEnvironment("mdb_env_copyfd2") {
            let code = unsafe mdb_env_copyfd2(handle, descriptor, compacting ? UInt32(MDB_CP_COMPACT) : 0)
            if code != 0 { throw LMDBError(code: code, operation: "mdb_env_copyfd2", path: path) }
        }
    }

    /// The reader slots in use, across all processes that have the environment open.
    ///
    /// The slots this process keeps for its next reads (see ``keptReadTransactions()``) are left out; those other
    /// processes keep are listed, without a snapshot.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``.
    ///
    /// The corresponding LMDB function is `mdb_reader_list`.
    public func readers() throws -> [Reader] {
        try withOpenEnvironment("mdb_reader_list") {
            final class Lines {
                var text = ""
            }
            let lines = Lines()
            let code = withExtendedLifetime(lines) {
                unsafe mdb_reader_list(
                    handle,
                    { message, context in
                        guard let message = unsafe message, let context = unsafe context else { return 0 }
                        unsafe Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(
                            cString: message)
                        return 0
                    }, unsafe Unmanaged.passUnretained(lines).toOpaque())
            }
            if code < 0 { throw LMDBError(code: code, operation: "mdb_reader_list", path: path) }
            // Each slot is a line "pid thread txnid", with txnid "-" for a slot that holds no snapshot; the header
            // and "(no active readers)" lines do not start with a number.
            // A slot of this process without a snapshot is a kept one: with MDB_NOTLS, ending a transaction any
            // other way frees its slot.
            let me = getpid()
            return lines.text.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count == 3, let pid = Int32(fields[0]), let thread = UInt(fields[1], radix: 16) else {
                    return nil
                }
                let reader = Reader(processID: pid, thread: thread, transactionID: Int(fields[2]))
                return reader.processID == me && reader.transactionID == nil ? nil : reader
            }
        }
    }

    /// How many ended read transactions this process keeps, reset, for its next reads to renew rather than begin
    /// anew (a tenth of the cost). Each holds a reader slot, without a snapshot, so it keeps no page from reuse; up
    /// to 4 are kept, and none when ``Configuration/maxReaders`` is below 8. Closing the environment frees them.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``.
    public func keptReadTransactions() throws -> Int {
        try withOpenEnvironment("mdb_txn_reset") {
            gate.idleReaderCount
        }
    }

    /// Clears the reader slots of processes that died while they held them, and tells how many it cleared.
    ///
    /// A stale slot pins an old snapshot, which stops LMDB from reusing the pages that snapshot can see; the file
    /// then grows with every update.
    ///
    /// - Returns: The number of slots cleared.
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``.
    ///
    /// The corresponding LMDB function is `mdb_reader_check`.
    @discardableResult
    public func clearStaleReaders() throws -> Int {
        try withOpenEnvironment("mdb_reader_check") {
            var dead: Int32 = 0
            try unsafe check(mdb_reader_check(handle, &dead), "mdb_reader_check", path: path)
            return Int(dead)
        }
    }
}
