import Foundation
import LMDB

extension KVStoreError {
    /// The error for a stored record that does not decode: damage when its checksum says its bytes changed after
    /// they were written, otherwise a record that the model does not read (or damage to a record written before
    /// checksums).
    ///
    /// - Parameters:
    ///   - error: What decoding threw.
    ///   - entity: The entity.
    ///   - id: The record's ID.
    ///   - table: The record table's name.
    static func undecodable(_ error: any Error, entity: String, id: UUID, table: String) -> KVStoreError {
        if let format = error as? RecordFormatError, let reason = damage(format) {
            return KVStoreError(
                .damaged, entity: entity, id: id,
                message: "The stored \(entity) \(id) (table '\(table)') is damaged: \(reason). Nothing of it was read; "
                    + "run 'kvtool check' on the store, and restore it from a backup", cause: error)
        }
        return KVStoreError(
            .corruptRecord, entity: entity, id: id,
            message: "The stored \(entity) \(id) does not decode: the store is damaged, or the model changed "
                + "incompatibly", cause: error)
    }

    /// Why a record format error can only be damage, or `nil` when it may be a record the model does not read: a
    /// checksum that does not match, a record with no bytes, a version byte no KVStore writes (a store of a newer
    /// format is refused when it opens).
    private static func damage(_ error: RecordFormatError) -> String? {
        switch error.reason {
        case .checksumMismatch: "its checksum does not match its bytes, which changed after they were written"
        case .truncated where error.offset == 0: "the record is empty"
        case .badVersion(let version): "its first byte (\(version)) is no record format version"
        default: nil
        }
    }
}
