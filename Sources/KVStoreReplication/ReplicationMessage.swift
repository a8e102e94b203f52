import Foundation
import KVStore
import NATS

/// Where a message stands in the primary's history: the group of commits it carries part of.
///
/// The publisher sends the primary's history in groups: a run of consecutive commits `first...last` with the records
/// of the models they changed as they are after `last`. A group is as long as it must be for that to be exact (a
/// model that a later commit of the run changes again is sent once, after that commit), which is one commit while
/// the publisher keeps up. A group larger than a message goes out in parts; a replica applies a group in one
/// transaction once it has all of them, so its readers only ever see states the primary had.
///
/// The headers name all of it, so that a publisher that resumes and a replica that looks for its place read the
/// stream's messages without their payloads.
struct GroupHeader: Equatable, Sendable {
    /// The primary's history (`HistoryToken.storeID`).
    var storeID: UUID
    /// The group's first and last commit.
    var first: UInt64
    var last: UInt64
    /// This message's part (from 1) and the group's number of parts.
    var part: Int
    var count: Int
    /// The CRC-32C of the last commit's history entry as the primary stores it: a publisher that resumes compares it
    /// with its own entry, to tell a stream of another past.
    var check: UInt32
    /// When the primary committed `last`, in microseconds since 1970.
    var committedMicros: Int64
    /// The last commit of the snapshot of the primary the group was read in (the records are as they were then,
    /// which is as `last` left them). It grows from one publisher pass to the next, so a replica finds its place by
    /// it: the catalog changes outside the history (a program adds an entity or an index when it opens the store), a
    /// pass sends the catalog with its first group when it changed, and a replica takes a catalog of a snapshot newer
    /// than its own even from a group whose commits it has (a publisher behind the copy the replica started from).
    var snapshot: UInt64

    enum Name {
        static let store = "KV-Store"
        static let commits = "KV-Commits"
        static let part = "KV-Part"
        static let check = "KV-Check"
        static let committed = "KV-Committed"
        static let snapshot = "KV-Snapshot"
    }

    /// The check of a history entry's stored bytes: their CRC-32C after a marker byte. (The CRC-32C of the bytes
    /// alone would be the same for every entry: an entry ends with the CRC-32C of what comes before, and a CRC over
    /// data followed by its own CRC is a constant.)
    static func check(of entry: [UInt8]) -> UInt32 {
        Checksum.crc32c([0x4B] + entry)
    }

    /// The message's `Nats-Msg-Id`: the token of the group's last commit, the part, and the stream sequence the
    /// group's first part follows.
    ///
    /// A group whose publisher was stopped part-way is sent again whole, after the parts that made it: from another
    /// snapshot its parts may differ (a catalog changed meanwhile), so the new parts must not share IDs with the old
    /// ones, which the stream would drop as repeats. A publish repeated unchanged keeps its ID.
    func messageID(after base: UInt64) -> String {
        "\(storeID.uuidString):\(last)#\(part)/\(count)@\(base)"
    }

    /// When the primary committed `last`.
    var committed: Date { Date(timeIntervalSince1970: Double(committedMicros) / 1_000_000) }

    var isLastPart: Bool { part == count }

    var headers: NATSHeaders {
        let headers: NATSHeaders = [
            Name.store: storeID.uuidString, Name.commits: "\(first)-\(last)", Name.part: "\(part)/\(count)",
            Name.check: String(check, radix: 16), Name.committed: String(committedMicros),
            Name.snapshot: String(snapshot),
        ]
        return headers
    }

    init(
        storeID: UUID, first: UInt64, last: UInt64, part: Int, count: Int, check: UInt32, committedMicros: Int64,
        snapshot: UInt64
    ) {
        self.storeID = storeID
        self.first = first
        self.last = last
        self.part = part
        self.count = count
        self.check = check
        self.committedMicros = committedMicros
        self.snapshot = snapshot
    }

    /// Reads the headers of a message of the stream.
    ///
    /// - Throws: ``ReplicationError/Kind/invalidMessage`` naming the sequence when one is missing or malformed.
    init(headers: NATSHeaders?, sequence: UInt64, stream: String) throws(ReplicationError) {
        func invalid(_ reason: String) -> ReplicationError {
            ReplicationError(
                .invalidMessage,
                "The message \(sequence) of the stream '\(stream)' is not a KVStore history group (\(reason)); a "
                    + "stream of a store's history must hold nothing else. Publish to another subject, or start a "
                    + "new stream")
        }
        guard let headers else { throw invalid("it has no headers") }
        guard let store = headers[Name.store], let storeID = UUID(uuidString: store) else {
            throw invalid("no \(Name.store) header")
        }
        let commits = headers[Name.commits]?.split(separator: "-").compactMap { UInt64($0) } ?? []
        guard commits.count == 2, commits[0] >= 1, commits[0] <= commits[1] else {
            throw invalid("no valid \(Name.commits) header")
        }
        let part = headers[Name.part]?.split(separator: "/").compactMap { Int($0) } ?? []
        guard part.count == 2, part[0] >= 1, part[0] <= part[1] else { throw invalid("no valid \(Name.part) header") }
        guard let check = headers[Name.check].flatMap({ UInt32($0, radix: 16) }) else {
            throw invalid("no valid \(Name.check) header")
        }
        guard let committed = headers[Name.committed].flatMap({ Int64($0) }) else {
            throw invalid("no valid \(Name.committed) header")
        }
        guard let snapshot = headers[Name.snapshot].flatMap({ UInt64($0) }), snapshot >= commits[1] else {
            throw invalid("no valid \(Name.snapshot) header")
        }
        self.init(
            storeID: storeID, first: commits[0], last: commits[1], part: part[0], count: part[1], check: check,
            committedMicros: committed, snapshot: snapshot)
    }
}

/// What a group carries, in the order a replica applies it.
enum GroupItem: Equatable, Sendable {
    /// A catalog entry of the primary, as it stores it. A group with any replaces the replica's catalog with them.
    case catalogEntry(key: [UInt8], value: [UInt8])
    /// A history entry of the primary, as it stores it.
    case historyEntry(position: UInt64, bytes: [UInt8])
    /// A model's record after the group, as the primary stores it.
    case record(entity: String, id: UUID, bytes: [UInt8])
    /// A model the group deleted (or inserted and deleted).
    case deletion(entity: String, id: UUID)
    /// Bytes `offset..<offset + bytes.count` of an external value's chunk of `total` bytes, under its key in the
    /// entity's `external/<Entity>` table: a chunk larger than a message goes in pieces.
    case externalChunk(entity: String, key: [UInt8], offset: Int, total: Int, bytes: [UInt8])

    private enum Tag: UInt8 {
        case catalogEntry = 1
        case historyEntry = 2
        case record = 3
        case deletion = 4
        case externalChunk = 5
    }

    /// The version byte that starts every payload.
    static let payloadVersion: UInt8 = 1

    /// The bytes the item takes in a payload.
    var encodedSize: Int {
        switch self {
        case .catalogEntry(let key, let value): 1 + 10 + key.count + 10 + value.count
        case .historyEntry(_, let bytes): 1 + 8 + 10 + bytes.count
        case .record(let entity, _, let bytes): 1 + 10 + entity.utf8.count + 16 + 10 + bytes.count
        case .deletion(let entity, _): 1 + 10 + entity.utf8.count + 16
        case .externalChunk(let entity, let key, _, _, let bytes):
            1 + 10 + entity.utf8.count + 10 + key.count + 10 + 10 + 10 + bytes.count
        }
    }

    func encode(into bytes: inout [UInt8]) {
        switch self {
        case .catalogEntry(let key, let value):
            bytes.append(Tag.catalogEntry.rawValue)
            Self.appendBlob(key, to: &bytes)
            Self.appendBlob(value, to: &bytes)
        case .historyEntry(let position, let entry):
            bytes.append(Tag.historyEntry.rawValue)
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: position >> shift)) }
            Self.appendBlob(entry, to: &bytes)
        case .record(let entity, let id, let record):
            bytes.append(Tag.record.rawValue)
            Self.appendBlob(Array(entity.utf8), to: &bytes)
            bytes.append(contentsOf: id.keyBytes)
            Self.appendBlob(record, to: &bytes)
        case .deletion(let entity, let id):
            bytes.append(Tag.deletion.rawValue)
            Self.appendBlob(Array(entity.utf8), to: &bytes)
            bytes.append(contentsOf: id.keyBytes)
        case .externalChunk(let entity, let key, let offset, let total, let chunk):
            bytes.append(Tag.externalChunk.rawValue)
            Self.appendBlob(Array(entity.utf8), to: &bytes)
            Self.appendBlob(key, to: &bytes)
            Self.appendVarint(UInt64(offset), to: &bytes)
            Self.appendVarint(UInt64(total), to: &bytes)
            Self.appendBlob(chunk, to: &bytes)
        }
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func appendBlob(_ blob: [UInt8], to bytes: inout [UInt8]) {
        appendVarint(UInt64(blob.count), to: &bytes)
        bytes.append(contentsOf: blob)
    }

    /// Decodes a payload's items.
    ///
    /// - Throws: ``ReplicationError/Kind/invalidMessage`` for bytes that do not decode.
    static func decodeAll(_ payload: [UInt8], sequence: UInt64, stream: String) throws(ReplicationError) -> [GroupItem]
    {
        var reader = PayloadReader(bytes: payload)
        func invalid(_ reason: String) -> ReplicationError {
            ReplicationError(
                .invalidMessage,
                "The payload of message \(sequence) of the stream '\(stream)' does not decode (\(reason)): it is "
                    + "damaged, or was not written by a KVStore publisher of this version")
        }
        guard let version = reader.byte(), version == payloadVersion else {
            throw invalid("its version is not \(payloadVersion)")
        }
        var items: [GroupItem] = []
        // The entity of the previous record: records of one entity follow each other.
        var lastEntity: (bytes: [UInt8], name: String) = ([], "")
        func name(_ bytes: [UInt8]) -> String {
            if bytes != lastEntity.bytes { lastEntity = (bytes, String(decoding: bytes, as: UTF8.self)) }
            return lastEntity.name
        }
        while !reader.isAtEnd {
            guard let raw = reader.byte(), let tag = Tag(rawValue: raw) else { throw invalid("an unknown item") }
            switch tag {
            case .catalogEntry:
                guard let key = reader.blob(), let value = reader.blob() else { throw invalid("a short catalog entry") }
                items.append(.catalogEntry(key: key, value: value))
            case .historyEntry:
                guard let position = reader.uint64(), let entry = reader.blob() else {
                    throw invalid("a short history entry")
                }
                items.append(.historyEntry(position: position, bytes: entry))
            case .record:
                guard let entity = reader.blob(), let id = reader.uuid(), let record = reader.blob() else {
                    throw invalid("a short record")
                }
                items.append(.record(entity: name(entity), id: id, bytes: record))
            case .deletion:
                guard let entity = reader.blob(), let id = reader.uuid() else { throw invalid("a short deletion") }
                items.append(.deletion(entity: name(entity), id: id))
            case .externalChunk:
                guard let entity = reader.blob(), let key = reader.blob(), let offset = reader.varint(),
                    let total = reader.varint(), let chunk = reader.blob(),
                    offset <= total, UInt64(chunk.count) <= total - offset, total <= UInt64(Int.max)
                else { throw invalid("a short external chunk") }
                items.append(
                    .externalChunk(
                        entity: name(entity), key: key, offset: Int(offset), total: Int(total), bytes: chunk))
            }
        }
        return items
    }

    /// Packs items into payloads of at most `limit` bytes, in order, splitting between items.
    ///
    /// - Throws: ``ReplicationError/Kind/unsupported`` for an item larger than a payload.
    static func payloads(_ items: [GroupItem], limit: Int) throws(ReplicationError) -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        var current: [UInt8] = [payloadVersion]
        for item in items {
            let size = item.encodedSize
            guard size + 1 <= limit else {
                throw ReplicationError(
                    .unsupported,
                    "\(item.summary) takes \(size) bytes, more than a message of the stream may carry (\(limit) "
                        + "bytes beside the headers): raise the NATS server's max_payload, or keep large values in "
                        + "external storage")
            }
            if current.count + size > limit {
                payloads.append(current)
                current = [payloadVersion]
            }
            item.encode(into: &current)
        }
        if current.count > 1 || payloads.isEmpty { payloads.append(current) }
        return payloads
    }

    private var summary: String {
        switch self {
        case .catalogEntry(let key, _): "The catalog entry '\(String(decoding: key, as: UTF8.self))'"
        case .historyEntry(let position, _): "The history entry \(position)"
        case .record(let entity, let id, _): "The record of \(entity) \(id)"
        case .deletion(let entity, let id): "The deletion of \(entity) \(id)"
        case .externalChunk(let entity, _, _, _, _): "A piece of an external value of \(entity)"
        }
    }
}

/// Reads a payload front to back; every read returns `nil` past the end.
private struct PayloadReader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint64() -> UInt64? {
        guard bytes.count - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * index) }
        offset += 8
        return value
    }

    mutating func uuid() -> UUID? {
        guard bytes.count - offset >= 16 else { return nil }
        defer { offset += 16 }
        return UUID(keyBytes: bytes[offset..<offset + 16])
    }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard let byte = byte(), shift < 64 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    mutating func blob() -> [UInt8]? {
        guard let length = varint(), length <= UInt64(bytes.count - offset) else { return nil }
        let blob = Array(bytes[offset..<offset + Int(length)])
        offset += Int(length)
        return blob
    }
}
