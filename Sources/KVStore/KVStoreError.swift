import Foundation
import LMDB

/// An error of the object store: what happened, to which entity, model and field, and what to do.
///
/// Match a kind with its static member, like `catch KVStoreError.uniqueViolation`; the error's ``description`` is a
/// complete sentence for logs and users. The error underneath, when there is one, is kept as ``cause``, so a caller
/// can match it too:
///
/// ```swift
/// do {
///     try context.save()
/// } catch let error as KVStoreError where error.cause is DecodingError {
///     // A model's encoding or decoding failed: error.cause says where.
/// }
/// ```
public struct KVStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        let name: String

        /// The kind's name, such as `uniqueViolation`.
        public var description: String { name }
    }

    /// The kind of failure.
    public let kind: Kind

    /// The entity involved, when there is one.
    public var entity: String?

    /// The ID of the model involved, when there is one.
    public var id: UUID?

    /// The field or fields involved, when there are any.
    public var field: String?

    /// A sentence that says what happened and what to do.
    public var message: String

    /// The error underneath, when there is one: the `LMDBError` of a failed storage call (a ``diskFull`` error keeps
    /// LMDB's `ENOSPC`, a full map `LMDBError.mapFull`), the `DecodingError` of a record that does not decode, the
    /// error a model's encoding or a migration stage threw.
    ///
    /// It is the error itself, so patterns and casts reach it: `if let cause = error.cause, case LMDBError.mapFull =
    /// cause`, or `(error.cause as? LMDBError)?.code`. It takes no part in equality and hashing, which compare the
    /// ``kind`` alone.
    public var cause: (any Error)?

    /// The description of the error underneath, when there is one.
    @available(
        *, deprecated, renamed: "cause",
        message: "cause keeps the error itself, which catch and as? can match; this is its description"
    )
    public var underlying: String? {
        get { cause.map { String(describing: $0) } }
        set { cause = newValue.map(DescribedCause.init) }
    }

    /// For a batch write that failed part-way, how many models its earlier chunks committed; the caller can resume
    /// after them.
    public var committedCount: Int?

    package init(
        _ pattern: KVStoreError,
        entity: String? = nil,
        id: UUID? = nil,
        field: String? = nil,
        message: String,
        cause: (any Error)? = nil
    ) {
        self.kind = pattern.kind
        self.entity = entity
        self.id = id
        self.field = field
        self.message = message
        self.cause = cause
    }

    private init(kind name: String) {
        kind = Kind(name: name)
        message = name
    }

    /// Errors are equal when their kinds are; the context and the ``cause`` do not take part.
    public static func == (lhs: KVStoreError, rhs: KVStoreError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// Matches any ``KVStoreError`` of the same kind, so `catch KVStoreError.corruptRecord` works.
    public static func ~= (pattern: KVStoreError, value: any Error) -> Bool {
        (value as? KVStoreError)?.kind == pattern.kind
    }

    /// The message, then the error underneath.
    public var description: String {
        let text = cause.map { "\(message) (\($0))" } ?? message
        return committedCount.map { "\(text); \($0) models were committed before the failure" } ?? text
    }

    /// A stored record's bytes do not decode: the store is damaged, or was written by an incompatible model.
    public static let corruptRecord = KVStoreError(kind: "corruptRecord")
    /// A save would give two models the same value of a unique attribute. Nothing of that save was written.
    public static let uniqueViolation = KVStoreError(kind: "uniqueViolation")
    /// The model no longer matches the stored data (a field's type changed, a new field is not optional).
    public static let incompatibleSchema = KVStoreError(kind: "incompatibleSchema")
    /// The store was written by a newer format version of KVStore.
    public static let newerFormat = KVStoreError(kind: "newerFormat")
    /// The model type is not part of the container's schema.
    public static let unknownEntity = KVStoreError(kind: "unknownEntity")
    /// A model or entity description is invalid.
    public static let invalidModel = KVStoreError(kind: "invalidModel")
    /// The container or context was closed.
    public static let closed = KVStoreError(kind: "closed")
    /// A model could not be encoded.
    public static let encodingFailed = KVStoreError(kind: "encodingFailed")
    /// The storage engine failed; ``cause`` holds LMDB's error.
    public static let storage = KVStoreError(kind: "storage")
    /// A delete was refused by a `.deny` relationship whose related models exist. Nothing of that save was written.
    public static let deleteDenied = KVStoreError(kind: "deleteDenied")
    /// A saved model references an ID that no model has, through a relationship that does not allow it.
    public static let missingReference = KVStoreError(kind: "missingReference")
    /// Relationship declarations that do not fit together, found when the container opens.
    public static let invalidRelationship = KVStoreError(kind: "invalidRelationship")

    /// The store's schema version has no migration path to the version the program opens it with; the message names
    /// both versions.
    public static let noMigrationPath = KVStoreError(kind: "noMigrationPath")

    /// A migration stopped: a custom stage's closure threw, or a stored record does not read as the stage's old
    /// model. Nothing of the failing chunk was written; the next open with the plan resumes at that chunk.
    public static let migrationFailed = KVStoreError(kind: "migrationFailed")

    /// The store is part-way through a migration: the program opened it without the plan that started it, or a write
    /// waited longer than ``ModelConfiguration/migrationWaitTimeout`` for another process's migration to end. The
    /// message names the migration's versions.
    public static let migrationInProgress = KVStoreError(kind: "migrationInProgress")

    /// The store's schema changed under this container: another process, or another container, migrated it to
    /// another version, or removed an entity or an index that this container's models declare. The message names
    /// both versions, or what was removed. Nothing of the failing write was written; reopen the store with the models
    /// that match it.
    public static let schemaChanged = KVStoreError(kind: "schemaChanged")

    /// The store's file is damaged: a table its catalog names is missing, a page or a checksum does not check out.
    /// The message says where, and to run `kvtool check`.
    public static let damaged = KVStoreError(kind: "damaged")

    /// The disk is full: the write was not made, and nothing committed before it was lost. Free space and retry.
    public static let diskFull = KVStoreError(kind: "diskFull")

    /// The container was opened read-only (``ModelConfiguration/isReadOnly``): it writes nothing, so a write, or an
    /// open that would need one (a new index, a migration), is refused. The message says what would have been written.
    public static let readOnly = KVStoreError(kind: "readOnly")

    /// A ``SchemaMigrationPlan`` does not hold together: a version listed twice, a stage between versions it does
    /// not list, a custom migration of a model type that is not part of its stage's schemas.
    public static let invalidMigrationPlan = KVStoreError(kind: "invalidMigrationPlan")

    /// An external value's chunks are missing or of the wrong size: the value was replaced or deleted while it was
    /// read, or the store is damaged.
    public static let missingExternalData = KVStoreError(kind: "missingExternalData")
    /// An operation names a model that is not stored, such as reading or streaming an external value of a model
    /// that was never saved or was deleted.
    public static let modelNotFound = KVStoreError(kind: "modelNotFound")
    /// An aggregate's integer sum does not fit the attribute's type: aggregate a wider type, such as a computed
    /// property that converts the attribute to `Int64` or `Double`.
    public static let overflow = KVStoreError(kind: "overflow")
    /// A continuation cannot resume the listing it is given to: it was made for another entity or descriptor, before
    /// the store's schema was migrated, or is not a continuation at all. Start the listing again.
    public static let invalidContinuation = KVStoreError(kind: "invalidContinuation")
    /// The store records no change history: switch it on with ``ModelContainer/enableHistory(retention:)``.
    public static let historyNotEnabled = KVStoreError(kind: "historyNotEnabled")
    /// The history after a token was pruned (by the retention policy or ``ModelContainer/deleteHistory(before:)``):
    /// the changes since that token cannot be read. Read the models again, and go on from the current token.
    public static let historyExpired = KVStoreError(kind: "historyExpired")
    /// A history token that this store did not give: another store's, one from a history switched off since, one past
    /// the store's last commit (a store restored from an older copy), or text that is not a token.
    public static let invalidHistoryToken = KVStoreError(kind: "invalidHistoryToken")
}

/// A cause set through the deprecated ``KVStoreError/underlying`` spelling, which only ever had a description.
private struct DescribedCause: Error, CustomStringConvertible {
    let description: String
}
