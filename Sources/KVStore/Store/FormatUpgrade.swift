import Foundation
import LMDB

/// Brings a format 1 store to format 2, in place, when a container opens it: its records, external chunks and catalog
/// entries get checksums. (Format 3 needs no upgrade: a store gets it when a migration renames a field, see
/// ``Catalog/formatVersion``.)
///
/// The work goes a chunk of records (or of external chunks) per write transaction, under the store's migration lock,
/// so it needs bounded memory and other writers of this version go on meanwhile (they write checksums already). Each
/// record says by its version byte whether it has its checksum, so an upgrade killed part-way resumes where it
/// stopped on the next open, rewriting only what is still unchecked; the format is stamped last, with the catalog.
///
/// Programs built with an older KVStore refuse a store once it has the new format (``KVStoreError/newerFormat``);
/// one that has the store open while it is upgraded fails on the records already rewritten (a record version it does
/// not read), and loses nothing.
struct FormatUpgrade {
    let environment: Environment
    let catalog: Table

    /// How many records one write transaction rewrites.
    static let recordsPerTransaction = 10_000
    /// How many external chunks (of 256 KiB) one write transaction gives a checksum: 16 MiB read.
    static let chunksPerTransaction = 64

    /// Upgrades the store from `format` to ``Catalog/newStoreFormatVersion``, if it is older; a later format needs no
    /// upgrade (format 3 only adds to what a store may hold).
    ///
    /// - Returns: The store's format afterwards.
    /// - Throws: ``KVStoreError/damaged`` for a table the catalog names and the file lacks, and what LMDB throws.
    func run(from format: StoreFormat) throws -> StoreFormat {
        guard format.formatVersion < Catalog.newStoreFormatVersion else { return format }
        let entries = try environment.read { txn in try Catalog.entities(in: txn, table: catalog).entities }
        for entry in entries {
            let records = try SchemaLoader.existingTable(
                Catalog.recordTableName(entry.name), options: [], entity: entry.name, environment: environment)
            try checksumRecords(in: records)
            if !entry.external.isEmpty {
                let chunks = try SchemaLoader.existingTable(
                    Catalog.externalTableName(entry.name), options: [], entity: entry.name, environment: environment)
                let checksums = try environment.openTable(named: Catalog.checksumTableName(entry.name), create: true)
                try checksumChunks(chunks, into: checksums)
            }
        }
        var upgraded = format
        upgraded.formatVersion = Catalog.newStoreFormatVersion
        try environment.write { [upgraded] txn in
            // Each entry's JSON gets its checksum as it is, without decoding: an entry that no longer decodes stays
            // for `kvtool check` to report.
            var legacy: [(key: [UInt8], value: [UInt8])] = []
            try txn.scanEntries(catalog) { key, value in
                if value.first == UInt8(ascii: "{") { legacy.append((Array(key), Array(value))) }
                return true
            }
            for (key, json) in legacy {
                var framed: [UInt8] = [Catalog.checkedValueMarker]
                framed.appendBytes(of: Checksum.crc32c(json).littleEndian)
                framed.append(contentsOf: json)
                try txn.put(framed, forKey: key, in: catalog)
            }
            try Catalog.write(upgraded, key: Catalog.formatKey, in: txn, table: catalog)
        }
        return upgraded
    }

    /// The keys after `key` (all of them for `nil`): the smallest key greater than `key` is `key` and a zero byte.
    private static func keys(after key: [UInt8]?) -> KeyRange {
        KeyRange(from: key.map { $0 + [0] }, upTo: nil)
    }

    /// Rewrites the table's unchecked records with their checksum, a chunk per transaction.
    private func checksumRecords(in table: Table) throws {
        var after: [UInt8]?
        while true {
            let next = try environment.write { [after] txn -> [UInt8]? in
                var unchecked: [(key: [UInt8], value: [UInt8])] = []
                var last: [UInt8]?
                var count = 0
                try txn.scanEntries(table, in: Self.keys(after: after)) { key, value in
                    if value.first == RecordFormat.uncheckedVersion {
                        var record = [RecordFormat.version]
                        record.append(contentsOf: value.dropFirst())
                        Checksum.append(to: &record, from: 0)
                        unchecked.append((Array(key), record))
                    }
                    last = Array(key)
                    count += 1
                    return count < Self.recordsPerTransaction
                }
                for (key, record) in unchecked { try txn.put(record, forKey: key, in: table) }
                return count < Self.recordsPerTransaction ? nil : last
            }
            guard let next else { return }
            after = next
        }
    }

    /// Gives every external chunk without a checksum its checksum, a few chunks per transaction.
    private func checksumChunks(_ chunks: Table, into checksums: Table) throws {
        var after: [UInt8]?
        while true {
            let next = try environment.write { [after] txn -> [UInt8]? in
                var missing: [(key: [UInt8], checksum: [UInt8])] = []
                var last: [UInt8]?
                var count = 0
                try txn.scanEntries(chunks, in: Self.keys(after: after)) { key, value in
                    last = Array(key)
                    count += 1
                    if try !txn.containsKey(key, in: checksums) {
                        missing.append((Array(key), ExternalValueTable.checksum(of: value)))
                    }
                    return count < Self.chunksPerTransaction
                }
                for (key, checksum) in missing { try txn.put(checksum, forKey: key, in: checksums) }
                return count < Self.chunksPerTransaction ? nil : last
            }
            guard let next else { return }
            after = next
        }
    }
}
