#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An LMDB data file read with `pread` at explicit offsets, never through a memory map: a read past the end of a
/// file returns fewer bytes, where a mapped read would raise SIGBUS.
final class DataFile {
    /// The outcome of one read.
    enum Read {
        /// All the bytes asked for.
        case bytes([UInt8])
        /// The file ends first; this many bytes were there.
        case short(Int)
        /// The read failed with this `errno`.
        case failed(Int32)
    }

    let descriptor: Int32
    let path: String
    /// The file's size when it was opened.
    let size: Int
    private let ownsDescriptor: Bool

    private init(descriptor: Int32, path: String, size: Int, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
        self.ownsDescriptor = ownsDescriptor
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Opens the data file at `path`, or `path/data.mdb` when `path` is a directory.
    ///
    /// - Throws: ``LMDBError`` with the system's code when the file cannot be opened, or ``LMDBError/invalidArgument``
    ///   when it is not a regular file (a FIFO or device would block or have no size).
    static func open(path: String) throws(LMDBError) -> DataFile {
        guard !path.isEmpty else {
            throw LMDBError(code: EINVAL, operation: "open", detail: "The path is empty")
        }
        let file = Path.fileType(path) == S_IFDIR ? path + "/data.mdb" : path
        // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is rejected below.
        let descriptor = systemOpen(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            throw LMDBError(
                code: code, operation: "open", path: file,
                detail: code == ENOENT ? "No such data file" : "Cannot open the data file")
        }
        do {
            return try DataFile(borrowing: descriptor, path: file, owning: true)
        } catch {
            systemClose(descriptor)
            throw error
        }
    }

    /// Wraps a descriptor that someone else keeps open, such as LMDB's own.
    ///
    /// - Throws: ``LMDBError`` when `fstat` fails or the descriptor is not a regular file.
    convenience init(borrowing descriptor: Int32, path: String, owning: Bool = false) throws(LMDBError) {
        var status = stat()
        guard unsafe fstat(descriptor, &status) == 0 else {
            throw LMDBError(code: errno, operation: "fstat", path: path, detail: "Cannot read the data file's size")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw LMDBError(code: EINVAL, operation: "open", path: path, detail: "The data file is not a regular file")
        }
        self.init(descriptor: descriptor, path: path, size: Int(status.st_size), ownsDescriptor: owning)
    }

    /// The file's size now, or `nil` when `fstat` fails.
    ///
    /// A file that a writer is growing is longer now than ``size`` says: a check that compares a meta page with the
    /// file's length reads the meta page first and the length after it, as a committed meta page's pages were all
    /// written before it.
    func currentSize() -> Int? {
        var status = stat()
        guard unsafe fstat(descriptor, &status) == 0 else { return nil }
        return Int(status.st_size)
    }

    /// Reads `count` bytes at `offset`. `count` must be small (a page at most): it is allocated at once.
    func read(at offset: Int, count: Int) -> Read {
        guard offset >= 0, count >= 0, offset <= Int.max - count else { return .short(0) }
        var failure: Int32 = 0
        var total = 0
        var bytes = [UInt8](repeating: 0, count: count)
        unsafe bytes.withUnsafeMutableBytes { buffer in
            while total < count, let base = buffer.baseAddress {
                let result = unsafe pread(descriptor, base + total, count - total, off_t(offset + total))
                if result > 0 {
                    total += result
                } else if result == 0 {
                    break
                } else if errno != EINTR {
                    failure = errno
                    break
                }
            }
        }
        if failure != 0 { return .failed(failure) }
        return total == count ? .bytes(bytes) : .short(total)
    }
}
