import Foundation

/// A position in a store's persistent change history: the commit it names and everything before it.
///
/// Every commit to a store whose history is on (``ModelContainer/enableHistory(retention:)``) gets the next token,
/// one more than the last; `ModelContainer.history(after:)` returns the commits after a token. A token is `Codable`
/// and `Sendable`, and its ``description`` (`<store ID>:<position>`) reads back with ``init(_:)``, so a program can
/// keep it in a file, a row of its own store, or a command line:
///
/// ```swift
/// let entries = try container.history(after: savedToken)
/// for entry in entries { apply(entry) }
/// savedToken = entries.last?.token ?? savedToken
/// ```
///
/// A token names its store: the ID the store was given when its history was switched on, which a copy of the store
/// keeps. Reading another store's token throws ``KVStoreError/invalidHistoryToken``.
public struct HistoryToken: Codable, Sendable, Hashable, Comparable, CustomStringConvertible,
    LosslessStringConvertible
{
    /// The ID of the store's history: the store that gave the token.
    public let storeID: UUID
    /// The commit's position in the store's history: 1 for the first commit recorded, one more for each commit
    /// after it. The positions of pruned entries are not given again.
    public let position: UInt64

    /// A token of the store `storeID` at `position`.
    public init(storeID: UUID, position: UInt64) {
        self.storeID = storeID
        self.position = position
    }

    /// Reads a token's ``description``, `<store ID>:<position>`; `nil` for any other text.
    public init?(_ description: String) {
        let parts = description.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let storeID = UUID(uuidString: String(parts[0])),
            let position = UInt64(parts[1])
        else { return nil }
        self.init(storeID: storeID, position: position)
    }

    /// `<store ID>:<position>`, as in `5F0C1E2A-…:42`.
    public var description: String { "\(storeID.uuidString):\(position)" }

    /// Orders tokens by position; tokens of different stores order by store ID first, and do not compare meaningfully.
    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool {
        lhs.storeID == rhs.storeID
            ? lhs.position < rhs.position : lhs.storeID.uuidString < rhs.storeID.uuidString
    }
}

/// How much of its change history a store keeps.
///
/// Every commit that writes history first prunes the entries the policy no longer keeps, in the same transaction, so
/// history never grows the store without bound; ``ModelContainer/deleteHistory(before:)`` prunes by hand. The
/// default keeps the last 7 days.
public struct HistoryRetention: Codable, Sendable, Hashable {
    /// How long an entry is kept after its commit, in seconds; `nil` for no limit by age.
    public var maximumAge: TimeInterval?
    /// How many of the latest entries are kept; `nil` for no limit by count.
    public var maximumCount: Int?

    /// A policy that keeps entries for `maximumAge` seconds and at most `maximumCount` of them (either `nil` for no
    /// such limit).
    public init(maximumAge: TimeInterval? = 7 * 24 * 60 * 60, maximumCount: Int? = nil) {
        self.maximumAge = maximumAge
        self.maximumCount = maximumCount
    }

    /// The entries of the last 7 days.
    public static let `default` = HistoryRetention()

    /// Every entry, until ``ModelContainer/deleteHistory(before:)`` deletes it.
    public static let unlimited = HistoryRetention(maximumAge: nil, maximumCount: nil)
}

/// One commit in a store's persistent change history: when it was made, by whom, and what it changed.
///
/// ``changes`` lists the models the commit inserted, updated and deleted (cascades and `nullify` rewrites included),
/// with the same entries, in the same order, as the ``ChangeSet`` that observers of the committing container
/// received. A deleted model leaves a ``HistoryTombstone`` with the values its entity keeps on deletion
/// (``Entity/preservedOnDeletion``).
public struct HistoryEntry: Sendable, Hashable {
    /// The commit's token: read the commits after it with `history(after:)`.
    public let token: HistoryToken
    /// When the commit was made, by the clock of the process that made it.
    public let date: Date
    /// The author the context or configuration set (``ModelContext/author``,
    /// ``ModelConfiguration/historyAuthor``), or `nil`.
    public let author: String?
    /// Every model the commit changed, in the order it changed them.
    public let changes: [ChangeSet.Change]
    /// The deleted models, in the order of their changes, with the values their entities keep.
    public let tombstones: [HistoryTombstone]
    /// The container that committed it: a random number each container draws when it opens.
    let origin: UInt64
    /// The LMDB transaction that committed it, for the ``ChangeSet`` an observer receives.
    let transactionID: Int

    /// The IDs of the models inserted, by entity name.
    public var inserted: [String: Set<UUID>] { modelIDs { $0 == .inserted } }

    /// The IDs of the models that replaced a stored model with the same ID (rewrites by `nullify` rules included), by
    /// entity name.
    public var updated: [String: Set<UUID>] {
        modelIDs {
            switch $0 {
            case .updated, .nullified: true
            default: false
            }
        }
    }

    /// The IDs of the models deleted, by entity name, including those reached by `cascade` rules.
    public var deleted: [String: Set<UUID>] {
        modelIDs {
            switch $0 {
            case .deleted, .cascaded: true
            default: false
            }
        }
    }

    /// The entity names of the models the commit changed.
    public var entities: Set<String> { Set(changes.map(\.entity)) }

    private func modelIDs(_ matching: (ChangeSet.Change.Kind) -> Bool) -> [String: Set<UUID>] {
        var ids: [String: Set<UUID>] = [:]
        for change in changes where matching(change.kind) { ids[change.entity, default: []].insert(change.id) }
        return ids
    }

    init(
        token: HistoryToken, date: Date, author: String?, changes: [ChangeSet.Change], tombstones: [HistoryTombstone],
        origin: UInt64, transactionID: Int
    ) {
        self.token = token
        self.date = date
        self.author = author
        self.changes = changes
        self.tombstones = tombstones
        self.origin = origin
        self.transactionID = transactionID
    }
}

/// What a deleted model left in the change history: its entity, its ID, and the values of the fields its entity
/// keeps on deletion (SwiftData's `preserveValueOnDeletion`), so that a consumer can still tell what it was.
///
/// ```swift
/// static let entity = Entity<Task>(preservedOnDeletion: [\.title])
/// // ...
/// for tombstone in entry.tombstones where tombstone.entity == "Task" {
///     print("deleted:", try tombstone.value(of: "title", as: String.self) ?? "?")
/// }
/// ```
public struct HistoryTombstone: Sendable, Hashable {
    /// The deleted model's entity name.
    public let entity: String
    /// The deleted model's ID.
    public let id: UUID
    /// The model whose `cascade` rule deleted this one, or `nil` for a delete the commit asked for.
    public let cascadedFrom: ChangeSet.ModelID?
    /// The kept values, by field name, as the record format's value tree.
    let values: [String: RecordValue]

    /// The names of the kept fields the model had.
    public var fieldNames: [String] { values.keys.sorted() }

    /// The kept value of the field `name`, decoded as `type`; `nil` when the entity keeps no such field, or the model
    /// held `nil` there.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when the stored value does not decode as `type` (the `DecodingError`
    ///   is the ``KVStoreError/cause``).
    public func value<T: Decodable>(of name: String, as type: T.Type = T.self) throws -> T? {
        guard let value = values[name] else { return nil }
        if case .null = value { return nil }
        var fields = FieldTable()
        let record = RecordValue.object([(name: "value", value: value)]).encode(fields: &fields)
        do {
            return try record.withBorrowedBytes { bytes in
                try RecordDecoder().decode(KeptValue<T>.self, from: bytes, fields: fields).value
            }
        } catch {
            throw KVStoreError(
                .corruptRecord, entity: entity, id: id, field: name,
                message: "The value \(name) kept by the tombstone of \(entity) \(id) does not decode as \(T.self)",
                cause: error)
        }
    }

    /// The kept value of the attribute `keyPath` of the model type `M`; see ``value(of:as:)``.
    ///
    /// - Throws: What ``value(of:as:)`` throws.
    public func value<M: StoredModel, T: Decodable>(_ keyPath: KeyPath<M, T> & Sendable) throws -> T? {
        try value(of: ModelIndex<M>.fieldName(of: keyPath), as: T.self)
    }

    /// The kept value of the optional attribute `keyPath` of the model type `M`; see ``value(of:as:)``.
    ///
    /// - Throws: What ``value(of:as:)`` throws.
    public func value<M: StoredModel, T: Decodable>(_ keyPath: KeyPath<M, T?> & Sendable) throws -> T? {
        try value(of: ModelIndex<M>.fieldName(of: keyPath), as: T.self)
    }

    init(entity: String, id: UUID, cascadedFrom: ChangeSet.ModelID?, values: [String: RecordValue]) {
        self.entity = entity
        self.id = id
        self.cascadedFrom = cascadedFrom
        self.values = values
    }

    /// Whether two tombstones name the same model, cascaded from the same one, with the same kept values.
    public static func == (lhs: HistoryTombstone, rhs: HistoryTombstone) -> Bool {
        lhs.entity == rhs.entity && lhs.id == rhs.id && lhs.cascadedFrom == rhs.cascadedFrom
            && lhs.values == rhs.values
    }

    /// Hashes the entity and the ID.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        hasher.combine(id)
    }
}

/// The one-field record a tombstone's kept value decodes through.
private struct KeptValue<T: Decodable>: Decodable {
    let value: T?
}
