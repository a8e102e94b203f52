#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The directory of a store and its `data.mdb`, checked before LMDB sees them, and the facts of the data file's
/// header that LMDB does not hand out.
///
/// Checking first gives precise messages for the usual mistakes (a wrong path, a file, an empty directory, a file
/// that is not LMDB) and keeps LMDB from creating a lock file in a directory that holds no store.
struct DataFile {
    /// The store's directory.
    let directory: String
    /// The size of `data.mdb` in bytes.
    let fileSize: Int
    /// The header of the newest meta page, when it could be read.
    let header: Header?

    /// What the newest of the two meta pages says.
    struct Header {
        /// The map size the store was last committed with, in bytes.
        var mapSize: Int
        /// The page size in bytes.
        var pageSize: Int
        /// The ID of the last committed transaction.
        var transactionID: Int
    }

    /// The path of the data file inside the directory.
    var path: String {
        directory + "/data.mdb"
    }

    /// Checks that `directory` holds an LMDB data file, and reads its header.
    ///
    /// - Throws: ``ToolError`` naming what is wrong: no such path, a file rather than a directory, a directory
    ///   without `data.mdb`, or a `data.mdb` that is not an LMDB file.
    init(directory: String) throws(ToolError) {
        self.directory = directory
        var status = stat()
        guard stat(directory, &status) == 0 else {
            if errno == ENOENT { throw ToolError("No such store: '\(directory)' does not exist") }
            throw ToolError("Cannot read '\(directory)': \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw ToolError("'\(directory)' is a file, not a store: a store is a directory that holds data.mdb")
        }
        let dataPath = directory + "/data.mdb"
        guard stat(dataPath, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw ToolError("'\(directory)' is not a store: the directory holds no data.mdb")
        }
        fileSize = Int(status.st_size)
        header = try Self.readHeader(dataPath, directory: directory)
    }

    // The layout of a meta page on a 64-bit machine (mdb.c): a 16-byte page header, then MDB_meta with
    // mm_magic (u32), mm_version (u32), mm_address (8), mm_mapsize (8), mm_dbs[2] (48 bytes each, the first one's
    // md_pad holding the page size), mm_last_pg (8), mm_txnid (8).
    private static let magicOffset = 16
    private static let mapSizeOffset = 32
    private static let pageSizeOffset = 40
    private static let transactionIDOffset = 144
    private static let metaLength = 152
    private static let magic: UInt32 = 0xBEEF_C0DE

    /// Reads both meta pages and returns the newer; throws when the first does not carry LMDB's magic number.
    private static func readHeader(_ path: String, directory: String) throws(ToolError) -> Header? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ToolError("Cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard let first = readMeta(descriptor, at: 0), first.magic == magic else {
            throw ToolError("'\(directory)' is not a store: its data.mdb is not an LMDB data file")
        }
        guard first.pageSize > 0, let second = readMeta(descriptor, at: first.pageSize), second.magic == magic else {
            return first.header
        }
        return second.header.transactionID > first.header.transactionID ? second.header : first.header
    }

    private static func readMeta(_ descriptor: Int32, at offset: Int) -> (magic: UInt32, pageSize: Int, header: Header)?
    {
        var bytes = [UInt8](repeating: 0, count: metaLength)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, metaLength, off_t(offset)) }
        guard count == metaLength else { return nil }
        func integer(_ offset: Int, _ size: Int) -> Int {
            var value: UInt64 = 0
            for index in (offset..<offset + size).reversed() { value = value << 8 | UInt64(bytes[index]) }
            return Int(truncatingIfNeeded: value)
        }
        let pageSize = integer(pageSizeOffset, 4)
        let header = Header(
            mapSize: integer(mapSizeOffset, 8), pageSize: pageSize, transactionID: integer(transactionIDOffset, 8))
        return (UInt32(truncatingIfNeeded: integer(magicOffset, 4)), pageSize, header)
    }
}
