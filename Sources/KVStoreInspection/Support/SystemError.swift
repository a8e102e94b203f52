#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The words kvtool uses for a failed system call's `errno`, so that a message says what happened: a full disk reads
/// as a full disk, a closed pipe as a closed pipe.
package enum SystemError {
    /// What `code` means, with its symbolic name: `no space left on the device (ENOSPC): the disk is full`.
    ///
    /// - Parameters:
    ///   - code: An `errno` value.
    ///   - path: A file on the file system that was written, if any. An `EIO` there is described as a full disk when
    ///     that file system has (almost) no space left: LMDB reports a short write, which is how a disk that fills up
    ///     in the middle of a write shows, as `EIO`.
    package static func describe(_ code: Int32, writing path: String? = nil) -> String {
        switch code {
        case ENOSPC: return "no space left on the device (ENOSPC): the disk is full"
        case EDQUOT: return "the disk quota is used up (EDQUOT)"
        case EPIPE: return "the pipe's reader has gone (EPIPE: broken pipe)"
        case EFBIG: return "the file is too large for the file system (EFBIG)"
        case EROFS: return "the file system is read-only (EROFS)"
        case EACCES: return "permission denied (EACCES)"
        case EPERM: return "the operation is not permitted (EPERM)"
        case EBADF: return "it is not open for writing (EBADF)"
        case ENOENT: return "no such file or directory (ENOENT)"
        case ENOTDIR: return "a component of the path is not a directory (ENOTDIR)"
        case ELOOP: return "too many symbolic links, or a symbolic link where none may be (ELOOP)"
        case EIO:
            if let path, let free = freeBytes(onFileSystemOf: path), free < nearlyFull {
                return "no space left on the device: the disk is full (\(free) bytes free; the write failed with EIO)"
            }
            return "an input/output error (EIO): the device may be failing"
        default:
            return String(cString: strerror(code)) + " (errno \(code))"
        }
    }

    /// Below this many free bytes a file system counts as full.
    private static let nearlyFull = 1 << 20

    /// The bytes the current user may still write on the file system of `path` (or of its directory, when `path`
    /// does not exist), or `nil` when that cannot be told.
    package static func freeBytes(onFileSystemOf path: String) -> Int? {
        var status = statvfs()
        var target = path
        while statvfs(target, &status) != 0 {
            guard let slash = target.lastIndex(of: "/"), slash != target.startIndex else { return nil }
            target = String(target[..<slash])
        }
        // Root may use the blocks reserved for it; others only those available.
        let blocks = geteuid() == 0 ? status.f_bfree : status.f_bavail
        return Int(blocks) * Int(status.f_frsize)
    }
}
