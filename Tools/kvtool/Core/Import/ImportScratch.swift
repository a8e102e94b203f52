import Foundation
import KVStoreInspection
import LMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an import remembers of its input between lines and between its two passes, kept on disk so that memory
/// stays bounded whatever the size of the input: a private LMDB environment in a temporary directory of its own
/// (mode 0700), removed when the import ends.
///
/// It holds each record's ID with its line and what the import does with it (duplicate IDs, references within the
/// file, and the write pass's skips), each unique value with its record (values that collide within the file), and
/// the references to IDs not seen yet, resolved once the whole file is read. Standard input, which cannot be read
/// twice, is copied beside it (``spoolPath``).
final class ImportScratch {
    /// What the import does with a record of the file.
    enum Disposition: UInt8 {
        /// Written: the store has no record with its ID.
        case written = 1
        /// Written in place of the stored record with its ID (`--on-conflict replace`).
        case replaces = 2
        /// Not written: the store's record with its ID stays (`--on-conflict skip`).
        case keepsStored = 3
        /// Not written, and the store has no record with its ID: a unique value of it is another stored record's
        /// (`--on-conflict skip`).
        case skipped = 4
        /// Written by the import that this one resumes.
        case committed = 5
        /// Deleted: a delete line's record, which the store holds.
        case deletes = 6
        /// Nothing to do: a delete line's record, which the store does not hold (or the import that this one
        /// resumes deleted).
        case absent = 7

        /// Whether the store holds a record with the ID once the import is done.
        var isStored: Bool {
            switch self {
            case .skipped, .deletes, .absent: false
            case .written, .replaces, .keepsStored, .committed: true
            }
        }

        /// Whether the ID is a delete line's.
        var isDelete: Bool {
            self == .deletes || self == .absent
        }

        /// Whether the write pass writes the record.
        var isWritten: Bool {
            self == .written || self == .replaces
        }
    }

    /// The directory.
    let directory: String
    /// The environment.
    let environment: Environment
    /// Entity ordinal and ID → line (8 bytes) and ``Disposition`` (1 byte).
    let ids: Table
    /// Target entity ordinal, ID and referring line → referring entity ordinal, ID and reference position.
    let references: Table
    /// The table of each unique index, by entity ordinal and index position: index key → record ID and line.
    private let unique: [Int: Table]

    /// Where a copy of standard input goes.
    var spoolPath: String { directory + "/input.jsonl" }

    /// Creates the directory and the environment.
    ///
    /// - Parameters:
    ///   - parent: The directory to create it in.
    ///   - schema: The schema, whose unique indexes get a table each.
    /// - Throws: ``ToolError`` when the directory or the environment cannot be created.
    init(in parent: String, schema: ImportSchema) throws {
        var template = Array((parent + "/kvtool-import-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard created != nil else {
            throw ToolError(
                "Cannot create the import's scratch directory in '\(parent)': \(SystemError.describe(errno, writing: parent))"
                    + "; give another with --scratch-directory")
        }
        directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let uniqueCount = schema.entities.values.reduce(0) { $0 + $1.uniqueIndexes.count }
        do {
            // A fixed map, so that a write transaction never runs again after the map grew: the validation's state
            // lives outside it. 64 GiB of address space, of which the file takes what it needs.
            environment = try Environment.open(
                path: directory,
                configuration: Environment.Configuration(
                    mapSize: 64 << 30, maxMapSize: 64 << 30, maxTables: uniqueCount + 4, options: [.noSync, .noLock]))
            ids = try environment.openTable(named: "ids", create: true)
            references = try environment.openTable(named: "references", create: true)
            var unique: [Int: Table] = [:]
            for entity in schema.entities.values {
                for index in entity.uniqueIndexes {
                    unique[Self.uniqueKey(entity.ordinal, index.position)] = try environment.openTable(
                        named: "unique/\(entity.ordinal)/\(index.position)", create: true)
                }
            }
            self.unique = unique
        } catch {
            Self.remove(directory)
            throw ToolError("Cannot create the import's scratch store in '\(directory)': \(error)")
        }
    }

    deinit {
        try? environment.close()
        Self.remove(directory)
    }

    /// Removes a scratch directory that a killed import left, when `directory` names one: a directory called
    /// `kvtool-import-…` that holds nothing but a scratch store's files.
    static func removeLeftover(_ directory: String) {
        let name = (directory as NSString).lastPathComponent
        guard name.hasPrefix("kvtool-import-"),
            let contents = try? FileManager.default.contentsOfDirectory(atPath: directory),
            Set(contents).isSubset(of: ["data.mdb", "lock.mdb", "input.jsonl"])
        else { return }
        remove(directory)
    }

    /// Removes the directory and the files in it. A failure leaves a directory in the temporary directory, which
    /// is all it can do, so it is not reported.
    private static func remove(_ directory: String) {
        for name in ["data.mdb", "lock.mdb", "input.jsonl"] { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    private static func uniqueKey(_ entity: UInt16, _ position: Int) -> Int {
        Int(entity) << 16 | position
    }

    /// The table of a unique index.
    func uniqueTable(entity: UInt16, position: Int) -> Table? {
        unique[Self.uniqueKey(entity, position)]
    }

    // MARK: - Records

    /// The key of a record in ``ids``.
    static func idKey(_ entity: UInt16, _ id: UUID) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(18)
        withUnsafeBytes(of: entity.bigEndian) { key.append(contentsOf: $0) }
        withUnsafeBytes(of: id.uuid) { key.append(contentsOf: $0) }
        return key
    }

    /// The line of a record of the file and what the import does with it, or `nil` when the file has no such record
    /// (so far).
    func record(_ entity: UInt16, _ id: UUID, in txn: borrowing Transaction) throws -> (line: Int, Disposition)? {
        try txn.withUnsafeBytes(forKey: Self.idKey(entity, id), in: ids) { bytes -> (Int, Disposition)? in
            guard let bytes, bytes.count == 9, let disposition = Disposition(rawValue: bytes[8]) else { return nil }
            return (Int(UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))), disposition)
        }
    }

    /// Records a record of the file.
    func setRecord(
        _ entity: UInt16, _ id: UUID, line: Int, _ disposition: Disposition, in txn: borrowing Transaction
    ) throws {
        var value: [UInt8] = []
        withUnsafeBytes(of: UInt64(line).bigEndian) { value.append(contentsOf: $0) }
        value.append(disposition.rawValue)
        try txn.put(value, forKey: Self.idKey(entity, id), in: ids)
    }

    /// Calls `body` with each record of the file of an entity, in ID order, with its line and disposition.
    func forEachRecord(
        of entity: UInt16, in txn: borrowing Transaction, _ body: (UUID, _ line: Int, Disposition) throws -> Void
    ) throws {
        var prefix: [UInt8] = []
        withUnsafeBytes(of: entity.bigEndian) { prefix.append(contentsOf: $0) }
        try txn.scan(ids, in: .prefix(prefix)) { key, value in
            guard key.count == 18, value.count == 9, let disposition = Disposition(rawValue: value[8]),
                let id = RecordKey.uuid(UnsafeRawBufferPointer(rebasing: key[2..<18]))
            else { return true }
            try body(id, Int(UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))), disposition)
            return true
        }
    }

    // MARK: - Unique values

    /// The record of the file that holds a unique value, with its line.
    func uniqueOwner(_ key: [UInt8], in table: Table, txn: borrowing Transaction) throws -> (UUID, line: Int)? {
        try txn.withUnsafeBytes(forKey: key, in: table) { bytes -> (UUID, Int)? in
            guard let bytes, bytes.count == 24, let id = RecordKey.uuid(UnsafeRawBufferPointer(rebasing: bytes[0..<16]))
            else { return nil }
            return (id, Int(UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))))
        }
    }

    /// Records that a record of the file holds a unique value.
    func setUniqueOwner(
        _ key: [UInt8], id: UUID, line: Int, in table: Table, txn: borrowing Transaction
    ) throws {
        var value = RecordKey.bytes(id)
        withUnsafeBytes(of: UInt64(line).bigEndian) { value.append(contentsOf: $0) }
        try txn.put(value, forKey: key, in: table)
    }

    // MARK: - References not resolved yet

    /// A reference to an ID the file has not shown, nor the store held, when its line was read.
    struct PendingReference {
        /// The target entity's ordinal.
        let target: UInt16
        /// The referenced ID.
        let id: UUID
        /// The referring line.
        let line: Int
        /// The referring entity's ordinal.
        let source: UInt16
        /// The referring record's ID.
        let sourceID: UUID
        /// The reference's position among the referring entity's references.
        let reference: Int
    }

    /// Keeps a reference to resolve at the end.
    func keep(_ reference: PendingReference, in txn: borrowing Transaction) throws {
        var key = Self.idKey(reference.target, reference.id)
        withUnsafeBytes(of: UInt64(reference.line).bigEndian) { key.append(contentsOf: $0) }
        var value: [UInt8] = []
        withUnsafeBytes(of: reference.source.bigEndian) { value.append(contentsOf: $0) }
        value += RecordKey.bytes(reference.sourceID)
        withUnsafeBytes(of: UInt16(truncatingIfNeeded: reference.reference).bigEndian) { value.append(contentsOf: $0) }
        try txn.put(value, forKey: key, in: references)
    }

    /// Calls `body` with each reference kept, in the order of their targets.
    func forEachPendingReference(
        in txn: borrowing Transaction, _ body: (PendingReference) throws -> Void
    ) throws {
        try txn.scan(references) { key, value in
            guard key.count == 26, value.count == 20,
                let id = RecordKey.uuid(UnsafeRawBufferPointer(rebasing: key[2..<18])),
                let sourceID = RecordKey.uuid(UnsafeRawBufferPointer(rebasing: value[2..<18]))
            else { return true }
            try body(
                PendingReference(
                    target: UInt16(bigEndian: key.loadUnaligned(as: UInt16.self)), id: id,
                    line: Int(UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 18, as: UInt64.self))),
                    source: UInt16(bigEndian: value.loadUnaligned(as: UInt16.self)), sourceID: sourceID,
                    reference: Int(UInt16(bigEndian: value.loadUnaligned(fromByteOffset: 18, as: UInt16.self)))))
            return true
        }
    }
}
