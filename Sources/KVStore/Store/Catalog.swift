import Foundation
import LMDB

/// The layout of a store and its self-description, kept in the `catalog` table.
///
/// | table | key | value |
/// |---|---|---|
/// | `catalog` | `format` | ``StoreFormat`` as JSON |
/// | `catalog` | `generation` | 8-byte big-endian counter that every other change to the catalog advances |
/// | `catalog` | `schema` | ``SchemaState`` as JSON: schema version, migration under way, migrations applied |
/// | `catalog` | `entity/<Entity>` | ``EntityCatalog`` as JSON: field names and ids, indexes |
/// | `records/<Entity>` | 16-byte UUID | encoded record |
/// | `index/<Entity>/<index>` | order-preserving key | 16-byte UUID (`dupSort`, `dupFixed`; plain when unique) |
/// | `external/<Entity>` | owner UUID, field id, value UUID, chunk number (big-endian) | one chunk of an external value |
/// | `checksums/<Entity>` | a chunk's key | the chunk's CRC-32C, 4 bytes little-endian |
/// | `staging/<Entity>` | owner UUID, field id, value UUID | writer's process ID and lock token: a streamed value whose write is not finished |
/// | `catalog` | `history` | ``HistoryCatalog`` as JSON, while the store records its change history |
/// | `history` | position (8 bytes big-endian), or 8 zero bytes for the counter | a history entry (``HistoryTable``) |
///
/// Everything `kvtool` needs to read a store without the program's Swift types is here.
package enum Catalog {
    /// The newest format this version of KVStore reads and writes: 4, whose writers record a history entry with every
    /// commit once the catalog has a `history` entry (``HistoryCatalog``); 3, whose field tables may give a top-level
    /// field that a migration renamed a name of its own (``FieldTable/topLevelNames``), and whose unique indexes may
    /// merge a new model into the stored one on conflict (``IndexCatalog/onConflict``).
    ///
    /// A store gets format 4 when its history is first switched on (``historyFormatVersion``).
    ///
    /// A store gets format ``newStoreFormatVersion`` (2) when it is created, or when a container upgrades a format 1
    /// store (without checksums) in place, and format 3 when an entity entry that needs it is first written (the
    /// `write` that takes an ``EntityCatalog``): programs that read format 2 at most go on opening every store no
    /// migration renamed a field of.
    package static let formatVersion = 4

    /// The format of a new store, and of a format 1 store once upgraded: 2, with checksums on records, external
    /// chunks and catalog entries.
    package static let newStoreFormatVersion = 2

    /// The format a store needs once a field table gives top-level fields names of their own, or a unique index
    /// merges on conflict: a program that reads format 2 at most would read those fields under their old names, and
    /// drop the new ones when it next wrote the table, or refuse a save that every other writer merges.
    static let topLevelNamesFormatVersion = 3

    /// The name of the catalog table.
    package static let tableName = "catalog"

    /// The catalog key of the store's format.
    package static let formatKey = Array("format".utf8)

    /// The catalog key of the store's schema generation.
    ///
    /// Every write to any other catalog entry advances it in the same transaction, so one read of 8 bytes tells a
    /// process or container whether the schema (an entity, an index, a field name, the version, a migration) changed
    /// since it last looked.
    package static let generationKey = Array("generation".utf8)

    /// The catalog key of an entity's description.
    package static func entityKey(_ entity: String) -> [UInt8] {
        Array("entity/\(entity)".utf8)
    }

    /// The prefix of every entity key, for listing the entities.
    package static let entityKeyPrefix = Array("entity/".utf8)

    /// The name of an entity's record table.
    package static func recordTableName(_ entity: String) -> String {
        "records/\(entity)"
    }

    /// The name of an index's table.
    package static func indexTableName(_ entity: String, _ index: String) -> String {
        "index/\(entity)/\(index)"
    }

    /// The name of the table of an entity's external values, in chunks.
    package static func externalTableName(_ entity: String) -> String {
        "external/\(entity)"
    }

    /// The name of the table of the checksums of an entity's external chunks.
    package static func checksumTableName(_ entity: String) -> String {
        "checksums/\(entity)"
    }

    /// The name of the table that lists an entity's streamed values whose write has not finished.
    package static func stagingTableName(_ entity: String) -> String {
        "staging/\(entity)"
    }

    /// The options of an index table: several models per key unless the index is unique.
    package static func indexTableOptions(unique: Bool) -> Table.Options {
        unique ? [] : [.dupSort, .dupFixed]
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// The byte that starts a catalog value with a checksum: the value is this byte, the little-endian CRC-32C of the
    /// JSON, then the JSON. Values written before checksums are the JSON alone, and start with `{`.
    static let checkedValueMarker: UInt8 = 0xC5

    /// The bytes of a catalog value: the marker, the JSON's checksum, the JSON.
    static func encodeValue<T: Encodable>(_ value: T) throws -> [UInt8] {
        let json = try encoder.encode(value)
        var bytes: [UInt8] = [checkedValueMarker]
        bytes.reserveCapacity(json.count + 5)
        bytes.appendBytes(of: Checksum.crc32c(Array(json)).littleEndian)
        bytes.append(contentsOf: json)
        return bytes
    }

    /// The JSON of a catalog value, once its checksum matches; a value written before checksums is all JSON.
    ///
    /// - Throws: ``KVStoreError/damaged`` naming the entry when the checksum does not match, or the value is neither.
    static func json(of bytes: BorrowedBytes, key: [UInt8]) throws -> BorrowedBytes {
        if bytes.first == UInt8(ascii: "{") { return bytes }
        guard bytes.count >= 5, bytes[0] == checkedValueMarker else {
            throw damagedEntry(key, "it is not a catalog value")
        }
        let json = bytes.extracting(5...)
        guard Checksum.crc32c(json) == UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 1, as: UInt32.self))
        else { throw damagedEntry(key, "its checksum does not match its bytes") }
        return json
    }

    /// Decodes a catalog value read from the table.
    ///
    /// - Throws: ``KVStoreError/damaged`` naming the entry.
    static func decodeValue<T: Decodable>(_ type: T.Type, from bytes: BorrowedBytes, key: [UInt8]) throws -> T {
        let json = try json(of: bytes, key: key)
        do {
            return try decoder.decode(T.self, from: Data(json))
        } catch {
            throw damagedEntry(key, "it does not decode", cause: error)
        }
    }

    private static func damagedEntry(_ key: [UInt8], _ reason: String, cause: (any Error)? = nil) -> KVStoreError {
        KVStoreError(
            .damaged,
            message: "The catalog entry '\(String(decoding: key, as: UTF8.self))' is damaged: \(reason). Nothing was "
                + "changed; run 'kvtool check', and restore the store from a backup", cause: cause)
    }

    /// Decodes a catalog value's stored bytes (another store's, as a replica receives them).
    ///
    /// - Throws: ``KVStoreError/damaged`` naming the entry when it does not check out or decode.
    package static func decodeStored<T: Decodable>(_ type: T.Type, bytes: [UInt8], key: [UInt8]) throws -> T {
        try bytes.withBorrowedBytes { try decodeValue(T.self, from: $0, key: key) }
    }

    /// Reads a catalog value.
    ///
    /// - Throws: ``KVStoreError/damaged`` naming the entry when it does not check out or decode.
    package static func read<T: Decodable>(
        _ type: T.Type, key: [UInt8], in txn: borrowing Transaction, table: Table
    )
        throws -> T?
    {
        try txn.withBytes(forKey: key, in: table) { bytes in
            try bytes.map { try decodeValue(T.self, from: $0, key: key) }
        }
    }

    /// Writes a catalog value, and advances the store's generation.
    ///
    /// - Throws: What encoding the value and LMDB throw.
    package static func write<T: Encodable>(
        _ value: T, key: [UInt8], in txn: borrowing Transaction, table: Table
    ) throws {
        try put(try encodeValue(value), key: key, in: txn, table: table)
    }

    /// Writes an entity's entry, and advances the store's generation; first stamps the store with format 3 when the
    /// entry's field table gives top-level fields names of their own, or one of its unique indexes merges on
    /// conflict, and the store's format is older (see ``topLevelNamesFormatVersion``).
    ///
    /// - Throws: ``KVStoreError/damaged`` for a format entry that does not decode, and what encoding the entry and
    ///   LMDB throw.
    package static func write(
        _ entry: EntityCatalog, key: [UInt8], in txn: borrowing Transaction, table: Table
    ) throws {
        if !entry.fields.topLevelNames.isEmpty || entry.indexes.contains(where: { $0.onConflict != .fail }),
            var format = try read(StoreFormat.self, key: formatKey, in: txn, table: table),
            format.formatVersion < topLevelNamesFormatVersion
        {
            format.formatVersion = topLevelNamesFormatVersion
            try put(try encodeValue(format), key: formatKey, in: txn, table: table)
        }
        try put(try encodeValue(entry), key: key, in: txn, table: table)
    }

    /// Puts a catalog value's bytes, and advances the store's generation.
    private static func put(_ bytes: [UInt8], key: [UInt8], in txn: borrowing Transaction, table: Table) throws {
        try txn.put(bytes, forKey: key, in: table)
        try advanceGeneration(in: txn, table: table)
    }

    /// Puts a catalog value's bytes as another store's catalog holds them (a replica's copy of its primary's), after
    /// checking them, without advancing the generation: the caller advances it once for all its entries with
    /// ``advanceGeneration(in:table:)``.
    ///
    /// - Throws: ``KVStoreError/damaged`` for a value that does not check out, and what LMDB throws.
    package static func putCopy(_ bytes: [UInt8], key: [UInt8], in txn: borrowing Transaction, table: Table) throws {
        if key != generationKey { _ = try bytes.withBorrowedBytes { try json(of: $0, key: key) } }
        try txn.put(bytes, forKey: key, in: table)
    }

    /// Deletes a catalog entry, and advances the store's generation.
    package static func delete(key: [UInt8], in txn: borrowing Transaction, table: Table) throws {
        if try txn.delete(forKey: key, in: table) { try advanceGeneration(in: txn, table: table) }
    }

    /// The store's schema generation as `txn` sees it: 0 for a store that never recorded one.
    ///
    /// - Throws: ``KVStoreError/corruptRecord`` when the entry is not 8 bytes long.
    package static func generation(in txn: borrowing Transaction, table: Table) throws -> UInt64 {
        try txn.withBytes(forKey: generationKey, in: table) { bytes -> UInt64 in
            guard let bytes else { return 0 }
            guard bytes.count == 8 else {
                throw KVStoreError(
                    .damaged,
                    message:
                        "The catalog's generation entry is \(bytes.count) bytes long, not 8: the store is damaged; "
                        + "run 'kvtool check'")
            }
            return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        }
    }

    /// Advances the store's generation, which tells every container that the catalog changed.
    ///
    /// - Throws: ``KVStoreError/damaged`` for a generation entry that is not 8 bytes, and what LMDB throws.
    package static func advanceGeneration(in txn: borrowing Transaction, table: Table) throws {
        let next = try generation(in: txn, table: table) &+ 1
        try withBorrowedBytes(of: next.bigEndian) { try txn.put($0, forKey: generationKey, in: table) }
    }
}

/// The `format` entry of the catalog.
package struct StoreFormat: Codable, Sendable, Equatable {
    /// The format version that wrote the store.
    package var formatVersion: Int
    /// When the store was created.
    package var created: Date
    /// How the store completes index keys that LMDB's limit cuts; `nil` for the standard hash.
    package var longKeyHash: LongKeyHash? = nil
}

/// An entity's description in the catalog.
package struct EntityCatalog: Codable, Sendable, Equatable {
    /// The entity's name.
    package var name: String
    /// The field names (of the model and of nested values) with their ids and first-seen kinds.
    package var fields: FieldTable
    /// The entity's indexes.
    package var indexes: [IndexCatalog]
    /// The entity's relationships; stores written before relationships existed have none.
    package var relationships: [RelationshipCatalog]
    /// The fields kept in external storage; stores written before external storage existed have none.
    package var external: [ExternalFieldCatalog]
    /// The names of indexes removed by a program that declared their removal (``Entity/removedIndexes``): no writer
    /// maintains them any more, and a program that still declares one is refused rather than building it again.
    package var removedIndexes: [String]
    /// The fields a deleted model's history tombstone keeps (``Entity/preservedOnDeletion``): those every program
    /// that opened the store declared.
    package var preservedOnDeletion: [String] = []

    init(
        name: String,
        fields: FieldTable,
        indexes: [IndexCatalog],
        relationships: [RelationshipCatalog] = [],
        external: [ExternalFieldCatalog] = [],
        removedIndexes: [String] = []
    ) {
        self.name = name
        self.fields = fields
        self.indexes = indexes
        self.relationships = relationships
        self.external = external
        self.removedIndexes = removedIndexes
    }

    private enum CodingKeys: String, CodingKey {
        case name, fields, indexes, relationships, external, removedIndexes, preservedOnDeletion
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        fields = try container.decode(FieldTable.self, forKey: .fields)
        indexes = try container.decode([IndexCatalog].self, forKey: .indexes)
        relationships = try container.decodeIfPresent([RelationshipCatalog].self, forKey: .relationships) ?? []
        external = try container.decodeIfPresent([ExternalFieldCatalog].self, forKey: .external) ?? []
        removedIndexes = try container.decodeIfPresent([String].self, forKey: .removedIndexes) ?? []
        preservedOnDeletion = try container.decodeIfPresent([String].self, forKey: .preservedOnDeletion) ?? []
    }

    /// Writes the entry, leaving out `external`, `removedIndexes` and `preservedOnDeletion` when they are empty, so
    /// that the entries of entities without them read as before.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(fields, forKey: .fields)
        try container.encode(indexes, forKey: .indexes)
        try container.encode(relationships, forKey: .relationships)
        if !external.isEmpty { try container.encode(external, forKey: .external) }
        if !removedIndexes.isEmpty { try container.encode(removedIndexes, forKey: .removedIndexes) }
        if !preservedOnDeletion.isEmpty {
            try container.encode(preservedOnDeletion, forKey: .preservedOnDeletion)
        }
    }
}

/// An external field's description in the catalog: its values are in the `external/<Entity>` table, in chunks, and
/// the record holds a descriptor `{"id": value UUID, "size": bytes, "chunkSize": bytes}`.
package struct ExternalFieldCatalog: Codable, Sendable, Equatable {
    /// The field's name.
    package var name: String
    /// The field's id, the second part of its chunks' keys.
    package var fieldID: UInt32
}

/// A relationship's description in the catalog.
///
/// A relationship is stored on one side only: the side with ``field`` holds the related IDs (a `UUID?` field for
/// to-one, a `[UUID]` field for many-to-many); the other side (``field`` `nil`) is derived through the index on the
/// inverse's field, which has the inverse field's name.
package struct RelationshipCatalog: Codable, Sendable, Equatable {
    /// The relationship's name, such as `project` or `tasks`.
    package var name: String
    /// The entity on the other side.
    package var target: String
    /// The name of the inverse relationship on the target, if declared.
    package var inverse: String?
    /// `toOne` or `toMany`: the raw value of a ``Cardinality``, kept as text so that an entry of a newer version
    /// with another cardinality still decodes (``knownCardinality`` is then `nil`).
    package var cardinality: String
    /// The field of this entity that holds the related IDs, or `nil` when the target's inverse field does.
    package var field: String?
    /// For a derived side (``field`` `nil`), the target's field that holds this entity's IDs; stores written before
    /// it was recorded have `nil`.
    package var inverseField: String?
    /// What deleting a model of this entity does to the related ones: `cascade`, `nullify`, `deny` or `noAction`.
    package var deleteRule: String
    /// Whether a stored ID may name a model that does not exist.
    package var allowsDangling: Bool

    /// How many models a relationship relates, as the catalog names it.
    package enum Cardinality: String, Sendable, CaseIterable {
        /// At most one: a `UUID?` field.
        case toOne
        /// Any number: a `[UUID]` field, or the derived side of a one-to-many.
        case toMany
    }

    /// The cardinality, or `nil` when the entry names one this version does not know.
    package var knownCardinality: Cardinality? {
        Cardinality(rawValue: cardinality)
    }

    /// The delete rule, or `nil` when the entry names one this version does not know.
    package var knownDeleteRule: DeleteRule? {
        DeleteRule(rawValue: deleteRule)
    }
}

/// An index's description in the catalog.
package struct IndexCatalog: Codable, Sendable, Equatable {
    /// The index's name.
    package var name: String
    /// The indexed fields, in key order.
    package var fields: [String]
    /// Whether at most one model may have each key.
    package var isUnique: Bool
    /// What saving a new model with a key another model holds does, for a unique index; stored only when it is not
    /// `.fail`, so that entries written before it existed read as `.fail`.
    package var onConflict: UniqueConflictPolicy
    /// Whether each element of an array field has its own entry.
    package var isMultiEntry: Bool
    /// Whether the index holds an entry for every record. An index whose building was interrupted is rebuilt.
    package var isReady: Bool
    /// Whether the index's keys are the standard encoding of the stored fields' values (``IndexKey/append(_:to:)``),
    /// so that a program that does not declare the index can maintain it from the records. An index over a type with
    /// its own ``IndexKeyEncodable`` encoding is not; entries written before this was recorded count as not.
    package var isDerivable: Bool

    package init(
        name: String, fields: [String], isUnique: Bool, onConflict: UniqueConflictPolicy = .fail, isMultiEntry: Bool,
        isReady: Bool, isDerivable: Bool
    ) {
        self.name = name
        self.fields = fields
        self.isUnique = isUnique
        self.onConflict = onConflict
        self.isMultiEntry = isMultiEntry
        self.isReady = isReady
        self.isDerivable = isDerivable
    }

    private enum CodingKeys: String, CodingKey {
        case name, fields, isUnique, onConflict, isMultiEntry, isReady, isDerivable
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        fields = try container.decode([String].self, forKey: .fields)
        isUnique = try container.decode(Bool.self, forKey: .isUnique)
        let policy =
            try container.decodeIfPresent(String.self, forKey: .onConflict) ?? UniqueConflictPolicy.fail.rawValue
        guard let onConflict = UniqueConflictPolicy(rawValue: policy) else {
            throw DecodingError.dataCorruptedError(
                forKey: .onConflict, in: container,
                debugDescription:
                    "The unique index \(name) resolves conflicts by '\(policy)', which this version does not know")
        }
        self.onConflict = onConflict
        isMultiEntry = try container.decode(Bool.self, forKey: .isMultiEntry)
        isReady = try container.decode(Bool.self, forKey: .isReady)
        isDerivable = try container.decodeIfPresent(Bool.self, forKey: .isDerivable) ?? false
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(fields, forKey: .fields)
        try container.encode(isUnique, forKey: .isUnique)
        if onConflict != .fail { try container.encode(onConflict.rawValue, forKey: .onConflict) }
        try container.encode(isMultiEntry, forKey: .isMultiEntry)
        try container.encode(isReady, forKey: .isReady)
        try container.encode(isDerivable, forKey: .isDerivable)
    }

    /// Whether `other` describes the same index: the same name, fields, kind and conflict policy, whatever its build
    /// state.
    package func hasSameDefinition(as other: IndexCatalog) -> Bool {
        name == other.name && fields == other.fields && isUnique == other.isUnique && onConflict == other.onConflict
            && isMultiEntry == other.isMultiEntry
    }
}
