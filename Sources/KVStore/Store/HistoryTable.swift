import Foundation
import LMDB

/// The `history` entry of the catalog: the store records a history entry for every commit (``HistoryTable``).
///
/// Every writer reads it with the rest of the catalog (it advances the catalog's generation), so a process that
/// opened the store before history was switched on records history from its next write; the store's format is 4 from
/// then on, so that a version of KVStore that would not record it refuses the store.
package struct HistoryCatalog: Codable, Sendable, Equatable {
    /// The ID tokens name: new each time history is switched on.
    package var storeID: UUID
    /// How much history writers keep.
    package var retention: HistoryRetention
    /// When history was switched on.
    package var enabled: Date
}

extension Catalog {
    /// The catalog key of the ``HistoryCatalog``.
    package static let historyKey = Array("history".utf8)

    /// The name of the history table.
    package static let historyTableName = "history"

    /// The format a store has once its history is on: a program that reads format 3 at most would commit without
    /// recording history, and consumers would miss its changes.
    static let historyFormatVersion = 4

    /// Stamps the store with ``historyFormatVersion`` when its format is older.
    ///
    /// - Throws: ``KVStoreError/damaged`` for a format entry that does not decode, and what LMDB throws.
    static func requireHistoryFormat(in txn: borrowing Transaction, table: Table) throws {
        guard var format = try read(StoreFormat.self, key: formatKey, in: txn, table: table),
            format.formatVersion < historyFormatVersion
        else { return }
        format.formatVersion = historyFormatVersion
        try write(format, key: formatKey, in: txn, table: table)
    }
}

/// A store's persistent change history: one entry per commit, written in the commit's transaction.
///
/// | key | value |
/// |---|---|
/// | 8 zero bytes | the counter: the last position given (8 bytes little-endian), the last position pruned (8 bytes), and their CRC-32C (4 bytes) |
/// | position, 8 bytes big-endian | an entry (below) |
///
/// An entry is a version byte (1); the commit time, microseconds since 1970 (8 bytes little-endian, signed); the
/// writer's origin (8 bytes, a random number of the container that committed it); the LMDB transaction ID (a varint,
/// which a compacting copy restarts: only for change sets of the same file); the author, a varint of its UTF-8 length plus one (0 for none) and its bytes; the entity names, a varint count and
/// each as a varint length and UTF-8 bytes; the changes, a varint count and each as a kind byte (0 inserted,
/// 1 updated, 2 nullified, 3 deleted, 4 cascaded), a varint entity index and the 16-byte ID, then for a nullified or
/// cascaded one the model whose delete caused it (entity index, ID), and for a deleted or cascaded one its kept
/// values: a varint length (0 for none) and that many bytes, the JSON of a field table's length as a varint, the
/// JSON, and a record of the kept fields; last, the CRC-32C of everything before it (4 bytes little-endian).
///
/// Positions only grow: the counter keeps the last one given even when every entry is pruned. LMDB's transaction ID
/// is not used, since a compacting copy restarts it.
package struct HistoryTable: Sendable {
    package let table: Table

    package init(table: Table) {
        self.table = table
    }

    /// The key of the counter row.
    static let counterKey = [UInt8](repeating: 0, count: 8)

    /// How many entries one commit prunes at most; a policy that fell far behind (a retention made shorter) catches
    /// up over the following commits, so that no commit pays for all of it.
    static let pruneBatch = 1_000

    /// The position of an entry as its key.
    static func key(_ position: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(8)
        key.appendBytes(of: position.bigEndian)
        return key
    }

    /// The last position given and the last one pruned.
    package struct Counter: Sendable, Equatable {
        package var last: UInt64
        package var prunedThrough: UInt64
    }

    /// The counter; zeros for a new table.
    ///
    /// - Throws: ``KVStoreError/damaged`` when the row does not check out.
    package func counter(in txn: borrowing Transaction) throws -> Counter {
        try txn.withBytes(forKey: Self.counterKey, in: table) { bytes -> Counter in
            guard let bytes else { return Counter(last: 0, prunedThrough: 0) }
            guard bytes.count == 20,
                Checksum.crc32c(bytes.extracting(..<16))
                    == UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
            else {
                throw KVStoreError(
                    .damaged,
                    message: "The store's history counter is damaged; run 'kvtool check', and switch history off and "
                        + "on again to start a new history (its tokens are then refused)")
            }
            return Counter(
                last: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                prunedThrough: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    private func write(_ counter: Counter, in txn: borrowing Transaction) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        bytes.appendBytes(of: counter.last.littleEndian)
        bytes.appendBytes(of: counter.prunedThrough.littleEndian)
        bytes.appendBytes(of: Checksum.crc32c(bytes).littleEndian)
        try txn.put(bytes, forKey: Self.counterKey, in: table)
    }

    /// Records a commit's changes as the next entry, after pruning what `retention` no longer keeps.
    ///
    /// - Returns: The entry's position.
    /// - Throws: ``KVStoreError/damaged`` for a damaged counter or oldest entry, and what LMDB throws.
    package func append(
        _ changes: [ChangeSet.Change], keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]],
        author: String?, date: Date, origin: UInt64, retention: HistoryRetention, in txn: borrowing Transaction
    ) throws -> UInt64 {
        try append(
            log: ChangeLog(changes), keptValues: keptValues, author: author, date: date, origin: origin,
            retention: retention, in: txn)
    }

    /// Records a commit's log as the next entry, after pruning what `retention` no longer keeps.
    ///
    /// - Returns: The entry's position.
    /// - Throws: ``KVStoreError/damaged`` for a damaged counter or oldest entry, and what LMDB throws.
    func append(
        log: ChangeLog, keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]],
        author: String?, date: Date, origin: UInt64, retention: HistoryRetention, in txn: borrowing Transaction
    ) throws -> UInt64 {
        var counter = try counter(in: txn)
        try prune(&counter, retention: retention, now: date, in: txn)
        counter.last += 1
        let entry = try Self.encode(
            log: log, keptValues: keptValues, author: author, date: date, origin: origin, transactionID: txn.id)
        try txn.put(entry, forKey: Self.key(counter.last), in: table)
        try write(counter, in: txn)
        return counter.last
    }

    /// Records an entry another store's history recorded, under the position it has there: a replica keeps the
    /// primary's history as the primary recorded it, so that its tokens are the primary's. Prunes what `retention`
    /// no longer keeps first, as ``append(log:keptValues:author:date:origin:retention:in:)`` does.
    ///
    /// - Parameters:
    ///   - bytes: The entry as the other history stores it (its checksum is checked).
    ///   - position: Its position, the one after this history's last.
    /// - Throws: ``KVStoreError/damaged`` for an entry that does not check out or a position that does not follow the
    ///   last one, and what LMDB throws.
    package func appendCopy(
        _ bytes: [UInt8], at position: UInt64, retention: HistoryRetention, now: Date, in txn: borrowing Transaction
    ) throws {
        var counter = try counter(in: txn)
        guard position == counter.last + 1 else {
            throw Self.damaged(position, "it does not follow the history's last position, \(counter.last)")
        }
        let token = HistoryToken(storeID: UUID(), position: position)
        _ = try bytes.withBorrowedBytes { try Self.decode($0, token: token) }
        try prune(&counter, retention: retention, now: now, in: txn)
        counter.last = position
        try txn.put(bytes, forKey: Self.key(position), in: table)
        try write(counter, in: txn)
    }

    /// The bytes of the entry at `position`, as stored, or `nil` when there is none.
    ///
    /// - Throws: What LMDB throws.
    package func storedBytes(at position: UInt64, in txn: borrowing Transaction) throws -> [UInt8]? {
        try txn.withBytes(forKey: Self.key(position), in: table) { $0.map { Array($0) } }
    }

    /// Decodes an entry's stored bytes.
    ///
    /// - Throws: ``KVStoreError/damaged`` for bytes that do not check out or decode.
    package static func decodeStored(_ bytes: [UInt8], token: HistoryToken) throws -> HistoryEntry {
        try bytes.withBorrowedBytes { try decode($0, token: token) }
    }

    /// Deletes the entries at and before `position` (at most ``pruneBatch`` when `bounded`).
    ///
    /// - Returns: How many entries were deleted.
    /// - Throws: What LMDB throws.
    @discardableResult
    package func delete(through position: UInt64, bounded: Bool, in txn: borrowing Transaction) throws -> Int {
        var counter = try counter(in: txn)
        let target = min(position, counter.last)
        guard target > counter.prunedThrough else { return 0 }
        let end = bounded ? min(target, counter.prunedThrough + UInt64(Self.pruneBatch)) : target
        var deleted = 0
        for position in (counter.prunedThrough + 1)...end where try txn.delete(forKey: Self.key(position), in: table) {
            deleted += 1
        }
        counter.prunedThrough = end
        try write(counter, in: txn)
        return deleted
    }

    /// Prunes the oldest entries that `retention` no longer keeps, at most ``pruneBatch`` of them.
    private func prune(
        _ counter: inout Counter, retention: HistoryRetention, now: Date, in txn: borrowing Transaction
    ) throws {
        var through = counter.prunedThrough
        if let maximumCount = retention.maximumCount {
            // The entry being added counts.
            let kept = UInt64(max(0, maximumCount - 1))
            if counter.last > kept { through = max(through, counter.last - kept) }
        }
        if let maximumAge = retention.maximumAge {
            let cutoff = now.addingTimeInterval(-maximumAge)
            var position = through + 1
            let limit = min(counter.last, counter.prunedThrough + UInt64(Self.pruneBatch))
            while position <= limit, let date = try commitDate(at: position, in: txn), date < cutoff {
                through = position
                position += 1
            }
        }
        guard through > counter.prunedThrough else { return }
        _ = try delete(through: through, bounded: true, in: txn)
        counter = try self.counter(in: txn)
    }

    /// The commit time of the entry at `position`, or `nil` when there is none.
    private func commitDate(at position: UInt64, in txn: borrowing Transaction) throws -> Date? {
        try txn.withBytes(forKey: Self.key(position), in: table) { bytes -> Date? in
            guard let bytes else { return nil }
            guard bytes.count >= 9, bytes[0] == 1 else { throw Self.damaged(position, "it is too short") }
            let micros = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 1, as: Int64.self))
            return Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        }
    }

    /// The entries after the position `start` (after the last pruned one when `nil`), in order, for which `include`
    /// holds, up to `limit` of them.
    ///
    /// - Throws: ``KVStoreError/historyExpired`` when entries after `position` were pruned,
    ///   ``KVStoreError/invalidHistoryToken`` for a position past the last one given, ``KVStoreError/damaged`` for an
    ///   entry that does not check out.
    package func entries(
        after start: UInt64?, storeID: UUID, limit: Int?, in txn: borrowing Transaction,
        including include: (HistoryEntry) -> Bool = { _ in true }
    ) throws -> [HistoryEntry] {
        let counter = try counter(in: txn)
        let position = start ?? counter.prunedThrough
        guard position >= counter.prunedThrough else {
            throw KVStoreError(
                .historyExpired,
                message: "The history after token \(HistoryToken(storeID: storeID, position: position)) was pruned "
                    + "(entries through \(counter.prunedThrough) are gone, by the retention policy or "
                    + "deleteHistory(before:)); the changes since cannot be read. Read the models again, and go on "
                    + "from the current token (lastHistoryToken)")
        }
        guard position <= counter.last else {
            throw KVStoreError(
                .invalidHistoryToken,
                message: "The token \(HistoryToken(storeID: storeID, position: position)) is past the last commit of "
                    + "this store's history (\(counter.last)): the store was restored from a copy older than the "
                    + "token, or the token was made up. Read the models again, and go on from lastHistoryToken")
        }
        var entries: [HistoryEntry] = []
        let maximum = limit ?? Int.max
        guard maximum > 0 else { return [] }
        try txn.scanEntries(table, in: .from(Self.key(position + 1))) { key, value in
            guard key.count == 8 else { throw Self.damaged(position, "a key is not a position") }
            let at = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            let entry = try Self.decode(value, token: HistoryToken(storeID: storeID, position: at))
            if include(entry) { entries.append(entry) }
            return entries.count < maximum
        }
        return entries
    }

    // MARK: - Encoding

    private static let entryVersion: UInt8 = 1

    static func encode(
        _ changes: [ChangeSet.Change], keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]],
        author: String?, date: Date, origin: UInt64, transactionID: Int
    ) throws -> [UInt8] {
        try encode(
            log: ChangeLog(changes), keptValues: keptValues, author: author, date: date, origin: origin,
            transactionID: transactionID)
    }

    static func encode(
        log: ChangeLog, keptValues: [ChangeSet.ModelID: [(name: String, value: RecordValue)]],
        author: String?, date: Date, origin: UInt64, transactionID: Int
    ) throws -> [UInt8] {
        var bytes: [UInt8] = [entryVersion]
        bytes.appendBytes(of: Int64((date.timeIntervalSince1970 * 1_000_000).rounded()).littleEndian)
        bytes.appendBytes(of: origin.littleEndian)
        bytes.appendVarint(UInt64(max(0, transactionID)))
        if let author {
            let utf8 = Array(author.utf8)
            bytes.appendVarint(UInt64(utf8.count) + 1)
            bytes.append(contentsOf: utf8)
        } else {
            bytes.appendVarint(0)
        }
        bytes.appendVarint(UInt64(log.entities.count))
        for entity in log.entities {
            let utf8 = Array(entity.utf8)
            bytes.appendVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
        bytes.reserveCapacity(bytes.count + log.entries.count * 19 + 8)
        bytes.appendVarint(UInt64(log.entries.count))
        for entry in log.entries {
            bytes.append(entry.kind.rawValue)
            bytes.appendVarint(UInt64(entry.entity))
            bytes.appendBytes(of: entry.id.uuid)
            if entry.kind.hasCause {
                let cause = log.causes[Int(entry.cause)]
                bytes.appendVarint(UInt64(cause.entity))
                bytes.appendBytes(of: cause.id.uuid)
            }
            guard !entry.kind.isSave else { continue }
            guard !keptValues.isEmpty,
                let kept = keptValues[ChangeSet.ModelID(entity: log.entities[Int(entry.entity)], id: entry.id)],
                !kept.isEmpty
            else {
                bytes.appendVarint(0)
                continue
            }
            var fields = FieldTable()
            let record = RecordValue.object(kept).encode(fields: &fields)
            let table = try Catalog.encoder.encode(fields)
            var value: [UInt8] = []
            value.appendVarint(UInt64(table.count))
            value.append(contentsOf: table)
            value.append(contentsOf: record)
            bytes.appendVarint(UInt64(value.count))
            bytes.append(contentsOf: value)
        }
        bytes.appendBytes(of: Checksum.crc32c(bytes).littleEndian)
        return bytes
    }

    static func decode(_ bytes: BorrowedBytes, token: HistoryToken) throws -> HistoryEntry {
        guard bytes.count >= 5,
            Checksum.crc32c(bytes.extracting(..<(bytes.count - 4)))
                == UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
        else { throw damaged(token.position, "its checksum does not match its bytes") }
        let reader = ByteReader(bytes.extracting(..<(bytes.count - 4)))
        do {
            var offset = 0
            guard try reader.readByte(at: &offset) == entryVersion else {
                throw damaged(token.position, "it has a version this program does not read")
            }
            let micros = Int64(bitPattern: try reader.readLittleEndian(at: &offset, count: 8))
            let origin = try reader.readLittleEndian(at: &offset, count: 8)
            let transactionID = Int(clamping: try reader.readVarint(at: &offset))
            let authorLength = try reader.readVarint(at: &offset)
            var author: String?
            if authorLength > 0 {
                let utf8 = try reader.readSlice(at: &offset, count: Int(clamping: authorLength - 1))
                author = String(decoding: utf8, as: UTF8.self)
            }
            let entityCount = try reader.readCount(at: &offset, minimumElementSize: 1)
            var entities: [String] = []
            entities.reserveCapacity(entityCount)
            for _ in 0..<entityCount { entities.append(try reader.readText(at: &offset)) }
            func entity() throws -> String {
                let index = try reader.readVarint(at: &offset)
                guard index < entities.count else { throw damaged(token.position, "it names an entity it lacks") }
                return entities[Int(index)]
            }
            let changeCount = try reader.readCount(at: &offset, minimumElementSize: 18)
            var changes: [ChangeSet.Change] = []
            changes.reserveCapacity(changeCount)
            var tombstones: [HistoryTombstone] = []
            for _ in 0..<changeCount {
                guard let code = ChangeLog.Kind(rawValue: try reader.readByte(at: &offset)) else {
                    throw damaged(token.position, "a change has an unknown kind")
                }
                let name = try entity()
                let id = try reader.readUUID(at: &offset)
                func cause() throws -> ChangeSet.ModelID {
                    let causeEntity = try entity()
                    return ChangeSet.ModelID(entity: causeEntity, id: try reader.readUUID(at: &offset))
                }
                let kind: ChangeSet.Change.Kind
                switch code {
                case .inserted: kind = .inserted
                case .updated: kind = .updated
                case .nullified: kind = .nullified(by: try cause())
                case .deleted: kind = .deleted
                case .cascaded: kind = .cascaded(from: try cause())
                }
                changes.append(ChangeSet.Change(kind, entity: name, id: id))
                guard code == .deleted || code == .cascaded else { continue }
                let length = try reader.readLength(at: &offset)
                var values: [String: RecordValue] = [:]
                if length > 0 {
                    let kept = try reader.readSlice(at: &offset, count: length)
                    values = try keptValues(kept, position: token.position)
                }
                var cascadedFrom: ChangeSet.ModelID?
                if case .cascaded(let from) = kind { cascadedFrom = from }
                tombstones.append(HistoryTombstone(entity: name, id: id, cascadedFrom: cascadedFrom, values: values))
            }
            guard offset == reader.count else { throw damaged(token.position, "it has bytes after its changes") }
            return HistoryEntry(
                token: token, date: Date(timeIntervalSince1970: Double(micros) / 1_000_000), author: author,
                changes: changes, tombstones: tombstones, origin: origin, transactionID: transactionID)
        } catch let error as RecordFormatError {
            throw damaged(token.position, "it is cut short or malformed (\(error))")
        }
    }

    private static func keptValues(_ bytes: BorrowedBytes, position: UInt64) throws -> [String: RecordValue] {
        let reader = ByteReader(bytes)
        var offset = 0
        let tableLength = try reader.readLength(at: &offset)
        let table = try reader.readSlice(at: &offset, count: tableLength)
        let fields: FieldTable
        do {
            fields = try Catalog.decoder.decode(FieldTable.self, from: Data(table))
        } catch {
            throw damaged(position, "a tombstone's field table does not decode")
        }
        guard case .object(let entries) = try RecordValue.decode(from: bytes.extracting(offset...), fields: fields)
        else { throw damaged(position, "a tombstone's values are not a record of fields") }
        return Dictionary(entries.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    static func damaged(_ position: UInt64, _ reason: String) -> KVStoreError {
        KVStoreError(
            .damaged,
            message: "The history entry \(position) is damaged: \(reason). Run 'kvtool check'; delete the history up "
                + "to it with deleteHistory(before:) to read past it")
    }
}
