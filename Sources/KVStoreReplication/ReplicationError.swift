/// What went wrong while publishing a store's history to its stream or applying a stream to a replica.
///
/// Errors of the connection (`NATSError`, `JetStreamError`) and of the store
/// (`KVStoreError`) are thrown as they are; this type says what replication itself found. Each message says
/// what happened and what to do. Match a kind with `catch ReplicationError.diverged`.
public struct ReplicationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The stream and the store disagree on the history: the stream holds a commit the store's history does not
        /// have (a primary restored from an older copy, or two primaries publishing to one stream), or another store's
        /// history. Nothing was published or applied.
        case diverged
        /// The store's history no longer holds the commits the stream needs next (pruned by its retention while the
        /// publisher could not publish), or the stream no longer holds those a replica needs (pruned by the stream's
        /// limits): the replica must be bootstrapped again from a copy of the primary.
        case historyGap
        /// The store records no change history, which replication needs; switch it on with
        /// `ModelContainer.enableHistory(retention:)`.
        case historyNotEnabled
        /// The store is not what this operation needs: a replica of another stream, a replica to publish from, or a
        /// primary to make a replica of.
        case wrongStore
        /// A message of the stream does not decode: it was not written by a KVStore publisher, or it is damaged.
        case invalidMessage
        /// Something the store holds cannot be replicated: a record larger than the stream's largest message.
        case unsupported
    }

    /// The kind of failure.
    public let kind: Kind
    /// What happened and what to do.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// Matches an error of the kind of `pattern`, for `catch ReplicationError.diverged`.
    public static func ~= (pattern: ReplicationError, value: any Error) -> Bool {
        (value as? ReplicationError)?.kind == pattern.kind
    }

    /// A pattern for errors of kind ``Kind/diverged``.
    public static let diverged = ReplicationError(.diverged, "")
    /// A pattern for errors of kind ``Kind/historyGap``.
    public static let historyGap = ReplicationError(.historyGap, "")
    /// A pattern for errors of kind ``Kind/historyNotEnabled``.
    public static let historyNotEnabled = ReplicationError(.historyNotEnabled, "")
    /// A pattern for errors of kind ``Kind/wrongStore``.
    public static let wrongStore = ReplicationError(.wrongStore, "")
    /// A pattern for errors of kind ``Kind/invalidMessage``.
    public static let invalidMessage = ReplicationError(.invalidMessage, "")
    /// A pattern for errors of kind ``Kind/unsupported``.
    public static let unsupported = ReplicationError(.unsupported, "")
}
