import Foundation
import Testing

@testable import KVStore

/// How the encoder treats unusual and invalid uses of Codable containers:
/// it either writes a well-formed record or throws, never a corrupt record.
@Suite struct CodecContainerUseTests {
    enum Keys: String, CodingKey {
        case a, b, c
    }

    struct Failure: Error {}

    /// Writes one field, then fails.
    struct Failing: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .a)
            var nested = container.nestedUnkeyedContainer(forKey: .b)
            try nested.encode("partial")
            throw Failure()
        }
    }

    /// Ignores the failure of one of its fields.
    struct Tolerant: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("first", forKey: .a)
            _ = try? container.encode(Failing(), forKey: .b)
            try container.encode("last", forKey: .c)
            var list = container.nestedUnkeyedContainer(forKey: .b)
            _ = try? list.encode(Failing())
            try list.encode(true)
        }
    }

    @Test func aChildThatThrowsIsRolledBack() throws {
        var fields = FieldTable()
        let bytes = try encodeTestRecord(Tolerant(), fields: &fields)
        #expect(
            try decodeTestTree(bytes, fields: fields)
                == .object([("a", .string("first")), ("c", .string("last")), ("b", .array([.bool(true)]))]))
    }

    @Test func encodingIntoABufferReplacesItsContents() throws {
        var fields = FieldTable()
        var encoder = RecordEncoder()
        var buffer: [UInt8] = [9, 9]
        try encoder.encode("ok", fields: &fields, into: &buffer)
        #expect(try decodeTestTree(buffer, fields: fields) == .string("ok"))
        try encoder.encode(5, fields: &fields, into: &buffer)
        #expect(try decodeTestTree(buffer, fields: fields) == .int(5))
        #expect(throws: Failure.self) { try encoder.encode(Failing(), fields: &fields, into: &buffer) }
        #expect(buffer.isEmpty)
        try encoder.encode(true, fields: &fields, into: &buffer)
        #expect(try decodeTestTree(buffer, fields: fields) == .bool(true))
    }

    /// Writes to a nested container after writing to its parent.
    struct Interleaved: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
            try nested.encode(1, forKey: .a)
            try container.encode(2, forKey: .b)
            try nested.encode(3, forKey: .c)
        }
    }

    @Test func usingAClosedContainerThrows() {
        var fields = FieldTable()
        #expect(throws: EncodingError.self) { try encodeTestRecord(Interleaved(), fields: &fields) }
    }

    /// Asks for a keyed container after encoding a single value.
    struct Mixed: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(1)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(2, forKey: .a)
        }
    }

    /// Encodes two single values.
    struct Twice: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(1)
            try single.encode(2)
        }
    }

    @Test func mixingContainerKindsThrows() {
        var fields = FieldTable()
        #expect(throws: EncodingError.self) { try encodeTestRecord(Mixed(), fields: &fields) }
        #expect(throws: EncodingError.self) { try encodeTestRecord(Twice(), fields: &fields) }
    }

    /// Takes a nested container early and writes its siblings first, which
    /// works as long as it is written before its parent is written again.
    struct NestedFirst: Codable, Equatable {
        var inner: [Int]
        var outer: String

        init(inner: [Int], outer: String) {
            self.inner = inner
            self.outer = outer
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            outer = try container.decode(String.self, forKey: .b)
            var list = try container.nestedUnkeyedContainer(forKey: .a)
            var inner: [Int] = []
            while !list.isAtEnd { inner.append(try list.decode(Int.self)) }
            self.inner = inner
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(outer, forKey: .b)
            var list = container.nestedUnkeyedContainer(forKey: .a)
            for value in inner { try list.encode(value) }
        }
    }

    @Test func containersUsedInNestingOrderRoundTrip() throws {
        let value = NestedFirst(inner: Array(0..<200), outer: "o")
        #expect(try codecRoundTrip(value) == value)
    }

    @Test func containersWithManyEntriesGetMultiByteCounts() throws {
        struct Wide: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: RecordCodingKey.self)
                for index in 0..<300 { try container.encode(index, forKey: RecordCodingKey(stringValue: "f\(index)")) }
                var list = container.nestedUnkeyedContainer(forKey: RecordCodingKey(stringValue: "list"))
                for index in 0..<1_000 { try list.encode(index) }
            }
        }
        var fields = FieldTable()
        let bytes = try encodeTestRecord(Wide(), fields: &fields)
        guard case .object(let entries) = try decodeTestTree(bytes, fields: fields) else {
            Issue.record("expected an object")
            return
        }
        #expect(entries.count == 301)
        #expect(entries.last?.value == .array((0..<1_000).map { .int(Int64($0)) }))
    }

    @Test func codingPathsNameTheFailingValue() throws {
        struct Leaf: Codable { var number: Int }
        struct Root: Codable { var leaves: [Leaf] }
        var fields = FieldTable()
        let bytes = try encodeTestRecord(Root(leaves: [Leaf(number: 1), Leaf(number: 300)]), fields: &fields)
        struct SmallLeaf: Codable { var number: Int8 }
        struct SmallRoot: Codable { var leaves: [SmallLeaf] }
        #expect {
            try decodeTestRecord(SmallRoot.self, from: bytes, fields: fields)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["leaves", "Index 1", "number"]
        }
    }

    /// A decoder shared with ``Reentrant``, which uses it from inside a decode.
    /// Only ``aDecoderCanBeReusedAndReentered()`` touches it.
    nonisolated(unsafe) static let sharedDecoder = RecordDecoder()

    /// Decodes another record with the shared decoder from inside its own decoding.
    struct Reentrant: Decodable {
        var inner: Int

        init(from decoder: any Decoder) throws {
            let bytes: [UInt8] = [1, 3, 4]
            inner = try bytes.withBorrowedBytes {
                try CodecContainerUseTests.sharedDecoder.decode(Int.self, from: $0, fields: FieldTable())
            }
        }
    }

    @Test func aDecoderCanBeReusedAndReentered() throws {
        let decoder = Self.sharedDecoder
        for value in [1, 2, 3] {
            var fields = FieldTable()
            let bytes = try encodeTestRecord(value, fields: &fields)
            #expect(try bytes.withBorrowedBytes { try decoder.decode(Int.self, from: $0, fields: fields) } == value)
        }
        let outer: [UInt8] = [1, 0]
        let reentrant = try outer.withBorrowedBytes {
            try decoder.decode(Reentrant.self, from: $0, fields: FieldTable())
        }
        #expect(reentrant.inner == 2)
    }
}
