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
package struct ImportProgress: Codable, Equatable {
    /// The catalog key.
    package static let key = Array("import".utf8)

    /// The input as it was given, for messages (`-` for standard input).
    package var input: String
    /// The input's size in bytes.
    package var inputBytes: Int
    /// The hash of the whole input (``Fingerprint``, in hexadecimal), so that a resume reads the same input.
    package var fingerprint: String
    /// The conflict policy, which a resume keeps.
    package var onConflict: String
    /// The first line not committed yet, from 1.
    package var nextLine: Int
    /// Its byte offset in the input.
    package var nextOffset: Int
    /// Records written so far (new or replacing stored ones).
    package var written: Int
    /// Of those, records that replaced stored ones.
    package var replaced: Int
    /// Records not written so far, by the conflict policy.
    package var skipped: Int
    /// Records deleted so far by delete lines; `nil` in entries that did not record it (none).
    package var deleted: Int?
    /// Delete lines so far whose record the store did not hold; `nil` in entries that did not record it (none).
    package var notStored: Int?
    /// External values written so far.
    package var values: Int
    /// The bytes of those values.
    package var valueBytes: Int
    /// The entities the import created.
    package var createdEntities: [String]
    /// When the import started.
    package var started: Date
    /// When its last chunk committed.
    package var updated: Date
    /// The token of the lock the running import holds.
    package var lockToken: UInt32
    /// The running import's scratch directory, which a killed import leaves behind and a resume or abandon removes;
    /// `nil` in entries that did not record it.
    package var scratchDirectory: String?

    /// Creates an entry; the parameters are the properties of the same names.
    package init(
        input: String, inputBytes: Int, fingerprint: String, onConflict: String, nextLine: Int, nextOffset: Int,
        written: Int, replaced: Int, skipped: Int, values: Int, valueBytes: Int, createdEntities: [String],
        started: Date, updated: Date, lockToken: UInt32, scratchDirectory: String?
    ) {
        self.input = input
        self.inputBytes = inputBytes
        self.fingerprint = fingerprint
        self.onConflict = onConflict
        self.nextLine = nextLine
        self.nextOffset = nextOffset
        self.written = written
        self.replaced = replaced
        self.skipped = skipped
        self.values = values
        self.valueBytes = valueBytes
        self.createdEntities = createdEntities
        self.started = started
        self.updated = updated
        self.lockToken = lockToken
        self.scratchDirectory = scratchDirectory
    }

    /// The entry as a transaction sees it, or `nil`.
    ///
    /// - Throws: ``InspectionError/damaged`` when it does not decode; what LMDB throws.
    package static func read(in txn: borrowing Transaction, catalog: Table) throws -> ImportProgress? {
        do {
            return try Catalog.read(ImportProgress.self, key: key, in: txn, table: catalog)
        } catch {
            throw InspectionError(.damaged, "The catalog's import entry does not decode (\(error)); run 'kvtool check'")
        }
    }

    /// Writes the entry.
    ///
    /// - Throws: What LMDB throws.
    package func write(in txn: borrowing Transaction, catalog: Table) throws {
        try Catalog.write(self, key: Self.key, in: txn, table: catalog)
    }

    /// Deletes the entry.
    ///
    /// - Throws: What LMDB throws.
    package static func delete(in txn: borrowing Transaction, catalog: Table) throws {
        try Catalog.delete(key: key, in: txn, table: catalog)
    }

    /// Whether the import that wrote the entry is still running: it holds its lock.
    ///
    /// - Throws: What probing the store's lock throws (a system call that failed).
    package func isRunning(in directory: String) throws -> Bool {
        try StoreLockProbe(directory: directory).isHeld(.streamedValue(lockToken))
    }

    /// `the import of 'tasks.jsonl' (started 2026-05-09T06:13:20Z) stopped at line 1,201: 1,200 records written`.
    package var description: String {
        "the import of \(input == "-" ? "standard input" : "'\(input)'") (started "
            + "\(ISO8601.displayString(started))) stopped at line \(Formatting.grouped(nextLine)): "
            + "\(Formatting.count(written, "record")) written, \(Formatting.grouped(skipped)) skipped"
    }
}
