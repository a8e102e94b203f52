#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What is at a store's `lock.mdb`, checked right before LMDB opens it.
///
/// LMDB opens `lock.mdb` itself, for reading and writing, following a symbolic link and creating the file when it is
/// missing, and a process that opens the store alone resets it. So a `lock.mdb` planted as a symbolic link (or a hard
/// link) would have LMDB write to whatever it names, with kvtool's rights. kvtool looks at the path itself (`lstat`)
/// just before the open and refuses anything but a regular file with one link. This is a check, not a guarantee: a
/// user who can write the store's directory can swap the file between the check and LMDB's open.
package enum LockFile: Equatable {
    /// There is no lock file: no process has the store open (LMDB creates it at the first open and never removes
    /// it).
    case absent
    /// A regular file, owned by `owner`.
    case present(owner: uid_t)

    /// Checks `directory`'s `lock.mdb`.
    ///
    /// - Throws: ``InspectionError/refused`` when it is not a regular file or has other names,
    ///   ``InspectionError/systemError`` when it cannot be looked at.
    package static func check(in directory: String) throws(InspectionError) -> LockFile {
        let path = directory + "/lock.mdb"
        let status: stat
        switch FileKind.status(of: path) {
        case .success(let found): status = found
        case .failure(let failure) where failure.code == ENOENT: return .absent
        case .failure(let failure):
            throw InspectionError(.systemError, "Cannot look at '\(path)': \(SystemError.describe(failure.code))")
        }
        guard FileKind(mode: status.st_mode) == .regular else {
            throw InspectionError(
                .refused,
                "'\(directory)' has a lock.mdb that is \(FileKind.describe(path, status: status)), not a regular "
                    + "file; kvtool does not open a store through it, since LMDB would write through it")
        }
        guard status.st_nlink == 1 else {
            throw InspectionError(
                .refused,
                "'\(directory)' has a lock.mdb with \(status.st_nlink) hard links; kvtool does not open a store "
                    + "through it, since LMDB would write to the other names too")
        }
        return .present(owner: status.st_uid)
    }
}
