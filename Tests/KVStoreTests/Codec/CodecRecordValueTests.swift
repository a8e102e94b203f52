import Foundation
import Testing

@testable import KVStore

/// The generic RecordValue tree: decoding, encoding, and agreement with the typed coders.
@Suite struct CodecRecordValueTests {
    struct Note: Codable, Equatable {
        var title: String
        var stars: Int8
        var weight: Float
        var at: Date
        var id: UUID
        var body: Data
        var link: URL
        var price: Decimal
        var tags: [String]
        var extra: [String: UInt]
        var byCode: [Int: Bool]
        var parent: UUID?
    }

    static let note = Note(
        title: "note", stars: -3, weight: 2.5, at: Date(timeIntervalSinceReferenceDate: 9), id: UUID(),
        body: Data([1, 2]), link: URL(fileURLWithPath: "/tmp/n"),
        price: Decimal(sign: .plus, exponent: -1, significand: 15),
        tags: ["x"], extra: ["k": 3], byCode: [4: true], parent: nil)

    @Test func aDecodedTreeShowsEveryKind() throws {
        var fields = FieldTable()
        let bytes = try encodeTestRecord(Self.note, fields: &fields)
        let tree = try decodeTestTree(bytes, fields: fields)
        let expected: RecordValue = .object([
            ("title", .string("note")), ("stars", .int(-3)), ("weight", .float(2.5)),
            ("at", .date(Date(timeIntervalSinceReferenceDate: 9))), ("id", .uuid(Self.note.id)),
            ("body", .data(Data([1, 2]))),
            ("link", .url(Self.note.link.absoluteString)), ("price", .decimal("1.5")), ("tags", .array([.string("x")])),
            ("extra", .stringMap([("k", .uint(3))])), ("byCode", .intMap([(4, .bool(true))])),
        ])
        #expect(tree == expected)
        #expect(tree.kind == .object)
    }

    @Test func aTreeBuiltByHandDecodesAsTheTypedValue() throws {
        var fields = FieldTable()
        let tree: RecordValue = .object([
            ("title", .string("hand")), ("stars", .uint(5)), ("weight", .double(0.5)),
            ("at", .date(Date(timeIntervalSinceReferenceDate: 1))),
            ("id", .uuid(Self.note.id)), ("body", .data(Data())), ("link", .url("https://example.com")),
            ("price", .decimal("-2")),
            ("tags", .array([])), ("extra", .stringMap([])), ("byCode", .intMap([(-1, .bool(false))])),
            ("parent", .null),
        ])
        let bytes = tree.encode(fields: &fields)
        let note = try decodeTestRecord(Note.self, from: bytes, fields: fields)
        #expect(note.title == "hand" && note.stars == 5 && note.weight == 0.5 && note.parent == nil)
        #expect(note.byCode == [-1: false] && note.price == Decimal(-2))
        #expect(try decodeTestTree(bytes, fields: fields) == tree)
    }

    @Test func theTypedEncoderAndTheTreeWriteTheSameBytes() throws {
        var typedFields = FieldTable()
        let typed = try encodeTestRecord(Self.note, fields: &typedFields)
        var treeFields = typedFields
        let tree = try decodeTestTree(typed, fields: typedFields)
        #expect(tree.encode(fields: &treeFields) == typed)
        #expect(treeFields == typedFields)
    }

    @Test func unknownFieldIDsShowAsHashIDAndAreWrittenBack() throws {
        var fields = FieldTable()
        let bytes = try encodeTestRecord(Self.note, fields: &fields)
        let partial = FieldTable()
        let tree = try decodeTestTree(bytes, fields: partial)
        guard case .object(let entries) = tree else {
            Issue.record("expected an object")
            return
        }
        #expect(entries.map(\.name) == (1...11).map { "#\($0)" })
        var rewriteFields = partial
        #expect(tree.encode(fields: &rewriteFields) == bytes)
        #expect(rewriteFields.count == 0)
    }

    @Test func encodingRecordsTheKindsOfTopLevelFields() throws {
        var fields = FieldTable()
        _ = RecordValue.object([("a", .null), ("b", .bool(true)), ("c", .object([("d", .int(1))]))]).encode(
            fields: &fields)
        #expect(fields.names == ["a", "b", "c", "d"])
        let kinds = (1...4).map { fields.kind(of: UInt32($0)) }
        #expect(kinds == [nil, .true, .object, nil])
        _ = RecordValue.object([("a", .string("now"))]).encode(fields: &fields)
        #expect(fields.kind(of: 1) == .string)
    }

    @Test func theTypedEncoderRecordsTheKindsOfTopLevelFields() throws {
        var fields = FieldTable()
        _ = try encodeTestRecord(Self.note, fields: &fields)
        let kinds = Dictionary(
            uniqueKeysWithValues: fields.names.map {
                ($0, fields.kind(of: fields.existingID(for: $0, in: .topLevel) ?? 0))
            })
        #expect(kinds["title"] == .string)
        #expect(kinds["stars"] == .int)
        #expect(kinds["weight"] == .float)
        #expect(kinds["at"] == .date)
        #expect(kinds["id"] == .uuid)
        #expect(kinds["body"] == .data)
        #expect(kinds["link"] == .url)
        #expect(kinds["price"] == .decimal)
        #expect(kinds["tags"] == .array)
        #expect(kinds["extra"] == .stringMap)
        #expect(kinds["byCode"] == .intMap)
        #expect(fields.existingID(for: "parent", in: .topLevel) == nil, "a nil optional is not written")
    }

    @Test(arguments: [
        RecordValue.null, .bool(false), .int(.min), .uint(.max), .float(.nan), .double(-0.0), .string("s\u{0}"),
        .data(Data(repeating: 9, count: 300)), .date(.distantPast), .uuid(UUID()), .url("a:b"), .decimal("1e-5"),
        .array([.null, .array([])]), .object([]), .stringMap([("", .null)]), .intMap([(.min, .int(.max))]),
    ])
    func everyKindRoundTripsThroughBytes(_ value: RecordValue) throws {
        var fields = FieldTable()
        let bytes = value.encode(fields: &fields)
        #expect(try decodeTestTree(bytes, fields: fields) == value)
        #expect(value.kind.rawValue == bytes[1])
    }

    @Test func equalityComparesFloatsByBits() {
        #expect(RecordValue.double(.nan) == .double(.nan))
        #expect(RecordValue.double(0) != .double(-0.0))
        #expect(RecordValue.float(1) != .double(1))
        #expect(RecordValue.object([("a", .null)]) != .object([("b", .null)]))
    }
}
