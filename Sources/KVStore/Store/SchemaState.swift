import Foundation
import LMDB

extension Catalog {
    /// The catalog key of the store's ``SchemaState``: its schema version, the migration under way, the history.
    package static let schemaKey = Array("schema".utf8)

    /// Reads the schema state; a store that never recorded one has an empty state.
    package static func schemaState(in txn: borrowing Transaction, table: Table) throws -> SchemaState {
        try read(SchemaState.self, key: schemaKey, in: txn, table: table) ?? SchemaState()
    }
}

/// The `schema` entry of the catalog: which version of a program's ``VersionedSchema`` the store holds, the
/// migration under way if any, and the migrations applied, with their dates.
///
/// A store opened only with model types, never with a versioned schema, has no version.
package struct SchemaState: Codable, Sendable, Equatable {
    /// The version every record of the store is at, or `nil` for a store never opened with a versioned schema.
    package var version: SchemaVersion?
    /// The migration stage under way, if one started and did not finish: the store then holds records of two
    /// versions, and opens only with the plan that started it.
    package var migration: MigrationState?
    /// The stages applied, oldest first.
    package var history: [MigrationRecord] = []
    /// Tables that a finished stage emptied and that are deleted outside of a transaction, as LMDB requires.
    package var pendingDrops: [String] = []

    /// Creates the state of a store that records no version.
    package init() {}

    private enum CodingKeys: String, CodingKey {
        case version, migration, history, pendingDrops
    }

    /// Decodes the entry; missing lists are empty.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decodeIfPresent(SchemaVersion.self, forKey: .version)
        migration = try container.decodeIfPresent(MigrationState.self, forKey: .migration)
        history = try container.decodeIfPresent([MigrationRecord].self, forKey: .history) ?? []
        pendingDrops = try container.decodeIfPresent([String].self, forKey: .pendingDrops) ?? []
    }
}

/// A migration stage under way, written in the same write transaction as each chunk of records it migrates.
package struct MigrationState: Codable, Sendable, Equatable {
    /// The version the whole migration ends at.
    package var target: SchemaVersion
    /// The version the stage starts from.
    package var from: SchemaVersion
    /// The version the stage ends at.
    package var to: SchemaVersion
    /// `lightweight` or `custom`.
    package var kind: String
    /// The position of the entity step under way in the stage's steps.
    package var step: Int
    /// The entity the step under way reads, for display.
    package var entity: String?
    /// The key of the last record the step migrated in place, in hexadecimal; `nil` before its first chunk.
    package var after: String?
    /// How many records the step under way migrated.
    package var stepRecords: Int
    /// How many of those the step deleted, their closure having returned `nil`.
    package var stepDropped: Int
    /// How many records the stage migrated.
    package var records: Int
    /// When the stage started.
    package var started: Date
}

/// A migration stage applied to the store.
package struct MigrationRecord: Codable, Sendable, Equatable {
    /// The version the stage started from.
    package var from: SchemaVersion
    /// The version the stage ended at.
    package var to: SchemaVersion
    /// `lightweight` or `custom`.
    package var kind: String
    /// How many records the stage read and rewrote or moved.
    package var records: Int
    /// When the stage started.
    package var started: Date
    /// When its last transaction committed.
    package var finished: Date
}

/// Hexadecimal text for record keys in the catalog.
enum Hex {
    /// The lowercase hexadecimal digits of `bytes`.
    static func string(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of hexadecimal text, or `nil` when it is not.
    static func bytes(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
