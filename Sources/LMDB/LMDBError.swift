import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error reported by LMDB, or by the binding before it calls LMDB.
///
/// The error carries LMDB's raw return code, which is either one of the `MDB_*` codes (negative numbers) or an
/// `errno` value, and the context it happened in: the operation, the environment's path, the table, and a detail
/// line when the binding knows more than the code says. Every call of the binding throws it (and those that take a
/// closure, what the closure throws); the calls are not `throws(LMDBError)`, since Swift 6.3.1 can crash compiling a
/// `catch LMDBError.notFound` that lets the other errors of a typed call through (swiftlang/swift#90582). Two errors
/// are equal when their codes are, so a static member works as a pattern:
///
/// ```swift
/// do {
///     try environment.write { txn in try txn.put(value, forKey: key, in: table, options: .noOverwrite) }
/// } catch LMDBError.keyExists {
///     // The key was already there.
/// }
/// ```
public struct LMDBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw return code: an `MDB_*` code or an `errno` value.
    public let code: Int32

    /// The LMDB function or binding operation that failed, such as `mdb_put`.
    public var operation: String?

    /// The path of the environment the error happened in.
    public var path: String?

    /// The name of the table the error happened in, or `"(main)"` for the unnamed table.
    public var table: String?

    /// What the binding knows beyond the code, such as the size of a key that was too long.
    public var detail: String?

    /// Creates an error from a raw return code.
    ///
    /// - Parameters:
    ///   - code: An `MDB_*` code or an `errno` value.
    ///   - operation: The operation that failed.
    ///   - path: The environment's path.
    ///   - table: The table's name.
    ///   - detail: A sentence that explains the failure further.
    public init(
        code: Int32,
        operation: String? = nil,
        path: String? = nil,
        table: String? = nil,
        detail: String? = nil
    ) {
        self.code = code
        self.operation = operation
        self.path = path
        self.table = table
        self.detail = detail
    }

    /// Errors are equal when their codes are; the context does not take part.
    public static func == (lhs: LMDBError, rhs: LMDBError) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code only, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// Matches any error that is an ``LMDBError`` with the same code, so `catch LMDBError.mapFull` works.
    public static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        guard let error = value as? LMDBError else { return false }
        return error.code == pattern.code
    }

    /// The symbolic name of the code, such as `MDB_MAP_FULL` or `ENOENT`, when it has one.
    public var name: String? {
        Self.names[code]
    }

    /// The message LMDB gives for the code, from `mdb_strerror`.
    ///
    /// The corresponding LMDB function is `mdb_strerror`.
    public var message: String {
        guard let text = unsafe mdb_strerror(code) else { return "unknown error \(code)" }
        return unsafe String(cString: text)
    }

    /// A one-line description: the code's name and message, then the context.
    ///
    /// For example: `MDB_MAP_FULL: Environment mapsize limit reached (mdb_put, table 'tasks', /data/store)`.
    public var description: String {
        // mdb_strerror already names the MDB_* codes ("MDB_KEYEXIST: Key/data pair already exists").
        let message = message
        var text = message.hasPrefix("MDB_") ? message : "\(name ?? "error \(code)"): \(message)"
        if let detail { text += ". " + detail }
        let context = [operation, table.map { "table '\($0)'" }, path].compactMap { $0 }
        if !context.isEmpty { text += " (" + context.joined(separator: ", ") + ")" }
        return text
    }

    /// Returns a copy with the missing context filled in from the arguments.
    func adding(operation: String? = nil, path: String? = nil, table: String? = nil) -> LMDBError {
        var copy = self
        if copy.operation == nil { copy.operation = operation }
        if copy.path == nil { copy.path = path }
        if copy.table == nil { copy.table = table }
        return copy
    }
}

// MARK: - LMDB codes

extension LMDBError {
    /// The key/data pair already exists (`MDB_KEYEXIST`).
    public static let keyExists = LMDBError(code: MDB_KEYEXIST)
    /// The key/data pair was not found (`MDB_NOTFOUND`).
    public static let notFound = LMDBError(code: MDB_NOTFOUND)
    /// A requested page was not found: the file is corrupt (`MDB_PAGE_NOTFOUND`).
    public static let pageNotFound = LMDBError(code: MDB_PAGE_NOTFOUND)
    /// The located page was the wrong type: the file is corrupt (`MDB_CORRUPTED`).
    public static let corrupted = LMDBError(code: MDB_CORRUPTED)
    /// An update failed with a fatal error: the environment must be closed (`MDB_PANIC`).
    public static let panic = LMDBError(code: MDB_PANIC)
    /// The environment was written by an incompatible version of LMDB (`MDB_VERSION_MISMATCH`).
    public static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    /// The file is not an LMDB data file (`MDB_INVALID`).
    public static let invalid = LMDBError(code: MDB_INVALID)
    /// The memory map is full (`MDB_MAP_FULL`). The binding grows the map by itself; this reaches callers only once
    /// the configured maximum size is reached.
    public static let mapFull = LMDBError(code: MDB_MAP_FULL)
    /// The environment's maximum number of named tables was reached (`MDB_DBS_FULL`).
    public static let tablesFull = LMDBError(code: MDB_DBS_FULL)
    /// The environment's maximum number of readers was reached (`MDB_READERS_FULL`).
    public static let readersFull = LMDBError(code: MDB_READERS_FULL)
    /// Too many thread-local storage keys are in use (`MDB_TLS_FULL`).
    public static let tlsFull = LMDBError(code: MDB_TLS_FULL)
    /// The transaction has too many dirty pages (`MDB_TXN_FULL`).
    public static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    /// A cursor stack is too deep: the file is probably corrupt (`MDB_CURSOR_FULL`).
    public static let cursorFull = LMDBError(code: MDB_CURSOR_FULL)
    /// A page has no more space (`MDB_PAGE_FULL`).
    public static let pageFull = LMDBError(code: MDB_PAGE_FULL)
    /// Another process grew the map beyond this environment's size (`MDB_MAP_RESIZED`). The binding adopts the new
    /// size by itself.
    public static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    /// The operation is incompatible with the table, or the table's flags differ from those asked for
    /// (`MDB_INCOMPATIBLE`).
    public static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)
    /// A reader slot is invalid (`MDB_BAD_RSLOT`).
    public static let badReaderSlot = LMDBError(code: MDB_BAD_RSLOT)
    /// The transaction must abort, has a child, or is invalid (`MDB_BAD_TXN`).
    public static let badTransaction = LMDBError(code: MDB_BAD_TXN)
    /// A key or value is empty or too long for where it is stored (`MDB_BAD_VALSIZE`).
    public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// The table handle was changed unexpectedly (`MDB_BAD_DBI`).
    public static let badTable = LMDBError(code: MDB_BAD_DBI)
}

// MARK: - errno values LMDB returns

extension LMDBError {
    /// No such file or directory (`ENOENT`).
    public static let noSuchFile = LMDBError(code: ENOENT)
    /// Permission denied, or a write in a read-only environment or transaction (`EACCES`).
    public static let accessDenied = LMDBError(code: EACCES)
    /// The operation is not permitted (`EPERM`).
    public static let notPermitted = LMDBError(code: EPERM)
    /// An invalid argument (`EINVAL`).
    public static let invalidArgument = LMDBError(code: EINVAL)
    /// Out of memory (`ENOMEM`).
    public static let outOfMemory = LMDBError(code: ENOMEM)
    /// No space left on the device (`ENOSPC`).
    public static let noSpace = LMDBError(code: ENOSPC)
    /// An input/output error (`EIO`).
    public static let ioError = LMDBError(code: EIO)
    /// The resource is temporarily unavailable, for example locked by another process (`EAGAIN`).
    public static let tryAgain = LMDBError(code: EAGAIN)
    /// The resource is busy (`EBUSY`).
    public static let busy = LMDBError(code: EBUSY)
    /// A path component that should be a directory is not one (`ENOTDIR`).
    public static let notDirectory = LMDBError(code: ENOTDIR)
    /// The path is a directory where a file was expected (`EISDIR`).
    public static let isDirectory = LMDBError(code: EISDIR)
    /// The file system is read-only (`EROFS`).
    public static let readOnlyFileSystem = LMDBError(code: EROFS)
    /// The file already exists (`EEXIST`).
    public static let fileExists = LMDBError(code: EEXIST)
    /// The environment was closed, so nothing more can be done with it (`EBADF`).
    public static let environmentClosed = LMDBError(code: EBADF)

    /// Symbolic names for the codes that have a static member.
    static let names: [Int32: String] = [
        MDB_KEYEXIST: "MDB_KEYEXIST", MDB_NOTFOUND: "MDB_NOTFOUND", MDB_PAGE_NOTFOUND: "MDB_PAGE_NOTFOUND",
        MDB_CORRUPTED: "MDB_CORRUPTED", MDB_PANIC: "MDB_PANIC", MDB_VERSION_MISMATCH: "MDB_VERSION_MISMATCH",
        MDB_INVALID: "MDB_INVALID", MDB_MAP_FULL: "MDB_MAP_FULL", MDB_DBS_FULL: "MDB_DBS_FULL",
        MDB_READERS_FULL: "MDB_READERS_FULL", MDB_TLS_FULL: "MDB_TLS_FULL", MDB_TXN_FULL: "MDB_TXN_FULL",
        MDB_CURSOR_FULL: "MDB_CURSOR_FULL", MDB_PAGE_FULL: "MDB_PAGE_FULL", MDB_MAP_RESIZED: "MDB_MAP_RESIZED",
        MDB_INCOMPATIBLE: "MDB_INCOMPATIBLE", MDB_BAD_RSLOT: "MDB_BAD_RSLOT", MDB_BAD_TXN: "MDB_BAD_TXN",
        MDB_BAD_VALSIZE: "MDB_BAD_VALSIZE", MDB_BAD_DBI: "MDB_BAD_DBI",
        ENOENT: "ENOENT", EACCES: "EACCES", EPERM: "EPERM", EINVAL: "EINVAL", ENOMEM: "ENOMEM", ENOSPC: "ENOSPC",
        EIO: "EIO", EAGAIN: "EAGAIN", EBUSY: "EBUSY", ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EROFS: "EROFS",
        EEXIST: "EEXIST", EBADF: "EBADF",
    ]
}

/// Throws an ``LMDBError`` for a non-zero LMDB return code.
@inline(__always)
func check(
    _ code: Int32,
    _ operation: @autoclosure () -> String,
    path: @autoclosure () -> String? = nil,
    table: @autoclosure () -> String? = nil
) throws(LMDBError) {
    if code != 0 {
        throw LMDBError(code: code, operation: operation(), path: path(), table: table())
    }
}
