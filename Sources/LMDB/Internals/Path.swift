#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Path helpers for the environment registry, written against the C library since the binding uses no Foundation.
enum Path {
    /// The canonical spelling of `path`: absolute, with symbolic links, `.` and `..` resolved.
    ///
    /// A path that does not exist yet (a single-file environment about to be created) is resolved through its parent
    /// directory. When even that fails the absolute spelling is returned, and opening reports the real error.
    static func canonical(_ path: String) -> String {
        if let resolved = realPath(path) { return resolved }
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        guard let slash = absolute.lastIndex(of: "/") else { return absolute }
        let parent = slash == absolute.startIndex ? "/" : String(absolute[..<slash])
        let name = absolute[absolute.index(after: slash)...]
        guard let resolvedParent = realPath(parent), !name.isEmpty else { return absolute }
        return (resolvedParent == "/" ? "" : resolvedParent) + "/" + name
    }

    /// The kind of file at `path`, or `nil` when nothing is there.
    static func fileType(_ path: String) -> mode_t? {
        var info = stat()
        guard unsafe stat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = unsafe realpath(path, nil) else { return nil }
        defer { unsafe free(resolved) }
        return unsafe String(cString: resolved)
    }

    private static func currentDirectory() -> String {
        guard let cwd = unsafe getcwd(nil, 0) else { return "." }
        defer { unsafe free(cwd) }
        return unsafe String(cString: cwd)
    }
}
