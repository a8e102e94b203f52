import Foundation
import LMDB

extension ModelContainer {
    /// Throws ``KVStoreError/readOnly`` when the container was opened read-only or its store is a replica.
    ///
    /// - Parameter action: What the caller was about to do, for the message.
    func refuseWritesIfReadOnly(to action: String) throws {
        if let replica { throw replica.refusal(path: path, action: "a request to \(action)") }
        if configuration.isReadOnly {
            throw KVStoreError(
                .readOnly, message: "The container of \(path) was opened read-only; open it writable to \(action)")
        }
    }

    /// Turns binding errors into store errors that say what happened and what to do, keeping the binding's error as
    /// the cause.
    ///
    /// - A full disk is ``KVStoreError/diskFull``: LMDB reports a short write of its pages as `EIO` when the file
    ///   system ran out of space without setting `ENOSPC`, so an `EIO` on a file system with almost no space left
    ///   reads as a full disk too.
    /// - A missing or damaged page (`MDB_PAGE_NOTFOUND`, `MDB_CORRUPTED`) is ``KVStoreError/damaged``, naming the
    ///   table.
    /// - The rest is ``KVStoreError/storage``.
    static func mapped(_ error: any Error) -> any Error {
        guard let error = error as? LMDBError else { return error }
        let store = error.path.map { "the store at \($0)" } ?? "the store"
        let table = error.table.map { " (table '\($0)')" } ?? ""
        switch error.code {
        case EACCES where error.detail?.contains("read-only") == true:
            return KVStoreError(
                .readOnly,
                message: "The container was opened read-only (ModelConfiguration.isReadOnly); nothing was "
                    + "written", cause: error)
        case LMDBError.environmentClosed.code:
            return KVStoreError(.closed, message: "The container is closed", cause: error)
        case ENOSPC, EDQUOT:
            return diskFull(store, path: error.path, cause: error)
        case EIO where isNearlyFull(error.path):
            return diskFull(store, path: error.path, cause: error)
        case LMDBError.pageNotFound.code:
            return KVStoreError(
                .damaged,
                message: "The file of \(store) is damaged: a page\(table) points to a page the file does not have. "
                    + "Nothing was changed; run 'kvtool check \(error.path ?? "<store>")', and restore the store from a "
                    + "backup", cause: error)
        case LMDBError.corrupted.code:
            return KVStoreError(
                .damaged,
                message: "The file of \(store) is damaged\(table): \(error.detail ?? "a page does not check out"). "
                    + "Nothing was changed; run 'kvtool check \(error.path ?? "<store>")', and restore the store from a "
                    + "backup", cause: error)
        case LMDBError.mapFull.code:
            return KVStoreError(
                .storage,
                message: "\(store.prefix(1).uppercased() + store.dropFirst()) reached its largest size "
                    + "(ModelConfiguration.maximumMapSize); nothing of this write was written. Raise the maximum, or "
                    + "delete data", cause: error)
        case LMDBError.busy.code:
            return KVStoreError(
                .storage,
                message: "\(store.prefix(1).uppercased() + store.dropFirst()) cannot do this while the calling thread "
                    + "is inside one of its transactions (a read or write of one of its containers): end that "
                    + "transaction first", cause: error)
        case EIO:
            return KVStoreError(
                .storage,
                message: "Reading or writing the file of \(store) failed with an I/O error: the disk may be failing. "
                    + "Nothing of this write was written; check the system's log, then run 'kvtool check'",
                cause: error)
        default:
            return KVStoreError(.storage, message: "The storage engine failed on \(store)", cause: error)
        }
    }

    private static func diskFull(_ store: String, path: String?, cause: LMDBError) -> KVStoreError {
        let free = path.flatMap(FileSystemQueries.availableBytes).map { " (\($0) bytes free)" } ?? ""
        return KVStoreError(
            .diskFull,
            message: "The disk that holds \(store) is full\(free): this write was not made, and nothing committed "
                + "before it was lost. Free some space and try again", cause: cause)
    }

    /// Whether the file system of `path` has less than 16 MiB free: a short write there was a full disk.
    private static func isNearlyFull(_ path: String?) -> Bool {
        guard let path, let free = FileSystemQueries.availableBytes(path) else { return false }
        return free < 16 << 20
    }
}
