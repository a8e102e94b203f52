import Foundation
import TestSupport
import Testing

@testable import KVStore

/// The RecordValue path, reading keys back, and the length limit.
@Suite struct IndexKeyEncodingTests {
    /// A typed value and the RecordValue that stands for it.
    static var pairs: [(typed: any IndexKeyEncodable, value: RecordValue)] {
        [
            (Int.min, .int(.min)), (Int8(-1), .int(-1)), (Int64.max, .int(.max)), (UInt8(200), .uint(200)),
            (UInt64.max, .uint(.max)), (Float(-1.5), .float(-1.5)), (Double.nan, .double(.nan)), (-0.0, .double(0)),
            (true, .bool(true)), (false, .bool(false)), ("a\u{0}é", .string("a\u{0}é")),
            (Date(timeIntervalSinceReferenceDate: -5), .date(Date(timeIntervalSinceReferenceDate: -5))),
            (
                UUID(uuid: (9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6)),
                .uuid(UUID(uuid: (9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6)))
            ),
            (String?.none as any IndexKeyEncodable, .null),
        ]
    }

    @Test(arguments: 0..<pairs.count)
    func theRecordValuePathGivesTheTypedBytes(_ index: Int) throws {
        let (typed, value) = Self.pairs[index]
        var typedBytes: [UInt8] = []
        typed.appendIndexKey(to: &typedBytes)
        var valueBytes: [UInt8] = []
        try IndexKey.append(value, to: &valueBytes)
        #expect(typedBytes == valueBytes)
    }

    @Test(arguments: [
        RecordValue.array([]), .object([]), .stringMap([]), .intMap([]), .data(Data()), .url("x:y"), .decimal("1"),
    ])
    func containersAndOtherKindsAreNotIndexable(_ value: RecordValue) {
        var bytes: [UInt8] = []
        #expect(throws: IndexKeyError.notIndexable(value.kind)) { try IndexKey.append(value, to: &bytes) }
    }

    static let components: [RecordValue] = [
        .string("héllo\u{0}"), .int(-42), .uint(7), .double(-2.5), .float(0.25),
        .date(Date(timeIntervalSinceReferenceDate: 3)),
        .uuid(UUID(uuid: (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 255))), .bool(true), .null, .string(""),
    ]
    static let kinds: [ValueKind] = [.string, .int, .uint, .double, .float, .date, .uuid, .true, .string, .string]

    /// The concatenated key of ``components``.
    static func compoundKey() throws -> [UInt8] {
        var bytes: [UInt8] = []
        for component in components { try IndexKey.append(component, to: &bytes) }
        return bytes
    }

    @Test func decodeComponentsReadsAKeyBack() throws {
        let key = try Self.compoundKey()
        let decoded = try key.withBorrowedBytes { try IndexKey.decodeComponents($0, kinds: Self.kinds) }
        #expect(decoded == Self.components)
    }

    @Test func decodeComponentsNormalizesZeroAndNaN() throws {
        var key: [UInt8] = []
        try IndexKey.append(.double(-0.0), to: &key)
        try IndexKey.append(.double(-.nan), to: &key)
        let decoded = try key.withBorrowedBytes { try IndexKey.decodeComponents($0, kinds: [.double, .double]) }
        #expect(decoded == [.double(0), .double(.nan)])
    }

    @Test func everyTruncatedKeyThrows() throws {
        let key = try Self.compoundKey()
        for length in 0..<key.count {
            let prefix = Array(key[..<length])
            #expect(throws: IndexKeyError.self, "prefix of \(length) bytes") {
                try prefix.withBorrowedBytes { try IndexKey.decodeComponents($0, kinds: Self.kinds) }
            }
        }
    }

    @Test(
        arguments: [
            ([2], [ValueKind.int]), ([1, 0, 2], [.string]), ([1, 0xFF, 0, 1], [.string]), ([1, 2], [.true]),
            ([0, 0], [.int]), ([1, 0, 0, 0, 0, 0, 0, 0, 0], [.null]), ([1, 1], [.data]),
        ] as [([UInt8], [ValueKind])])
    func malformedKeysThrow(_ key: [UInt8], _ kinds: [ValueKind]) {
        #expect(throws: IndexKeyError.self) {
            try key.withBorrowedBytes { try IndexKey.decodeComponents($0, kinds: kinds) }
        }
    }

    @Test func randomGarbageKeysDecodeOrThrow() {
        var random = SplitMix64(seed: 21)
        for _ in 0..<3_000 {
            let key = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) }
            do {
                _ = try key.withBorrowedBytes { try IndexKey.decodeComponents($0, kinds: [.string, .int, .uuid]) }
            } catch {
                #expect(error is IndexKeyError)
            }
        }
    }

    @Test func shortKeysAreLeftAlone() {
        var key = IndexKeyOrderTests.key(String(repeating: "x", count: 400))
        let original = key
        #expect(IndexKey.finalize(&key) == false)
        #expect(key == original)
    }

    @Test func longKeysAreTruncatedWithAHash() {
        let prefix = String(repeating: "p", count: 600)
        var keys: Set<[UInt8]> = []
        for suffix in ["a", "b", "c", "aa", ""] {
            var key = IndexKeyOrderTests.key(prefix + suffix)
            #expect(key.count > IndexKey.maximumLength)
            #expect(IndexKey.finalize(&key))
            #expect(key.count == IndexKey.maximumLength)
            #expect(key[IndexKey.maximumLength - 9] == IndexKey.truncationMarker)
            #expect(key.starts(with: IndexKeyOrderTests.key(prefix).prefix(IndexKey.maximumLength - 9)))
            keys.insert(key)
        }
        #expect(keys.count == 5, "distinct long strings with a common prefix keep distinct keys")
        #expect(IndexKey.maximumLength < 511)
    }

    @Test func truncatedKeysKeepTheOrderOfTheirPrefixes() {
        var lower = IndexKeyOrderTests.key("a" + String(repeating: "z", count: 600))
        var higher = IndexKeyOrderTests.key("b" + String(repeating: "a", count: 600))
        IndexKey.finalize(&lower)
        IndexKey.finalize(&higher)
        #expect(lower.lexicographicallyPrecedes(higher))
    }

    @Test func fnv1aMatchesKnownVectors() {
        #expect(IndexKey.fnv1a64([]) == 0xcbf2_9ce4_8422_2325)
        #expect(IndexKey.fnv1a64(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
        #expect(IndexKey.fnv1a64(Array("foobar".utf8)) == 0x8594_4171_f739_67e8)
    }
}
