import Foundation
import Testing

@testable import KVStore

/// A model with a field of every kind a ``FieldWriter`` writes directly, and some it hands to Codable, stored through
/// `Codable` alone.
struct CodedSample: Model, Equatable {
    struct Size: Codable, Equatable {
        var width: Int
        var height: Int
    }

    var id = UUID.timeOrdered()
    var title: String
    var isPinned = false
    var score = 0.0
    var ratio: Float = 0
    var count = 0
    var small: Int8 = 0
    var big: UInt64 = 0
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
    var ownerID: UUID?
    var payload = Data()
    var note: String?
    var tags: [String] = []
    var link: URL?
    var price: Decimal = 0
    var size = Size(width: 0, height: 0)

    static let entity = Entity<CodedSample>(name: "Sample", indexes: [.unique(\.title), .index(\.count)])
}

/// ``CodedSample`` stored through ``FieldCodable``, under the same entity name: the two read each other's records.
struct FieldSample: Model, FieldCodable, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var isPinned = false
    var score = 0.0
    var ratio: Float = 0
    var count = 0
    var small: Int8 = 0
    var big: UInt64 = 0
    var createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
    var ownerID: UUID?
    var payload = Data()
    var note: String?
    var tags: [String] = []
    var link: URL?
    var price: Decimal = 0
    var size = CodedSample.Size(width: 0, height: 0)

    static let entity = Entity<FieldSample>(name: "Sample", indexes: [.unique(\.title), .index(\.count)])

    init(_ sample: CodedSample) {
        (id, title, isPinned, score, ratio, count) =
            (sample.id, sample.title, sample.isPinned, sample.score, sample.ratio, sample.count)
        (small, big, createdAt, ownerID, payload, note) =
            (sample.small, sample.big, sample.createdAt, sample.ownerID, sample.payload, sample.note)
        (tags, link, price, size) = (sample.tags, sample.link, sample.price, sample.size)
    }

    init(fields: FieldReader) throws {
        id = try fields.decode(UUID.self, forKey: "id")
        title = try fields.decode(String.self, forKey: "title")
        isPinned = try fields.decode(Bool.self, forKey: "isPinned")
        score = try fields.decode(Double.self, forKey: "score")
        ratio = try fields.decode(Float.self, forKey: "ratio")
        count = try fields.decode(Int.self, forKey: "count")
        small = try fields.decode(Int8.self, forKey: "small")
        big = try fields.decode(UInt64.self, forKey: "big")
        createdAt = try fields.decode(Date.self, forKey: "createdAt")
        ownerID = try fields.decodeIfPresent(UUID.self, forKey: "ownerID")
        payload = try fields.decode(Data.self, forKey: "payload")
        note = try fields.decodeIfPresent(String.self, forKey: "note")
        tags = try fields.decode([String].self, forKey: "tags")
        link = try fields.decodeIfPresent(URL.self, forKey: "link")
        price = try fields.decode(Decimal.self, forKey: "price")
        size = try fields.decode(CodedSample.Size.self, forKey: "size")
    }

    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(title, forKey: "title")
        try fields.encode(isPinned, forKey: "isPinned")
        try fields.encode(score, forKey: "score")
        try fields.encode(ratio, forKey: "ratio")
        try fields.encode(count, forKey: "count")
        try fields.encode(small, forKey: "small")
        try fields.encode(big, forKey: "big")
        try fields.encode(createdAt, forKey: "createdAt")
        try fields.encodeIfPresent(ownerID, forKey: "ownerID")
        try fields.encode(payload, forKey: "payload")
        try fields.encodeIfPresent(note, forKey: "note")
        try fields.encode(tags, forKey: "tags")
        try fields.encodeIfPresent(link, forKey: "link")
        try fields.encode(price, forKey: "price")
        try fields.encode(size, forKey: "size")
    }
}

/// Reads some of a sample's fields, in another order than they are stored, and skips the rest.
struct PartialSample: Model, FieldCodable, Equatable {
    var id: UUID
    var title: String
    var count: Int
    var note: String?

    static let entity = Entity<PartialSample>(name: "Sample")

    init(id: UUID, title: String, count: Int, note: String?) {
        (self.id, self.title, self.count, self.note) = (id, title, count, note)
    }

    init(fields: FieldReader) throws {
        note = try fields.decodeIfPresent(String.self, forKey: "note")
        count = try fields.decode(Int.self, forKey: "count")
        title = try fields.decode(String.self, forKey: "title")
        id = try fields.decode(UUID.self, forKey: "id")
    }

    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(title, forKey: "title")
        try fields.encode(count, forKey: "count")
        try fields.encodeIfPresent(note, forKey: "note")
    }
}

/// Reads a stored sample's fields as what they are not: the sample's title names the misreading.
struct MisreadSample: Model, FieldCodable {
    enum Misreading: String, CaseIterable {
        case missingField, titleAsInt, countAsInt8

        /// The field read wrongly.
        var field: String {
            switch self {
            case .missingField: "subtitle"
            case .titleAsInt: "title"
            case .countAsInt8: "count"
            }
        }
    }

    var id = UUID.timeOrdered()

    static let entity = Entity<MisreadSample>(name: "Sample")

    init(fields: FieldReader) throws {
        id = try fields.decode(UUID.self, forKey: "id")
        switch Misreading(rawValue: try fields.decode(String.self, forKey: "title")) {
        case .missingField: _ = try fields.decode(String.self, forKey: "subtitle")
        case .titleAsInt: _ = try fields.decode(Int.self, forKey: "title")
        case .countAsInt8: _ = try fields.decode(Int8.self, forKey: "count")
        case nil: break
        }
    }

    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
    }
}

/// A model whose `write(to:)` fails part-way, or writes a value a record cannot hold.
struct FailingSample: Model, FieldCodable {
    struct Refused: Error {}

    var id = UUID.timeOrdered()
    var title: String
    var huge: UInt128 = 0

    static let entity = Entity<FailingSample>(name: "Sample")

    init(title: String, huge: UInt128 = 0) {
        (self.title, self.huge) = (title, huge)
    }

    init(fields: FieldReader) throws {
        id = try fields.decode(UUID.self, forKey: "id")
        title = try fields.decode(String.self, forKey: "title")
        huge = try fields.decodeIfPresent(UInt128.self, forKey: "huge") ?? 0
    }

    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(title, forKey: "title")
        if title == "refuse" { throw Refused() }
        try fields.encode(huge, forKey: "huge")
    }
}

/// Keeps the writer a model was handed, to show it cannot be used after the call.
final class WriterBox: @unchecked Sendable {
    var writer: FieldWriter?
}

/// A model that keeps its writer.
struct LeakingSample: Model, FieldCodable {
    static let box = WriterBox()

    var id = UUID.timeOrdered()

    static let entity = Entity<LeakingSample>(name: "Sample")

    init() {}

    init(fields: FieldReader) throws {
        id = try fields.decode(UUID.self, forKey: "id")
    }

    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        Self.box.writer = fields
    }
}

/// Writes `samples` through `Codable` to a new store, then runs `body` with a container for `type` on that store.
private func withSamples<M: Model, R>(
    _ samples: [CodedSample],
    openedAs type: M.Type,
    _ body: (ModelContainer) throws -> R
) throws -> R {
    let directory = StoreDirectory()
    let configuration = ModelConfiguration(path: directory.path, durability: .off)
    let writer = try ModelContainer(for: CodedSample.self, configuration: configuration)
    let context = ModelContext(writer)
    for sample in samples { context.insert(sample) }
    try context.save()
    try writer.close()
    let container = try ModelContainer(for: type, configuration: configuration)
    defer { try? container.close() }
    return try body(container)
}

@Suite struct FieldCodableTests {
    static let samples: [CodedSample] = [
        CodedSample(title: "defaults"),
        CodedSample(
            title: "everything", isPinned: true, score: -2.5, ratio: 0.25, count: -300, small: -128, big: .max,
            createdAt: Date(timeIntervalSinceReferenceDate: -1e9), ownerID: UUID(), payload: Data([0, 1, 2, 255]),
            note: "ünïcödé ✓", tags: ["a", "", "c"], link: URL(string: "https://example.com/a?b=c"),
            price: Decimal(12_345) / 1_000, size: CodedSample.Size(width: 3, height: -4)),
        CodedSample(title: "", score: .infinity, ratio: -.greatestFiniteMagnitude, count: .max, big: 0, note: ""),
    ]

    @Test(arguments: samples)
    func writesTheBytesCodableWrites(sample: CodedSample) throws {
        var codedFields = FieldTable()
        let coded = try encodeTestRecord(sample, fields: &codedFields)
        var fields = FieldTable()
        var bytes: [UInt8] = []
        var encoder = RecordEncoder()
        try encoder.encodeFields(fields: &fields, into: &bytes) { try FieldSample(sample).write(to: $0) }
        #expect(bytes == coded)
        #expect(fields == codedFields)
        let decoded = try bytes.withBorrowedBytes { bytes in
            try RecordDecoder().decodeFields(from: bytes, fields: fields) { try FieldSample(fields: $0) }
        }
        #expect(decoded == FieldSample(sample))
    }

    @Test func recordsWrittenThroughCodableReadThroughFieldsAndBack() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        do {
            let container = try ModelContainer(for: CodedSample.self, configuration: configuration)
            let context = ModelContext(container)
            for sample in Self.samples { context.insert(sample) }
            try context.save()
            try container.close()
        }
        do {
            let container = try ModelContainer(for: FieldSample.self, configuration: configuration)
            let context = ModelContext(container)
            let read = try context.fetch(FetchDescriptor<FieldSample>(sortBy: [SortDescriptor(\.title)]))
            #expect(read == Self.samples.map(FieldSample.init).sorted { $0.title < $1.title })
            // The index on count answers through the field-coded model too.
            let negative = try context.fetch(FetchDescriptor<FieldSample>(predicate: #Predicate { $0.count < 0 }))
            #expect(negative.map(\.title) == ["everything"])
            var changed = try #require(read.first { $0.title == "defaults" })
            changed.count = 7
            changed.note = "changed through fields"
            context.insert(changed)
            context.insert(FieldSample(CodedSample(title: "new through fields", ownerID: UUID())))
            try context.save()
            try container.close()
        }
        let container = try ModelContainer(for: CodedSample.self, configuration: configuration)
        defer { try? container.close() }
        let context = ModelContext(container)
        let byTitle = Dictionary(
            uniqueKeysWithValues: try context.fetch(FetchDescriptor<CodedSample>()).map { ($0.title, $0) })
        #expect(byTitle.count == 4)
        #expect(byTitle["defaults"]?.count == 7)
        #expect(byTitle["defaults"]?.note == "changed through fields")
        #expect(byTitle["new through fields"]?.ownerID != nil)
        #expect(byTitle["everything"] == Self.samples[1])
        // The old index entry of the changed model is gone, the new one is there.
        let seven = try context.fetch(FetchDescriptor<CodedSample>(predicate: #Predicate { $0.count == 7 }))
        #expect(seven.map(\.title) == ["defaults"])
        #expect(try context.fetchCount(FetchDescriptor<CodedSample>(predicate: #Predicate { $0.count == 0 })) == 1)
    }

    @Test func readsFieldsInAnyOrderAndSkipsTheOthers() throws {
        try withSamples(Self.samples, openedAs: PartialSample.self) { container throws in
            let partial = try container.read { txn throws in
                try txn.models(for: Self.samples.map(\.id), as: PartialSample.self)
            }
            let expected = Self.samples.map {
                PartialSample(id: $0.id, title: $0.title, count: $0.count, note: $0.note)
            }
            #expect(partial == expected)
            // Writing some of the fields, out of the order of their ids, finds each id by its name.
            let written = PartialSample(id: UUID.timeOrdered(), title: "partial", count: 3, note: "n")
            try container.write { txn throws in try txn.insert(written) }
            let read = try container.read { txn throws in try txn.model(for: written.id, as: PartialSample.self) }
            #expect(read == written)
        }
    }

    @Test(arguments: MisreadSample.Misreading.allCases)
    func aStoreTheFieldsDoNotReadRefusesToOpenNamingEntityAndField(misreading: MisreadSample.Misreading) throws {
        // Opening decodes the first and the last record.
        let sample = CodedSample(title: misreading.rawValue, count: 300)
        let error = try #require(throws: KVStoreError.self) {
            try withSamples([sample, CodedSample(title: "fine")], openedAs: MisreadSample.self) { _ in }
        }
        #expect(error == .incompatibleSchema)
        #expect(error.entity == "Sample")
        #expect(error.field == misreading.field)
        #expect(error.id == sample.id)
    }

    @Test(arguments: MisreadSample.Misreading.allCases)
    func aFieldReadAsWhatItIsNotIsACorruptRecordNamingEntityAndID(misreading: MisreadSample.Misreading) throws {
        // Time-ordered IDs put the misread record between the first and the last, which opening checks.
        let samples = [
            CodedSample(title: "first"), CodedSample(title: misreading.rawValue, count: 300),
            CodedSample(title: "last"),
        ]
        try withSamples(samples, openedAs: MisreadSample.self) { container throws in
            let error = try #require(throws: KVStoreError.self) {
                try container.read { txn throws in try txn.model(for: samples[1].id, as: MisreadSample.self) }
            }
            #expect(error == .corruptRecord)
            #expect(error.entity == "Sample")
            #expect(error.id == samples[1].id)
            #expect(error.description.contains(misreading.field))
            // In a batch too, after the records before it decoded.
            let batchError = try #require(throws: KVStoreError.self) {
                try container.read { txn throws in try txn.models(for: samples.map(\.id), as: MisreadSample.self) }
            }
            #expect(batchError == .corruptRecord)
            #expect(batchError.id == samples[1].id)
            // The other records read.
            let others = try container.read { txn throws in
                try txn.models(for: [samples[0].id, samples[2].id], as: MisreadSample.self)
            }
            #expect(others.map { $0?.id } == [samples[0].id, samples[2].id])
        }
    }

    @Test func aWriteThatThrowsSavesNothing() throws {
        try withContainer(FailingSample.self) { container throws in
            let context = ModelContext(container)
            context.insert(FailingSample(title: "fine"))
            context.insert(FailingSample(title: "refuse"))
            let refused = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(refused == .encodingFailed)
            #expect(refused.entity == "Sample")
            #expect(refused.cause is FailingSample.Refused)
            context.rollback()
            context.insert(FailingSample(title: "too big", huge: UInt128(UInt64.max) + 1))
            let tooBig = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(tooBig == .encodingFailed)
            #expect(tooBig.cause is EncodingError)
            #expect(tooBig.description.contains("does not fit in 64 bits"))
            context.rollback()
            #expect(try context.fetchCount(FetchDescriptor<FailingSample>()) == 0)
            // The writer's buffer and field table are fine after the failures.
            let fits = FailingSample(title: "fits", huge: UInt128(UInt64.max))
            context.insert(fits)
            try context.save()
            #expect(try context.model(for: fits.id, as: FailingSample.self)?.huge == UInt128(UInt64.max))
        }
    }

    @Test func aWriterUsedAfterItsCallThrows() throws {
        try withContainer(LeakingSample.self) { container throws in
            let context = ModelContext(container)
            context.insert(LeakingSample())
            try context.save()
            let writer = try #require(LeakingSample.box.writer)
            #expect(throws: EncodingError.self) { try writer.encode("late", forKey: "title") }
            #expect(throws: EncodingError.self) { try writer.encode(["late"], forKey: "tags") }
        }
    }

    @Test func aUniqueViolationThroughFieldsWritesNothing() throws {
        try withContainer(FieldSample.self) { container throws in
            let context = ModelContext(container)
            context.insert(FieldSample(CodedSample(title: "twin")))
            try context.save()
            context.insert(FieldSample(CodedSample(title: "other")))
            context.insert(FieldSample(CodedSample(title: "twin")))
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .uniqueViolation)
            #expect(error.field == "title")
            context.rollback()
            #expect(try context.fetch(FetchDescriptor<FieldSample>()).map(\.title) == ["twin"])
        }
    }
}

/// Writes `note` as an explicit null when it is nil, as a hand-written `encode(to:)` may, and an array between two
/// numbers.
struct NullingSample: Codable {
    enum CodingKeys: String, CodingKey {
        case id, title, note, tags, count
    }

    var id = UUID.timeOrdered()
    var title = "title"
    var note: String?
    var tags = [3, 1, 2]
    var count = 7

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        if let note { try container.encode(note, forKey: .note) } else { try container.encodeNil(forKey: .note) }
        try container.encode(tags, forKey: .tags)
        try container.encode(count, forKey: .count)
    }
}

/// Decodes `bytes` through a ``FieldReader``.
private func readFields<R>(_ bytes: [UInt8], fields: FieldTable, _ body: (FieldReader) throws -> R) throws -> R {
    try bytes.withBorrowedBytes { try RecordDecoder().decodeFields(from: $0, fields: fields, body) }
}

@Suite struct FieldReaderOrderTests {
    let sample = NullingSample()
    let bytes: [UInt8]
    let fields: FieldTable

    init() throws {
        var fields = FieldTable()
        bytes = try encodeTestRecord(sample, fields: &fields)
        self.fields = fields
    }

    @Test func readsEveryFieldInStoredOrderNullAndArrayIncluded() throws {
        let read = try readFields(bytes, fields: fields) { fields in
            (
                try fields.decode(UUID.self, forKey: "id"), try fields.decode(String.self, forKey: "title"),
                try fields.decodeIfPresent(String.self, forKey: "note"), try fields.decode([Int].self, forKey: "tags"),
                try fields.decode(Int.self, forKey: "count")
            )
        }
        #expect(read.0 == sample.id)
        #expect(read.1 == "title")
        #expect(read.2 == nil)
        #expect(read.3 == [3, 1, 2])
        #expect(read.4 == 7)
    }

    @Test func skipsFieldsGoesBackAndReadsFieldsTwice() throws {
        let read = try readFields(bytes, fields: fields) { fields in
            (
                try fields.decode(UUID.self, forKey: "id"), try fields.decode(Int.self, forKey: "count"),
                try fields.decode(String.self, forKey: "title"), try fields.decode(UUID.self, forKey: "id"),
                try fields.decodeIfPresent([Int].self, forKey: "tags")
            )
        }
        #expect(read.0 == sample.id)
        #expect(read.1 == 7)
        #expect(read.2 == "title")
        #expect(read.3 == sample.id)
        #expect(read.4 == [3, 1, 2])
    }

    @Test func containsTellsPresentNullAndMissingFieldsWithoutMovingOn() throws {
        let read = try readFields(bytes, fields: fields) { fields in
            (
                fields.contains("id"), try fields.decode(UUID.self, forKey: "id"), fields.contains("title"),
                fields.contains("note"), fields.contains("subtitle"), try fields.decode(String.self, forKey: "title")
            )
        }
        #expect(read.0 && read.2 && read.3 && !read.4)
        #expect(read.1 == sample.id)
        #expect(read.5 == "title")
    }

    @Test func theRecordIsCheckedToTheEndWhateverWasRead() throws {
        // Trailing bytes and a damaged unread field are found though nothing or only the first field is read.
        for damaged in [bytes + [0], Array(bytes.dropLast()), bytes.prefix(bytes.count - 3) + [0xFF, 0xFF, 0xFF]] {
            #expect(throws: RecordFormatError.self) { try readFields(damaged, fields: fields) { _ in () } }
            #expect(throws: RecordFormatError.self) {
                try readFields(damaged, fields: fields) { try $0.decode(UUID.self, forKey: "id") }
            }
        }
    }

    @Test func aReaderKeptPastItsCallThrows() throws {
        let decoder = RecordDecoder()
        let kept = try bytes.withBorrowedBytes { bytes in
            try decoder.decodeFields(from: bytes, fields: fields) { $0 }
        }
        #expect(throws: DecodingError.self) { try kept.decode(UUID.self, forKey: "id") }
        #expect(!kept.contains("id"))
        // Not even while the same decoder reads another record.
        let title = try bytes.withBorrowedBytes { bytes in
            try decoder.decodeFields(from: bytes, fields: fields) { fields in
                #expect(throws: DecodingError.self) { try kept.decode(String.self, forKey: "title") }
                return try fields.decode(String.self, forKey: "title")
            }
        }
        #expect(title == "title")
    }
}

/// A value of every kind a ``FieldReader`` reads directly, stored through `Codable`.
struct PrimitiveSample: Codable, Equatable {
    var flag = true
    var ratio = 0.25
    var count = -300
    var small: UInt8 = 200
    var when = Date(timeIntervalSinceReferenceDate: 1_000)
    var id = UUID.timeOrdered()
    var name = "a name longer than a small string"
    var whole = 7
    var nothing: String? = nil

    enum CodingKeys: String, CodingKey {
        case flag, ratio, count, small, when, id, name, whole, nothing
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(flag, forKey: .flag)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(count, forKey: .count)
        try container.encode(small, forKey: .small)
        try container.encode(when, forKey: .when)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(whole, forKey: .whole)
        try container.encodeNil(forKey: .nothing)
    }

    /// Reads every field through the reader's typed methods, in stored order, `whole` as a Double.
    init(fields: FieldReader) throws {
        flag = try fields.decode(Bool.self, forKey: "flag")
        ratio = try fields.decode(Double.self, forKey: "ratio")
        count = try fields.decode(Int.self, forKey: "count")
        small = try fields.decode(UInt8.self, forKey: "small")
        when = try fields.decode(Date.self, forKey: "when")
        id = try fields.decode(UUID.self, forKey: "id")
        name = try fields.decode(String.self, forKey: "name")
        whole = Int(try fields.decode(Double.self, forKey: "whole"))
        nothing = try fields.decodeIfPresent(String.self, forKey: "nothing")
    }

    init() {}
}

/// The typed reads of ``FieldReader``, which take a shortcut for fields read in stored order, give what the general
/// path gives, and fall back to it for everything the shortcut does not take.
@Suite struct FieldReaderTypedReadTests {
    let sample = PrimitiveSample()

    /// The sample's record, after `padding` other names in the field table.
    func record(padding: Int) throws -> (bytes: [UInt8], fields: FieldTable) {
        var fields = FieldTable()
        for index in 0..<padding { _ = fields.id(for: "padding\(index)", in: .topLevel) }
        return (try encodeTestRecord(sample, fields: &fields), fields)
    }

    @Test(arguments: [0, 200])
    func readsEveryKindInStoredOrder(padding: Int) throws {
        // With 200 names before them, the field ids take two bytes, which only the general path reads.
        let (bytes, fields) = try record(padding: padding)
        #expect(try readFields(bytes, fields: fields) { try PrimitiveSample(fields: $0) } == sample)
    }

    @Test func readsEveryKindInReverseOrder() throws {
        let (bytes, fields) = try record(padding: 0)
        let read = try readFields(bytes, fields: fields) { fields in
            (
                try fields.decodeIfPresent(String.self, forKey: "nothing"),
                try fields.decode(Int.self, forKey: "whole"), try fields.decode(String.self, forKey: "name"),
                try fields.decode(UUID.self, forKey: "id"), try fields.decode(Date.self, forKey: "when"),
                try fields.decode(UInt8.self, forKey: "small"), try fields.decode(Int.self, forKey: "count"),
                try fields.decode(Double.self, forKey: "ratio"), try fields.decode(Bool.self, forKey: "flag")
            )
        }
        #expect(read.0 == nil && read.1 == sample.whole && read.2 == sample.name && read.3 == sample.id)
        #expect(read.4 == sample.when && read.5 == sample.small && read.6 == sample.count)
        #expect(read.7 == sample.ratio && read.8 == sample.flag)
    }

    @Test func aValueThatDoesNotFitThrowsAndTheNextFieldStillReads() throws {
        let (bytes, fields) = try record(padding: 0)
        try readFields(bytes, fields: fields) { fields throws in
            #expect(try fields.decode(Bool.self, forKey: "flag"))
            #expect(throws: DecodingError.self) { try fields.decode(Int.self, forKey: "ratio") }
            #expect(try fields.decode(Double.self, forKey: "ratio") == sample.ratio)
            // -300 fits in no UInt8 or Int8; 200 fits in a UInt8 and not in an Int8.
            #expect(throws: DecodingError.self) { try fields.decode(UInt8.self, forKey: "count") }
            #expect(throws: DecodingError.self) { try fields.decode(Int8.self, forKey: "count") }
            #expect(try fields.decode(Int16.self, forKey: "count") == -300)
            #expect(throws: DecodingError.self) { try fields.decode(Int8.self, forKey: "small") }
            #expect(try fields.decodeIfPresent(UInt8.self, forKey: "small") == 200)
            #expect(throws: DecodingError.self) { try fields.decode(String.self, forKey: "when") }
            #expect(try fields.decodeIfPresent(Date.self, forKey: "when") == sample.when)
            #expect(throws: DecodingError.self) { try fields.decode(Bool.self, forKey: "id") }
            #expect(try fields.decodeIfPresent(UUID.self, forKey: "id") == sample.id)
            #expect(throws: DecodingError.self) { try fields.decode(UUID.self, forKey: "name") }
            #expect(try fields.decodeIfPresent(String.self, forKey: "name") == sample.name)
            #expect(try fields.decodeIfPresent(Double.self, forKey: "whole") == 7)
            #expect(throws: DecodingError.self) { try fields.decode(String.self, forKey: "nothing") }
            #expect(try fields.decodeIfPresent(Bool.self, forKey: "nothing") == nil)
        }
    }

    @Test func aDamagedValueIsACorruptRecordWhereverItIsRead() throws {
        let (bytes, fields) = try record(padding: 0)
        let name = try #require(
            bytes.indices.first { bytes[$0...].starts(with: Array(sample.name.utf8)) })
        // Invalid UTF-8 in the name, a name longer than the record, and a record cut inside the date.
        var invalid = bytes
        invalid[name] = 0xFF
        var overlong = bytes
        overlong[name - 1] = 0x7F
        let cut = Array(bytes.prefix(name - 25))
        for damaged in [invalid, overlong, cut] {
            #expect(throws: RecordFormatError.self) {
                try readFields(damaged, fields: fields) { try PrimitiveSample(fields: $0) }
            }
        }
    }
}

/// Integers through the `Int` overloads of ``FieldWriter`` and ``FieldReader`` (and an `Int8` through the generic
/// ones), optional and not, written as `Codable` writes them.
struct IntegerFieldSample: Model, FieldCodable, Equatable {
    var id = UUID.timeOrdered()
    var count: Int
    var limit: Int?
    var small: Int8?

    static let entity = Entity<IntegerFieldSample>()

    init(count: Int, limit: Int?, small: Int8?) {
        (self.count, self.limit, self.small) = (count, limit, small)
    }

    init(fields: FieldReader) throws {
        id = try fields.decode(UUID.self, forKey: "id")
        count = try fields.decode(Int.self, forKey: "count")
        limit = try fields.decodeIfPresent(Int.self, forKey: "limit")
        small = try fields.decodeIfPresent(Int8.self, forKey: "small")
    }

    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(count, forKey: "count")
        try fields.encodeIfPresent(limit, forKey: "limit")
        try fields.encodeIfPresent(small, forKey: "small")
    }
}

/// ``IntegerFieldSample`` through `Codable` alone.
struct IntegerCodedSample: Codable {
    var id: UUID
    var count: Int
    var limit: Int?
    var small: Int8?
}

@Suite struct IntegerFieldTests {
    @Test(arguments: [(0, nil, nil), (-300, 7, -128), (Int.max, Int.min, 127)] as [(Int, Int?, Int8?)])
    func intOverloadsWriteAndReadAsCodable(count: Int, limit: Int?, small: Int8?) throws {
        let sample = IntegerFieldSample(count: count, limit: limit, small: small)
        var codedFields = FieldTable()
        let coded = try encodeTestRecord(
            IntegerCodedSample(id: sample.id, count: count, limit: limit, small: small), fields: &codedFields)
        var fields = FieldTable()
        var bytes: [UInt8] = []
        var encoder = RecordEncoder()
        try encoder.encodeFields(fields: &fields, into: &bytes) { try sample.write(to: $0) }
        #expect(bytes == coded)
        let decoded = try bytes.withBorrowedBytes { bytes in
            try RecordDecoder().decodeFields(from: bytes, fields: fields) { try IntegerFieldSample(fields: $0) }
        }
        #expect(decoded == sample)
    }
}
