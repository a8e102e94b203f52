import Foundation
import KVStore
import LMDB

/// A replica's progress, in the table `replication` of its store, written in the transaction of each group it
/// applies: the stream sequence of the group's last message, the last commit applied (the history's position), when
/// the primary made that commit, and the position of the snapshot its catalog came from
/// (``GroupHeader/catalogPosition``).
struct ReplicaProgress: Equatable, Sendable {
    var sequence: UInt64
    var position: UInt64
    var committedMicros: Int64
    var catalogPosition: UInt64

    static let tableName = "replication"
    private static let key = Array("progress".utf8)

    /// The progress `txn` sees, or `nil` before the replica applied anything.
    ///
    /// - Throws: `KVStoreError.damaged` for a row that does not check out.
    static func read(in txn: borrowing Transaction, table: Table, path: String) throws -> ReplicaProgress? {
        guard let bytes = try txn.value(forKey: key, in: table) else { return nil }
        guard bytes.count == 36, Checksum.crc32c(Array(bytes[0..<32])) == UInt32(littleEndian: bytes, at: 32) else {
            throw KVStoreError(
                .damaged,
                message: "The replication progress of the store at \(path) is damaged; the replica cannot tell which "
                    + "commits it applied. Bootstrap it again from a copy of the primary")
        }
        return ReplicaProgress(
            sequence: UInt64(littleEndian: bytes, at: 0), position: UInt64(littleEndian: bytes, at: 8),
            committedMicros: Int64(bitPattern: UInt64(littleEndian: bytes, at: 16)),
            catalogPosition: UInt64(littleEndian: bytes, at: 24))
    }

    /// Writes the progress.
    ///
    /// - Throws: What LMDB throws.
    func write(in txn: borrowing Transaction, table: Table) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        for value in [sequence, position, UInt64(bitPattern: committedMicros), catalogPosition] {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        let check = Checksum.crc32c(bytes)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: check >> shift)) }
        try txn.put(bytes, forKey: Self.key, in: table)
    }
}

extension FixedWidthInteger {
    /// The little-endian integer at `offset` of `bytes`.
    init(littleEndian bytes: [UInt8], at offset: Int) {
        var value = Self.zero
        for index in 0..<(Self.bitWidth / 8) { value |= Self(bytes[offset + index]) << (8 * index) }
        self = value
    }
}

extension UInt32 {
    /// The big-endian integer at `offset` of `bytes`.
    init(bigEndian bytes: [UInt8], at offset: Int) {
        self = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
