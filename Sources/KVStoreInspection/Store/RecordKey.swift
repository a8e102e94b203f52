import Foundation
import KVStore
import LMDB

/// Record keys (16-byte UUIDs) and record decoding, shared by the commands.
package enum RecordKey {
    /// The UUID of a 16-byte key or index value, or `nil` for any other length.
    package static func uuid(_ bytes: UnsafeRawBufferPointer) -> UUID? {
        guard bytes.count == 16 else { return nil }
        return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
    }

    /// The 16 bytes of a UUID, the key of its record.
    package static func bytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    /// The hexadecimal digits, uppercase as `UUID.uuidString` writes them.
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The text of a UUID, the same as `uuidString`, written without the formatted printing Foundation uses (which
    /// costs more than the rest of a record's JSON).
    package static func text(_ id: UUID) -> String {
        withUnsafeBytes(of: id.uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { buffer in
                var offset = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[offset] = UInt8(ascii: "-")
                        offset += 1
                    }
                    buffer[offset] = hexDigits[Int(byte >> 4)]
                    buffer[offset + 1] = hexDigits[Int(byte & 0x0F)]
                    offset += 2
                }
                return offset
            }
        }
    }

    /// Parses the 36-character text of a UUID, digits in either case, as `UUID(uuidString:)` does, without the
    /// formatted scanning Foundation uses (which costs more than the rest of an imported line).
    package static func uuid(parsing text: String) -> UUID? {
        let utf8 = text.utf8
        return utf8.withContiguousStorageIfAvailable { chars -> UUID? in
            guard chars.count == 36 else { return nil }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let valid = withUnsafeMutableBytes(of: &bytes) { target -> Bool in
                var offset = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard chars[offset] == UInt8(ascii: "-") else { return false }
                        offset += 1
                    }
                    guard let high = hexValue(chars[offset]), let low = hexValue(chars[offset + 1]) else {
                        return false
                    }
                    target[index] = high << 4 | low
                    offset += 2
                }
                return true
            }
            return valid ? UUID(uuid: bytes) : nil
        } ?? UUID(uuidString: String(utf8))
    }

    private static func hexValue(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Decodes a record of `entity`, naming the entity and ID when the bytes do not decode.
    ///
    /// - Throws: ``InspectionError/damaged`` for bytes that do not decode.
    package static func decode(_ bytes: UnsafeRawBufferPointer, id: UUID, entity: EntityCatalog) throws -> RecordValue {
        do {
            return try RecordValue.decode(from: unsafe BorrowedBytes(unsafe: bytes), fields: entity.fields)
        } catch {
            throw InspectionError(
                .damaged,
                "The stored \(entity.name) \(id) does not decode (\(error)); run 'kvtool check' on the store")
        }
    }

    /// The record stored under `id`, decoded, or `nil` when there is none.
    ///
    /// - Throws: ``InspectionError/damaged`` when the record does not decode; what LMDB throws.
    package static func record(
        _ id: UUID, of entity: EntityCatalog, in table: Table, txn: borrowing Transaction
    ) throws -> RecordValue? {
        try txn.withUnsafeBytes(forKey: bytes(id), in: table) { bytes in
            try bytes.map { try decode($0, id: id, entity: entity) }
        }
    }

    /// The IDs a `dupSort` index holds under `key`, in order (one table of a unique index holds at most one).
    ///
    /// - Throws: What LMDB throws.
    package static func ids(forKey key: [UInt8], in table: Table, txn: borrowing Transaction) throws -> [UUID] {
        guard table.options.contains(.dupSort) else {
            return try txn.withUnsafeBytes(forKey: key, in: table) { $0.flatMap(uuid) }.map { [$0] } ?? []
        }
        return try txn.withCursor(on: table) { cursor in
            var ids: [UUID] = []
            var found = try cursor.seek(to: key)
            while found {
                if let id = try cursor.withCurrent({ _, value in uuid(value) }) ?? nil { ids.append(id) }
                found = try cursor.nextDuplicate()
            }
            return ids
        }
    }
}
