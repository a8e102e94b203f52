import Foundation
import LMDB

/// The entries of a unique index (a plain table: one owner per key), exact for values of any length.
///
/// A value whose key LMDB's limit cuts (``IndexKey/finalize(_:hash:)``) shares its stored key with every other value
/// of the same prefix and hash. The first of them is stored under the cut key, each further one under the cut key
/// and a sequence number (``IndexKey/sequenced(_:_:)``), and an owner found in that group holds the same value only
/// when its record says so: no false violation, no lookup that misses. A key that is not cut is exact.
package enum UniqueIndexEntries {
    /// The model, other than `other`, whose entry holds the value of `key`, if any.
    ///
    /// - Parameters:
    ///   - key: The stored (finalized) key.
    ///   - other: The 16 bytes of the ID of the model about to take the value, whose own entry does not count.
    ///   - holdsSameValue: Whether the model with the given ID bytes has the value of `key` (for a cut key, whose
    ///     group may hold other values); not called for exact keys.
    /// - Returns: The holder's ID bytes, or `nil`.
    static func holder(
        of key: BorrowedBytes,
        other: BorrowedBytes,
        in table: Table,
        txn: borrowing Transaction,
        holdsSameValue: ([UInt8]) throws -> Bool
    ) throws -> [UInt8]? {
        guard IndexKey.isGrouped(key) else {
            guard let existing = try txn.value(forKey: key, in: table), !existing.elementsEqual(other) else {
                return nil
            }
            return existing
        }
        for (_, existing) in try group(of: key, in: table, txn: txn) where !existing.elementsEqual(other) {
            if try holdsSameValue(existing) { return existing }
        }
        return nil
    }

    /// Puts `owner` under `key`, which ``holder(of:other:in:txn:holdsSameValue:)`` found free of other holders of
    /// the value: under the key itself when it is exact, and for a cut key under the first of the key and its
    /// sequenced keys that is free.
    ///
    /// - Throws: ``KVStoreError/storage`` when 65,536 values share the cut key.
    static func place(
        _ key: BorrowedBytes, owner: BorrowedBytes, in table: Table, txn: borrowing Transaction
    ) throws {
        guard IndexKey.isGrouped(key) else { return try txn.put(owner, forKey: key, in: table) }
        var taken: Set<[UInt8]> = []
        for (storedKey, existing) in try group(of: key, in: table, txn: txn) {
            if existing.elementsEqual(owner) { return }
            taken.insert(storedKey)
        }
        let base = Array(key.prefix(IndexKey.maximumLength))
        if !taken.contains(base) { return try txn.put(owner, forKey: base, in: table) }
        for sequence in UInt16(1)...UInt16.max {
            let candidate = base.withBorrowedBytes { IndexKey.sequenced($0, sequence) }
            if !taken.contains(candidate) { return try txn.put(owner, forKey: candidate, in: table) }
        }
        throw KVStoreError(
            .storage,
            message: "More than 65,535 distinct values share one cut key of a unique index (\(table.name ?? "index")): "
                + "they differ only after the first \(IndexKey.keptPrefix) bytes and have the same hash")
    }

    /// Removes the entry of `owner` under `key`, if it is there.
    static func remove(
        _ key: BorrowedBytes, owner: BorrowedBytes, in table: Table, txn: borrowing Transaction
    ) throws {
        guard IndexKey.isGrouped(key) else {
            let isOwn = try txn.withBytes(forKey: key, in: table) { $0?.elementsEqual(owner) }
            if isOwn == true { try txn.delete(forKey: key, in: table) }
            return
        }
        for (storedKey, existing) in try group(of: key, in: table, txn: txn) where existing.elementsEqual(owner) {
            try txn.delete(forKey: storedKey, in: table)
            return
        }
    }

    /// The owners stored under `key`: one for an exact key, those of its whole group for a cut one.
    package static func owners(of key: [UInt8], in table: Table, txn: borrowing Transaction) throws -> [[UInt8]] {
        guard IndexKey.isGrouped(key) else { return try txn.value(forKey: key, in: table).map { [$0] } ?? [] }
        return try key.withBorrowedBytes { try group(of: $0, in: table, txn: txn).map(\.owner) }
    }

    /// The entries of the group of the cut key `key`: the key itself and its sequenced keys.
    private static func group(
        of key: BorrowedBytes, in table: Table, txn: borrowing Transaction
    ) throws -> [(key: [UInt8], owner: [UInt8])] {
        let bounds = IndexKey.group(of: Array(key))
        var entries: [(key: [UInt8], owner: [UInt8])] = []
        try txn.scanEntries(table, in: KeyRange(from: bounds.lower, upTo: nil)) { storedKey, value in
            guard compareBytes(storedKey, bounds.upper) <= 0 else { return false }
            entries.append((Array(storedKey), Array(value)))
            return true
        }
        return entries
    }
}
