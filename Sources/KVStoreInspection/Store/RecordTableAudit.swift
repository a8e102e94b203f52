import Foundation
import LMDB

/// What a walk of an entity's record table learns about the table itself, beside its records: the keys that are not
/// record keys, and whether the walk read as many entries as the table says it holds.
///
/// LMDB hands out whatever the pages hold. A key that is not a 16-byte ID, or a tree that lost entries to damage,
/// would otherwise pass without a word, and a listing or an export look complete. The audit counts every entry the
/// walk visits, and reads the table's own count of its entries (`mdb_stat`'s `ms_entries`, which LMDB keeps in the
/// table's record, apart from the pages, and never compares with them) in the walk's first read transaction. The two
/// are compared only for a walk that reached the end of the table in read transactions that all read the same
/// snapshot: a program that commits between two chunks changes the table, and may change the count.
///
/// ```swift
/// var audit = RecordTableAudit(entity: "Task", table: records, path: store.path)
/// var scan = ChunkedScan(environment: store.environment, table: records, chunkSize: 1000)
/// try scan.forEach(beforeChunk: { txn in try audit.begin(txn) }) { _, key, value in
///     guard let id = audit.visit(key) else { return true }
///     print(id)
///     return true
/// }
/// for damage in audit.damage(isComplete: true) { print(damage.message) }
/// ```
package struct RecordTableAudit {
    /// The entity whose records the table holds.
    package let entity: String
    /// The record table.
    package let table: Table
    /// The store's directory, for the advice to check it.
    package let path: String
    /// The entries visited, record keys or not.
    package private(set) var visited = 0
    /// The keys visited that are not record keys.
    package private(set) var nonRecordKeys = 0
    /// The first of those, in key order.
    package private(set) var firstNonRecordKey: [UInt8]?
    /// The table's own count of its entries, read in the walk's first transaction; `nil` before it.
    package private(set) var recordedEntries: Int?
    /// The snapshot the walk's first transaction read.
    private var snapshot: Int?
    /// Whether a later transaction read another snapshot than the first.
    private var readSeveralSnapshots = false

    /// The most bytes of a key a message shows.
    private static let shownKeyBytes = 32

    /// Starts the audit of a walk of `table`.
    ///
    /// - Parameters:
    ///   - entity: The entity whose records the table holds, for messages.
    ///   - table: The record table.
    ///   - path: The store's directory, for the advice to check it.
    package init(entity: String, table: Table, path: String) {
        self.entity = entity
        self.table = table
        self.path = path
    }

    /// Notes one read transaction of the walk: the snapshot it reads and, for the first, the table's count.
    ///
    /// - Throws: What LMDB throws reading the table's statistics.
    package mutating func begin(_ txn: borrowing Transaction) throws {
        guard let snapshot else {
            snapshot = txn.id
            recordedEntries = try txn.count(of: table)
            return
        }
        if txn.id != snapshot { readSeveralSnapshots = true }
    }

    /// Notes one entry of the walk and returns its record ID, or `nil` (having counted it) for a key that is not a
    /// record key.
    package mutating func visit(_ key: UnsafeRawBufferPointer) -> UUID? {
        visited += 1
        if let id = RecordKey.uuid(key) { return id }
        nonRecordKeys += 1
        if firstNonRecordKey == nil { firstNonRecordKey = Array(key) }
        return nil
    }

    /// The damage the walk found, each as an ``InspectionError/damaged`` whose message names the entity, says what
    /// was found and suggests `kvtool check`; empty when there is none.
    ///
    /// - Parameter isComplete: Whether the walk reached the end of the table, rather than stopping early (a limit):
    ///   only then are the counts compared, and is the number of non-record keys the table's.
    package func damage(isComplete: Bool) -> [InspectionError] {
        let check = "'kvtool check \(path)' for the whole report"
        var damage: [InspectionError] = []
        if let first = firstNonRecordKey {
            let count = (isComplete ? "" : "at least ") + Formatting.grouped(nonRecordKeys)
            let one = nonRecordKeys == 1
            let keys = one ? "key that is not a record key" : "keys that are not record keys"
            let which = one && isComplete ? ": " : ", the first "
            damage.append(
                InspectionError(
                    .damaged,
                    "\(entity)'s record table holds \(count) \(keys) (16-byte IDs)\(which)\(Self.hex(first)) "
                        + "(\(Formatting.count(first.count, "byte"))); \(one ? "it was" : "they were") skipped. The "
                        + "store is damaged: run \(check)"))
        }
        if isComplete, !readSeveralSnapshots, let recordedEntries, recordedEntries != visited {
            // size_t comes into Swift as Int: a damaged count past Int.max reads as negative.
            let recorded = UInt(bitPattern: recordedEntries)
            damage.append(
                InspectionError(
                    .damaged,
                    "\(entity)'s record table says it holds \(Formatting.grouped(recorded)) "
                        + "\(recorded == 1 ? "entry" : "entries"), but \(Formatting.grouped(visited)) "
                        + "\(visited == 1 ? "was" : "were") read: the table is damaged. Run \(check)"))
        }
        return damage
    }

    /// The bytes in uppercase hexadecimal, the first ``shownKeyBytes`` of a longer key followed by an ellipsis.
    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        let shown = bytes.prefix(shownKeyBytes).map { "\(digits[Int($0 >> 4)])\(digits[Int($0 & 0x0F)])" }
        return shown.joined() + (bytes.count > shownKeyBytes ? "…" : "")
    }
}
