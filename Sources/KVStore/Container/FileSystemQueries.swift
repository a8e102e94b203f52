#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The two questions the container asks the file system directly. One of the module's few places with unsafe code
/// (ARCHITECTURE.md lists them). Invariant: each passes the address of a local value to a system call, which fills
/// it in before it returns and keeps nothing.
enum FileSystemQueries {
    /// Whether `path` is a directory (following symbolic links), or `nil` when nothing is there.
    static func isDirectory(_ path: String) -> Bool? {
        var status = stat()
        guard unsafe stat(path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT == S_IFDIR
    }

    /// The bytes an unprivileged writer may still use on the file system of `path`, or `nil` when it can't be told.
    static func availableBytes(_ path: String) -> Int? {
        var status = statvfs()
        guard unsafe statvfs(path, &status) == 0 else { return nil }
        return Int(status.f_bavail) * Int(status.f_frsize)
    }
}
