import Foundation

/// What a run read or left in its store, as decoded field values: the number of records and an order-independent
/// checksum of every field of each, so that two sides that read or wrote the same records in different orders agree.
///
/// The KVStore subject and the raw SQLite side both fold each decoded record into one, in the same place of their
/// runs; a scenario then requires the two digests of a row to be equal
/// (``ScenarioContext/result(_:variant:records:subject:baseline:sqlite:)``).
struct RecordDigest: Codable, Equatable, Sendable {
    /// The number of records folded in.
    var records = 0
    /// The wrapping sum of a hash of each record's fields.
    var checksum: UInt64 = 0

    /// Folds in a task: its ID, title, done flag, both dates and project ID.
    @inline(__always)
    mutating func add(_ task: TaskRecord) {
        var hash = Self.mix(task.id)
        hash = Self.combine(hash, Self.mix(task.title))
        hash = Self.combine(hash, task.isDone ? 1 : 2)
        hash = Self.combine(hash, task.createdAt.timeIntervalSinceReferenceDate.bitPattern)
        hash = Self.combine(hash, task.dueAt.timeIntervalSinceReferenceDate.bitPattern)
        hash = Self.combine(hash, task.projectID.map(Self.mix) ?? 3)
        records += 1
        checksum &+= Self.finish(hash)
    }

    /// Folds in tasks.
    @inline(__always)
    mutating func add<Tasks: Sequence<TaskRecord>>(tasks: Tasks) {
        for task in tasks { add(task) }
    }

    /// Folds in a project: its ID and name.
    mutating func add(_ project: ProjectRecord) {
        let hash = Self.combine(Self.mix(project.id), Self.mix(project.name))
        records += 1
        checksum &+= Self.finish(hash &+ 0x5052_4F4A)
    }

    /// Folds in an order of the query-power scenario: its ID, customer's ID, status, total and date.
    mutating func add(_ order: Order) {
        var hash = Self.combine(Self.mix(order.id), order.customerID.map(Self.mix) ?? 3)
        hash = Self.combine(hash, UInt64(bitPattern: Int64(order.status)))
        hash = Self.combine(hash, UInt64(bitPattern: Int64(order.total)))
        hash = Self.combine(hash, order.placedAt.timeIntervalSinceReferenceDate.bitPattern)
        records += 1
        checksum &+= Self.finish(hash &+ 0x4F52_4445)
    }

    /// Folds in another digest, as if its records had been folded in here.
    mutating func add(_ other: RecordDigest) {
        records += other.records
        checksum &+= other.checksum
    }

    // MARK: - Hashing

    @inline(__always)
    private static func combine(_ hash: UInt64, _ value: UInt64) -> UInt64 {
        (hash ^ value) &* 0x9E37_79B9_7F4A_7C15 &+ 0x632B_E59B_D9B4_E019
    }

    /// A 64-bit finalizer (SplitMix64's), so that the sum of the hashes of different records rarely collides.
    @inline(__always)
    private static func finish(_ hash: UInt64) -> UInt64 {
        var value = hash
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    @inline(__always)
    private static func mix(_ id: UUID) -> UInt64 {
        withUnsafeBytes(of: id.uuid) { bytes in
            combine(bytes.loadUnaligned(as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// A hash of the string's UTF-8 bytes, eight at a time.
    @inline(__always)
    private static func mix(_ text: String) -> UInt64 {
        // Native strings are contiguous (about half the cost of `withUTF8` on a copy); others are copied.
        text.utf8.withContiguousStorageIfAvailable { bytes in mix(UnsafeRawBufferPointer(bytes)) }
            ?? Array(text.utf8).withUnsafeBytes { mix($0) }
    }

    @inline(__always)
    private static func mix(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        guard count >= 8 else {
            var tail = UInt64(count)
            for byte in bytes { tail = tail << 8 | UInt64(byte) }
            return combine(0, tail)
        }
        var hash = UInt64(count)
        var offset = 0
        while offset &+ 8 < count {
            hash = combine(hash, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset &+= 8
        }
        // The last eight bytes, overlapping the previous word when the count is not a multiple of eight.
        return combine(hash, bytes.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
    }
}
