import Foundation
import KVStore
import LMDB

/// How far an import got, kept in the store's catalog under the key `import` and written in the same transaction as
/// each chunk of records, so that it always says exactly what is committed: a failure (a full disk, a killed
/// process) leaves the store consistent with an entry that `kvtool import --resume` finishes from, and the last
/// chunk deletes it.
///
/// The catalog is where it belongs rather than a file beside the input: it commits atomically with the records it
/// describes (a file would be written before or after the commit, and be wrong when the process dies in between),
/// it travels with the store (a copy of an interrupted store says so), standard input has no "beside", and `kvtool
/// check` and every later import see it. Writing it advances the catalog's generation, which programs that have the
/// store open follow as for any catalog change.
///
/// While the import runs it holds the ``ExternalWriteLock`` whose token the entry names, so that another import, or
/// `check`, tells an import under way from one that stopped.
struct ImportProgress: Codable, Equatable {
    /// The catalog key.
    static let key = Array("import".utf8)

    /// The input as it was given, for messages (`-` for standard input).
    var input: String
    /// The input's size in bytes.
    var inputBytes: Int
    /// The hash of the whole input (``Fingerprint``, in hexadecimal), so that a resume reads the same input.
    var fingerprint: String
    /// The conflict policy, which a resume keeps.
    var onConflict: String
    /// The first line not committed yet, from 1.
    var nextLine: Int
    /// Its byte offset in the input.
    var nextOffset: Int
    /// Records written so far (new or replacing stored ones).
    var written: Int
    /// Of those, records that replaced stored ones.
    var replaced: Int
    /// Records not written so far, by the conflict policy.
    var skipped: Int
    /// External values written so far, and their bytes.
    var values: Int
    var valueBytes: Int
    /// The entities the import created.
    var createdEntities: [String]
    /// When the import started, and when its last chunk committed.
    var started: Date
    var updated: Date
    /// The token of the lock the running import holds.
    var lockToken: UInt32
    /// The running import's scratch directory, which a killed import leaves behind and a resume or abandon removes;
    /// `nil` in entries that did not record it.
    var scratchDirectory: String?

    /// The entry as a transaction sees it, or `nil`.
    ///
    /// - Throws: ``ToolError`` when it does not decode.
    static func read(in txn: borrowing Transaction, catalog: Table) throws -> ImportProgress? {
        do {
            return try Catalog.read(ImportProgress.self, key: key, in: txn, table: catalog)
        } catch {
            throw ToolError("The catalog's import entry does not decode (\(error)); run 'kvtool check'")
        }
    }

    /// Writes the entry.
    func write(in txn: borrowing Transaction, catalog: Table) throws {
        try Catalog.write(self, key: Self.key, in: txn, table: catalog)
    }

    /// Deletes the entry.
    static func delete(in txn: borrowing Transaction, catalog: Table) throws {
        try Catalog.delete(key: key, in: txn, table: catalog)
    }

    /// Whether the import that wrote the entry is still running: it holds its lock.
    func isRunning(in directory: String) throws -> Bool {
        try StoreLockProbe(directory: directory).isHeld(.streamedValue(lockToken))
    }

    /// `the import of 'tasks.jsonl' (started 2026-05-09T06:13:20Z) stopped at line 1,201: 1,200 records written`.
    var description: String {
        "the import of \(input == "-" ? "standard input" : "'\(input)'") (started "
            + "\(ISO8601.displayString(started))) stopped at line \(Formatting.grouped(nextLine)): "
            + "\(Formatting.count(written, "record")) written, \(Formatting.grouped(skipped)) skipped"
    }
}
