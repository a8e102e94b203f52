import Foundation

/// A task of the projects-and-tasks domain: the record every scenario stores, about 100 bytes encoded.
///
/// The benchmark generates tasks deterministically (see ``Dataset``). Today they are stored with the fixed binary
/// layout of ``encode(into:)``; once the KVStore subject exists, the same type becomes its model and ``Dataset``
/// encodes the baseline's records with the KVStore codec instead, so that both sides store the same bytes.
struct TaskRecord: Codable, Hashable, Sendable {
    /// The task's ID: the key of its record.
    var id: UUID
    /// A short title, 30 to 46 ASCII characters.
    var title: String
    /// Whether the task is done.
    var isDone: Bool
    /// When the task was created.
    var createdAt: Date
    /// When the task is due.
    var dueAt: Date
    /// The project the task belongs to; the indexed attribute (`projectID` → task IDs). Every generated task has
    /// one; the type is optional because a to-one relationship of the store is.
    var projectID: UUID?

    /// The project, for the fixed layout and the raw tables, which always have one.
    var project: UUID {
        projectID ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }
}

/// A project: the parent of ten tasks, deleted with them by the cascade scenario.
struct ProjectRecord: Codable, Hashable, Sendable {
    /// The project's ID: the key of its record.
    var id: UUID
    /// The project's name.
    var name: String
}

/// Field tags of the fixed binary layout; a tag byte before each field keeps the size close to that of a
/// self-describing codec.
private enum Tag {
    static let id: UInt8 = 1
    static let title: UInt8 = 2
    static let isDone: UInt8 = 3
    static let createdAt: UInt8 = 4
    static let dueAt: UInt8 = 5
    static let projectID: UInt8 = 6
    static let name: UInt8 = 7
}

/// The error of a record whose bytes do not decode.
struct RecordDecodingError: Error, CustomStringConvertible {
    /// What was wrong.
    var description: String
}

extension TaskRecord {
    /// The offset of the project ID in the encoded record; the raw baseline reads it there without decoding.
    static let projectIDOffset = 1 + 16 + 1 + 1 + 1 + 8 + 1 + 8 + 1

    /// Appends the record in the fixed layout: tagged id, done flag, dates and project ID at fixed offsets, then the
    /// length-prefixed title.
    ///
    /// - Parameter bytes: The buffer to append to; callers reuse one buffer per chunk.
    func encode(into bytes: inout [UInt8]) {
        bytes.append(Tag.id)
        id.appendBytes(to: &bytes)
        bytes.append(Tag.isDone)
        bytes.append(isDone ? 1 : 0)
        bytes.append(Tag.createdAt)
        appendDouble(createdAt.timeIntervalSinceReferenceDate, to: &bytes)
        bytes.append(Tag.dueAt)
        appendDouble(dueAt.timeIntervalSinceReferenceDate, to: &bytes)
        bytes.append(Tag.projectID)
        project.appendBytes(to: &bytes)
        bytes.append(Tag.title)
        let utf8 = title.utf8
        bytes.append(UInt8(truncatingIfNeeded: utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Decodes a record encoded by ``encode(into:)``, checking every tag and length.
    ///
    /// - Parameter bytes: The encoded record, typically LMDB's memory inside a read transaction.
    /// - Throws: ``RecordDecodingError`` when the bytes are not a task record.
    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(bytes)
        try reader.expect(Tag.id)
        id = try reader.uuid()
        try reader.expect(Tag.isDone)
        isDone = try reader.byte() != 0
        try reader.expect(Tag.createdAt)
        createdAt = Date(timeIntervalSinceReferenceDate: try reader.double())
        try reader.expect(Tag.dueAt)
        dueAt = Date(timeIntervalSinceReferenceDate: try reader.double())
        try reader.expect(Tag.projectID)
        projectID = try reader.uuid()
        try reader.expect(Tag.title)
        title = try reader.string()
    }
}

extension ProjectRecord {
    /// Appends the record in the fixed layout: tagged id, then the length-prefixed name.
    ///
    /// - Parameter bytes: The buffer to append to.
    func encode(into bytes: inout [UInt8]) {
        bytes.append(Tag.id)
        id.appendBytes(to: &bytes)
        bytes.append(Tag.name)
        let utf8 = name.utf8
        bytes.append(UInt8(truncatingIfNeeded: utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Decodes a record encoded by ``encode(into:)``, checking every tag and length.
    ///
    /// - Throws: ``RecordDecodingError`` when the bytes are not a project record.
    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(bytes)
        try reader.expect(Tag.id)
        id = try reader.uuid()
        try reader.expect(Tag.name)
        name = try reader.string()
    }
}

extension UUID {
    /// Creates a UUID from 16 bytes.
    ///
    /// - Parameter bytes: At least 16 bytes; the first 16 are the UUID.
    init(bytes: UnsafeRawBufferPointer) {
        self.init(uuid: bytes.loadUnaligned(as: uuid_t.self))
    }

    /// Appends the 16 bytes of the UUID.
    func appendBytes(to bytes: inout [UInt8]) {
        withUnsafeBytes(of: uuid) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with the 16 bytes of the UUID, without allocating.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: uuid, body)
    }

    /// The UUID as a pair of big-endian integers, which sort like its bytes.
    var sortKey: SortKey {
        withUnsafeBytes(of: uuid) { bytes in
            SortKey(
                high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    /// A UUID's bytes as two integers, compared as LMDB compares the keys.
    struct SortKey: Comparable, Hashable, Sendable {
        /// The first eight bytes, big-endian.
        var high: UInt64
        /// The last eight bytes, big-endian.
        var low: UInt64

        /// Whether `lhs` sorts before `rhs`.
        static func < (lhs: SortKey, rhs: SortKey) -> Bool {
            lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
        }
    }
}

private func appendDouble(_ value: Double, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
}

/// A bounds-checked reader over encoded bytes.
private struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count <= bytes.count - offset else {
            throw RecordDecodingError(description: "Record truncated at byte \(offset) of \(bytes.count)")
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func byte() throws -> UInt8 {
        try take(1)[0]
    }

    mutating func expect(_ tag: UInt8) throws {
        let found = try byte()
        guard found == tag else {
            throw RecordDecodingError(description: "Expected field tag \(tag) at byte \(offset - 1), found \(found)")
        }
    }

    mutating func uuid() throws -> UUID {
        UUID(bytes: try take(16))
    }

    mutating func double() throws -> Double {
        Double(bitPattern: UInt64(littleEndian: try take(8).loadUnaligned(as: UInt64.self)))
    }

    mutating func string() throws -> String {
        let count = Int(try byte())
        return String(decoding: try take(count), as: UTF8.self)
    }
}
