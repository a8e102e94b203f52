import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension Environment {
    /// Lets the kernel take back the pages of the data file that this process read through the memory map, so that
    /// a walk of a large store does not keep the whole file in the process's resident memory.
    ///
    /// LMDB reads the data file through a shared mapping of the file: every page a transaction reads stays mapped
    /// into the process, and counts in its resident set, until the kernel needs the memory for something else. A tool
    /// that walks a whole store in chunks (an export, an import, an integrity check) calls this between chunks, so
    /// that its resident memory stays bounded by a chunk instead of growing with the store. The pages stay in the page
    /// cache, shared with every other reader, and the next read of one maps it again. Nothing is lost and nothing read
    /// is invalidated: the mapping is backed by the file (with ``Options/writeMap`` too, whose written pages are the
    /// page cache's), so memory a live transaction of another thread was handed reads the same bytes again.
    ///
    /// LMDB does not hand out the map's address (`me_mapaddr` is only set for a fixed map), so the mapping is found
    /// in `/proc/self/maps` by the data file's device and inode. Elsewhere than on Linux this does nothing.
    ///
    /// - Throws: ``LMDBError/environmentClosed`` after ``close()``, or an ``LMDBError`` with the `errno` of a failed
    ///   `fstat`, read of `/proc/self/maps` or `madvise`.
    ///
    /// The corresponding LMDB function is `mdb_env_get_fd`, and then `madvise(MADV_DONTNEED)`.
    public func releaseMappedPages() throws {
        try withOpenEnvironment("mdb_env_get_fd") {
            var descriptor: mdb_filehandle_t = -1
            try unsafe check(mdb_env_get_fd(handle, &descriptor), "mdb_env_get_fd", path: path)
            var status = stat()
            guard unsafe fstat(descriptor, &status) == 0 else {
                throw LMDBError(code: errno, operation: "fstat", path: path)
            }
            for range in try Self.mappings(device: UInt64(status.st_dev), inode: UInt64(status.st_ino), path: path) {
                guard let start = unsafe UnsafeMutableRawPointer(bitPattern: range.lowerBound) else { continue }
                guard unsafe madvise(start, range.count, MADV_DONTNEED) == 0 else {
                    throw LMDBError(
                        code: errno, operation: "madvise", path: path,
                        detail: "The kernel refused to take back the pages of the memory map")
                }
            }
        }
    }

    /// The address ranges of this process's mappings of the file with this device and inode.
    private static func mappings(device: UInt64, inode: UInt64, path: String) throws -> [Range<UInt>] {
        let maps = systemOpen("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard maps >= 0 else {
            // Not Linux, or no /proc: there is nothing to find the map by.
            if errno == ENOENT { return [] }
            throw LMDBError(code: errno, operation: "open /proc/self/maps", path: path)
        }
        defer { _ = systemClose(maps) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = unsafe buffer.withUnsafeMutableBytes { unsafe systemRead(maps, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw LMDBError(code: errno, operation: "read /proc/self/maps", path: path)
            }
            if count == 0 { break }
            text.append(contentsOf: buffer[0..<count])
        }
        // Lines are `start-end perms offset major:minor inode path`, numbers in hexadecimal but the inode; scanned in
        // place, since a process with many mappings has a long list.
        return unsafe text.withUnsafeBufferPointer { bytes in
            var ranges: [Range<UInt>] = []
            var position = 0
            while position < bytes.count {
                var cursor = unsafe MapsCursor(bytes: bytes, position: position)
                let start = cursor.number(radix: 16)
                cursor.skip(UInt8(ascii: "-"))
                let end = cursor.number(radix: 16)
                cursor.skipField()  // permissions
                cursor.skipField()  // offset
                let major = cursor.number(radix: 16)
                cursor.skip(UInt8(ascii: ":"))
                let minor = cursor.number(radix: 16)
                let fileInode = cursor.number(radix: 10)
                if fileInode == inode, deviceNumber(major: major, minor: minor) == device, end > start,
                    let lower = UInt(exactly: start), let upper = UInt(exactly: end)
                {
                    ranges.append(lower..<upper)
                }
                position = cursor.nextLine()
            }
            return ranges
        }
    }

    /// A device number as glibc's `makedev` encodes it.
    private static func deviceNumber(major: UInt64, minor: UInt64) -> UInt64 {
        ((major & 0xFFFF_F000) << 32) | ((major & 0xFFF) << 8) | ((minor & 0xFFFF_FF00) << 12) | (minor & 0xFF)
    }
}

/// Reads the fields of one line of `/proc/self/maps`.
///
/// `@safe`: it reads only within `bytes`, a buffer its caller keeps alive and in bounds for the cursor's use.
@safe
private struct MapsCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int

    /// The number at the cursor (0 when there is none), after any spaces.
    mutating func number(radix: UInt64) -> UInt64 {
        while unsafe position < bytes.count, unsafe bytes[position] == UInt8(ascii: " ") { position += 1 }
        var value: UInt64 = 0
        while unsafe position < bytes.count {
            let byte = unsafe bytes[position]
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = UInt64(byte - UInt8(ascii: "a") + 10)
            default: return value
            }
            value = value &* radix &+ digit
            position += 1
        }
        return value
    }

    /// Steps over `byte` if it is at the cursor.
    mutating func skip(_ byte: UInt8) {
        if unsafe position < bytes.count, unsafe bytes[position] == byte { position += 1 }
    }

    /// Steps over the spaces and then the field at the cursor.
    mutating func skipField() {
        while unsafe position < bytes.count, unsafe bytes[position] == UInt8(ascii: " ") { position += 1 }
        while unsafe position < bytes.count, unsafe bytes[position] != UInt8(ascii: " "),
            unsafe bytes[position] != UInt8(ascii: "\n")
        {
            position += 1
        }
    }

    /// The position after the end of the line.
    func nextLine() -> Int {
        var next = position
        while unsafe next < bytes.count, unsafe bytes[next] != UInt8(ascii: "\n") { next += 1 }
        return next + 1
    }
}
