#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory of a store and its `data.mdb`, checked before LMDB sees them, and the facts of the data file's
/// header that LMDB does not hand out.
///
/// Checking first gives precise messages for the usual mistakes (a wrong path, a file, an empty directory, a file
/// that is not LMDB), keeps LMDB from creating a lock file in a directory that holds no store, and refuses a
/// `data.mdb` that is not a regular file: a symbolic link, a FIFO (whose open would block), a device. The checks look
/// at the path itself (`lstat`, `O_NOFOLLOW`); they are checks, not a guarantee against someone who swaps the file
/// between them and LMDB's own open.
package struct DataFile {
    /// The store's directory.
    package let directory: String
    /// The size of `data.mdb` in bytes.
    package let fileSize: Int
    /// The user who owns `data.mdb`: the store's owner.
    package let owner: uid_t
    /// The header of the newest meta page, when it could be read.
    package let header: Header?

    /// What the newest of the two meta pages says.
    package struct Header {
        /// The map size the store was last committed with, in bytes.
        package var mapSize: Int
        /// The page size in bytes.
        package var pageSize: Int
        /// The ID of the last committed transaction.
        package var transactionID: Int
    }

    /// The path of the data file inside the directory.
    package var path: String {
        directory + "/data.mdb"
    }

    /// Checks that `directory` holds an LMDB data file, and reads its header.
    ///
    /// - Throws: ``InspectionError`` naming what is wrong: ``InspectionError/notAStore`` for no such path, a file
    ///   rather than a directory, a directory without `data.mdb`, or a `data.mdb` that is not an LMDB file (saying
    ///   what its first bytes are); ``InspectionError/refused`` for a `data.mdb` that is not a regular file;
    ///   ``InspectionError/systemError`` when the files cannot be looked at.
    package init(directory: String) throws(InspectionError) {
        self.directory = directory
        var status = stat()
        guard stat(directory, &status) == 0 else {
            if errno == ENOENT { throw InspectionError(.notAStore, "No such store: '\(directory)' does not exist") }
            throw InspectionError(.systemError, "Cannot read '\(directory)': \(SystemError.describe(errno))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw InspectionError(
                .notAStore, "'\(directory)' is a file, not a store: a store is a directory that holds data.mdb")
        }
        let dataPath = directory + "/data.mdb"
        switch FileKind.status(of: dataPath) {
        case .failure(let failure) where failure.code == ENOENT:
            throw InspectionError(.notAStore, "'\(directory)' is not a store: the directory holds no data.mdb")
        case .failure(let failure):
            throw InspectionError(.systemError, "Cannot read '\(dataPath)': \(SystemError.describe(failure.code))")
        case .success(let found):
            guard FileKind(mode: found.st_mode) == .regular else {
                throw InspectionError(
                    .refused,
                    "'\(directory)' is not a store kvtool opens: its data.mdb is "
                        + "\(FileKind.describe(dataPath, status: found)), not a regular file")
            }
            status = found
        }
        fileSize = Int(status.st_size)
        owner = status.st_uid
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
    private static func readHeader(_ path: String, directory: String) throws(InspectionError) -> Header? {
        // O_NONBLOCK: should a FIFO have replaced the file since the check, the open does not wait for a writer.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw InspectionError(.systemError, "Cannot read '\(path)': \(SystemError.describe(errno))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw InspectionError(
                .refused, "'\(directory)' is not a store kvtool opens: its data.mdb changed while kvtool looked at it")
        }
        guard let first = readMeta(descriptor, at: 0), first.magic == magic else {
            throw InspectionError(
                .notAStore, "'\(directory)' is not a store: its data.mdb \(foreignDescription(descriptor))")
        }
        guard first.pageSize > 0, let second = readMeta(descriptor, at: first.pageSize), second.magic == magic else {
            return first.header
        }
        return second.header.transactionID > first.header.transactionID ? second.header : first.header
    }

    /// What a data file without LMDB's magic number holds, for the message: empty, or its first bytes.
    private static func foreignDescription(_ descriptor: Int32) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return "is empty, with no LMDB environment" }
        var status = stat()
        let size = fstat(descriptor, &status) == 0 ? Int(status.st_size) : count
        let shown = bytes.prefix(count)
        let hex = shown.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
        // Printable ASCII as is, anything else as a dot, as hexdump -C shows bytes.
        let text = String(shown.map { (0x20..<0x7F).contains($0) ? Character(UnicodeScalar($0)) : "." })
        let bytesText = "its first bytes are \(hex) (\"\(text)\")"
        if size < metaLength {
            return "is not an LMDB file: it is \(Formatting.count(size, "byte")) long, too short for one, and "
                + bytesText
        }
        return "is not an LMDB file: " + bytesText
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
