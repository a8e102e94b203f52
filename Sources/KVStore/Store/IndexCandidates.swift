import Foundation
import LMDB

/// The record IDs an index holds under one stored key: the candidates a query reads through an index, read the same
/// way by a fetch (``EntityStore``'s keys plans) and by a query over stored records (``CatalogQueryPlanner``).
///
/// A unique index holds one owner under an exact key, and under a key LMDB's limit cut a group of owners whose values
/// share the cut (``UniqueIndexEntries``): every owner of the group is a candidate, and the caller confirms the match
/// against the record. A non-unique index holds every owner as a duplicate of the key, in ID order.
///
/// ```swift
/// let key = IndexKey.finalized(lookup.keys[0], hash: hash)
/// try IndexCandidates.forEachID(underKey: key, in: table, isUnique: false, txn: txn) { id in
///     ids.append(id)
///     return true
/// }
/// ```
package enum IndexCandidates {
    /// Calls `body` with each ID stored under `key`, in stored order, until it returns false.
    ///
    /// - Parameters:
    ///   - key: The stored key: a whole key finalized with the store's ``LongKeyHash``.
    ///   - table: The index's table.
    ///   - isUnique: Whether the index is unique (a plain table) rather than a `dupSort` one.
    ///   - after: The last ID a previous call visited, to go on after it in a later transaction; `nil` to start with
    ///     the first.
    ///   - txn: The read transaction.
    ///   - body: Receives each ID; returns whether to go on.
    /// - Returns: Whether every ID was visited: `false` when `body` stopped the walk.
    /// - Throws: What LMDB or `body` throws.
    @discardableResult
    package static func forEachID(
        underKey key: [UInt8], in table: Table, isUnique: Bool, after: UUID? = nil, txn: borrowing Transaction,
        _ body: (UUID) throws -> Bool
    ) throws -> Bool {
        if isUnique {
            // Exact or cut, the group holds at most a few owners: skipping to `after` costs nothing.
            var owners = try UniqueIndexEntries.owners(of: key, in: table, txn: txn).compactMap { owner in
                owner.withBorrowedBytes(Self.id)
            }
            if let after, let position = owners.firstIndex(of: after) { owners.removeFirst(position + 1) }
            for owner in owners where try !body(owner) { return false }
            return true
        }
        return try txn.withCursor(on: table) { cursor in
            guard let after else {
                // The fastest read of many duplicates, a page of IDs at a time.
                var goesOn = true
                try cursor.forEachValuePage(ofKey: key) { page in
                    for offset in stride(from: 0, to: page.count - 15, by: 16) where goesOn {
                        goesOn = try body(UUID(bytes: page.extracting(offset..<offset + 16)))
                    }
                }
                return goesOn
            }
            let resume = withKey(after) { Array($0) }
            var found = try cursor.seek(to: key, valueAtOrAfter: resume)
            if found, try cursor.withCurrentEntry({ _, value in value.elementsEqual(resume) }) == true {
                found = try cursor.nextDuplicate()
            }
            while found {
                if let id = try cursor.withCurrentEntry({ _, value in Self.id(value) }) ?? nil, try !body(id) {
                    return false
                }
                found = try cursor.nextDuplicate()
            }
            return true
        }
    }

    /// How many IDs are stored under `key`: the owners of a unique key's group, or the duplicates of a key.
    ///
    /// - Parameters:
    ///   - key: The stored key: a whole key finalized with the store's ``LongKeyHash``.
    ///   - table: The index's table.
    ///   - isUnique: Whether the index is unique.
    ///   - txn: The read transaction.
    /// - Throws: What LMDB throws.
    package static func count(
        underKey key: [UInt8], in table: Table, isUnique: Bool, txn: borrowing Transaction
    ) throws -> Int {
        if isUnique { return try UniqueIndexEntries.owners(of: key, in: table, txn: txn).count }
        return try txn.withCursor(on: table) { cursor in
            try cursor.seek(to: key) ? try cursor.duplicateCount() : 0
        }
    }

    /// The ID an index value holds, or `nil` for a value of another length (which `kvtool check` reports).
    private static func id(_ value: BorrowedBytes) -> UUID? {
        value.count == 16 ? UUID(bytes: value) : nil
    }
}
