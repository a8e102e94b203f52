import LMDB

/// Why a store could not be inspected: the path holds no store, the store is not opened for safety, it is of a newer
/// format, or damaged where the inspection must read.
///
/// Match a kind with its static member, like `catch InspectionError.notAStore`; the error's ``message`` is a complete
/// sentence that says what happened and what to do. Problems that an integrity check finds in a store it can read are
/// not errors: they are the check's ``CheckProblem``s.
///
/// ```swift
/// do {
///     let report = try StoreInspection.check(path: path)
///     print(report.isConsistent ? "consistent" : "\(report.errors.count) errors")
/// } catch InspectionError.notAStore {
///     print("no store at \(path)")
/// }
/// ```
public struct InspectionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        let name: String

        /// The kind's name, such as `notAStore`.
        public var description: String { name }
    }

    /// The kind of failure.
    public let kind: Kind

    /// A sentence that says what happened and, where it helps, what to do.
    public let message: String

    /// For ``unreadable``, the damage the page check found where opening the store must read: the meta pages, the
    /// main table or the catalog. Empty for the other kinds, and when the LMDB binding refused the meta pages before
    /// the page check ran (a page size or last page LMDB would trust and crash on, a data file cut short): the
    /// message says what it found.
    public let pageDamage: [PageCheck.Problem]

    init(_ pattern: InspectionError, _ message: String, pageDamage: [PageCheck.Problem] = []) {
        kind = pattern.kind
        self.message = message
        self.pageDamage = pageDamage
    }

    private init(kind name: String) {
        kind = Kind(name: name)
        message = name
        pageDamage = []
    }

    /// Errors are equal when their kinds are.
    public static func == (lhs: InspectionError, rhs: InspectionError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// Matches any ``InspectionError`` of the same kind, so `catch InspectionError.notAStore` works.
    public static func ~= (pattern: InspectionError, value: any Error) -> Bool {
        (value as? InspectionError)?.kind == pattern.kind
    }

    /// The message.
    public var description: String { message }

    /// The path holds no store: it does not exist, is a file, has no `data.mdb`, or its `data.mdb` is not an LMDB
    /// file or holds no KVStore catalog.
    public static let notAStore = InspectionError(kind: "notAStore")

    /// The store is not opened, for safety: its `data.mdb` or `lock.mdb` is not a regular file of its own (a
    /// symbolic link, a hard link, a FIFO, a device), opening it would leave a lock file its owner cannot open, or
    /// the user may not open it.
    public static let refused = InspectionError(kind: "refused")

    /// The store was written by a newer KVStore format than this version reads.
    public static let newerFormat = InspectionError(kind: "newerFormat")

    /// The store's pages are damaged where opening it must read them (``pageDamage`` or the message says where):
    /// LMDB trusts its pages, and would crash or return garbage. Restore the store from a backup.
    public static let unreadable = InspectionError(kind: "unreadable")

    /// The store is damaged where an inspection reads it: a table its catalog names is missing or has the wrong
    /// flags, a record or catalog entry does not decode. The full integrity check reports such damage as problems.
    public static let damaged = InspectionError(kind: "damaged")

    /// The store has no entity, relationship, field or index that the inspection asks for; the message names those it
    /// has, or what is missing.
    public static let notFound = InspectionError(kind: "notFound")

    /// A program opened the store while it was read without a lock file (it had none): what was read may mix two
    /// states of the store. Run the inspection again.
    public static let changedWhileRead = InspectionError(kind: "changedWhileRead")

    /// A system call on the store's files failed; the message says which and why.
    public static let systemError = InspectionError(kind: "systemError")
}
