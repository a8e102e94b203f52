import Foundation
import TestSupport
import Testing

@testable import KVStore

/// Corrupt bytes must throw, never trap or read out of bounds.
@Suite struct CodecCorruptionTests {
    struct Sample: Codable, Equatable {
        var id: UUID
        var title: String
        var count: Int
        var ratio: Double
        var flags: [Bool]
        var meta: [String: Date]
        var byNumber: [Int: Float]
        var blob: Data
        var link: URL
        var amount: Decimal
        var child: Child?
    }

    struct Child: Codable, Equatable {
        var name: String
        var values: [UInt16]
    }

    static let sample = Sample(
        id: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)), title: "Ünïcödé title", count: -300,
        ratio: 0.5, flags: [true, false], meta: ["created": Date(timeIntervalSinceReferenceDate: 100)],
        byNumber: [7: 1.5], blob: Data([0, 1, 2, 255]), link: URL(fileURLWithPath: "/tmp/example file"),
        amount: Decimal(sign: .minus, exponent: -2, significand: 1250),
        child: Child(name: "c", values: [1, 300, 65_535]))

    /// The sample record and its field table.
    static func sampleRecord() throws -> (bytes: [UInt8], fields: FieldTable) {
        var fields = FieldTable()
        let bytes = try encodeTestRecord(sample, fields: &fields)
        return (bytes, fields)
    }

    @Test func theSampleDecodes() throws {
        let (bytes, fields) = try Self.sampleRecord()
        #expect(try decodeTestRecord(Sample.self, from: bytes, fields: fields) == Self.sample)
    }

    @Test func everyTruncationThrows() throws {
        let (bytes, fields) = try Self.sampleRecord()
        for length in 0..<bytes.count {
            let prefix = Array(bytes[..<length])
            #expect(throws: (any Error).self, "prefix of \(length) bytes") {
                try decodeTestRecord(Sample.self, from: prefix, fields: fields)
            }
            #expect(throws: RecordFormatError.self, "prefix of \(length) bytes") {
                try decodeTestTree(prefix, fields: fields)
            }
        }
    }

    /// The sample as a record written before checksums: version 1, no trailing checksum.
    static func uncheckedSampleRecord() throws -> (bytes: [UInt8], fields: FieldTable) {
        let (bytes, fields) = try sampleRecord()
        return ([RecordFormat.uncheckedVersion] + bytes[1..<(bytes.count - RecordFormat.checksumLength)], fields)
    }

    @Test func aRecordWrittenBeforeChecksumsStillDecodes() throws {
        let (bytes, fields) = try Self.uncheckedSampleRecord()
        #expect(try decodeTestRecord(Sample.self, from: bytes, fields: fields) == Self.sample)
        #expect(
            try decodeTestTree(bytes, fields: fields) == decodeTestTree(try Self.sampleRecord().bytes, fields: fields))
    }

    @Test func trailingBytesThrow() throws {
        let (bytes, fields) = try Self.uncheckedSampleRecord()
        #expect(throws: RecordFormatError(.trailingBytes, at: bytes.count)) {
            try decodeTestRecord(Sample.self, from: bytes + [0], fields: fields)
        }
        #expect(throws: RecordFormatError(.trailingBytes, at: bytes.count)) {
            try decodeTestTree(bytes + [0], fields: fields)
        }
        // A checked record's checksum covers its length too.
        let (checked, _) = try Self.sampleRecord()
        #expect(throws: RecordFormatError(.checksumMismatch, at: checked.count + 1)) {
            try decodeTestRecord(Sample.self, from: checked + [0], fields: fields)
        }
    }

    @Test func everyChangedByteOfACheckedRecordIsCaught() throws {
        let (bytes, fields) = try Self.sampleRecord()
        for position in 0..<bytes.count {
            for bit in [0, 3, 7] {
                var damaged = bytes
                damaged[position] ^= 1 << bit
                #expect(throws: RecordFormatError.self, "byte \(position), bit \(bit)") {
                    try decodeTestRecord(Sample.self, from: damaged, fields: fields)
                }
                #expect(throws: RecordFormatError.self, "byte \(position), bit \(bit)") {
                    try decodeTestTree(damaged, fields: fields)
                }
                if position > 0 {
                    #expect(throws: RecordFormatError(.checksumMismatch, at: damaged.count)) {
                        try decodeTestTree(damaged, fields: fields)
                    }
                }
            }
        }
        // A checked record passed off as an unchecked one still fails: its checksum is left over after the value.
        var relabeled = bytes
        relabeled[0] = RecordFormat.uncheckedVersion
        #expect(throws: RecordFormatError(.trailingBytes, at: bytes.count - RecordFormat.checksumLength)) {
            try decodeTestTree(relabeled, fields: fields)
        }
    }

    @Test(arguments: [0, 3, 200, 255] as [UInt8])
    func aBadVersionThrows(_ version: UInt8) throws {
        var (bytes, fields) = try Self.sampleRecord()
        bytes[0] = version
        #expect(throws: RecordFormatError(.badVersion(version), at: 0)) {
            try decodeTestRecord(Sample.self, from: bytes, fields: fields)
        }
        #expect(throws: RecordFormatError(.badVersion(version), at: 0)) { try decodeTestTree(bytes, fields: fields) }
    }

    @Test(arguments: [17, 18, 99, 255] as [UInt8])
    func anUnknownTagThrows(_ tag: UInt8) throws {
        let fields = FieldTable()
        #expect(throws: RecordFormatError(.unknownTag(tag), at: 1)) {
            try decodeTestRecord(Int.self, from: [1, tag], fields: fields)
        }
        #expect(throws: RecordFormatError(.unknownTag(tag), at: 1)) { try decodeTestTree([1, tag], fields: fields) }
        // Inside an array, where the value is only skipped.
        #expect(throws: RecordFormatError(.unknownTag(tag), at: 3)) {
            try decodeTestRecord([Int].self, from: [1, 13, 1, tag], fields: fields)
        }
    }

    @Test func hugeLengthsAndCountsThrow() {
        let fields = FieldTable()
        let hugeVarint: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        for tag in [ValueKind.string, .data, .url, .decimal, .array, .object, .stringMap, .intMap] {
            let bytes = [1, tag.rawValue] + hugeVarint
            #expect(throws: RecordFormatError(.badLength(UInt64.max), at: 2), "\(tag)") {
                try decodeTestTree(bytes, fields: fields)
            }
            #expect(throws: (any Error).self, "\(tag)") {
                try decodeTestRecord([String: Int].self, from: bytes, fields: fields)
            }
        }
        // A length just past the end.
        #expect(throws: RecordFormatError(.badLength(3), at: 2)) {
            try decodeTestRecord(String.self, from: [1, 7, 3, 65, 66], fields: fields)
        }
    }

    @Test func malformedVarintsThrow() {
        let fields = FieldTable()
        let elevenBytes: [UInt8] = [1, 3] + Array(repeating: 0x80, count: 10) + [0]
        #expect(throws: RecordFormatError(.malformedVarint, at: 2)) { try decodeTestTree(elevenBytes, fields: fields) }
        let tooLarge: [UInt8] = [1, 4] + Array(repeating: 0xFF, count: 9) + [0x02]
        #expect(throws: RecordFormatError(.malformedVarint, at: 2)) {
            try decodeTestRecord(UInt64.self, from: tooLarge, fields: fields)
        }
    }

    @Test(
        arguments: [[0xFF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xED, 0xA0, 0x80], [0xC0, 0x80]] as [[UInt8]])
    func invalidUTF8Throws(_ utf8: [UInt8]) {
        let fields = FieldTable()
        for tag in [ValueKind.string, .url, .decimal] {
            let bytes = [1, tag.rawValue, UInt8(utf8.count)] + utf8
            #expect(throws: RecordFormatError(.invalidUTF8, at: 2)) { try decodeTestTree(bytes, fields: fields) }
        }
        #expect(throws: RecordFormatError(.invalidUTF8, at: 2)) {
            try decodeTestRecord(String.self, from: [1, 7, UInt8(utf8.count)] + utf8, fields: fields)
        }
    }

    @Test func unparsableURLsAndDecimalsThrow() {
        let fields = FieldTable()
        #expect(throws: RecordFormatError.self) {
            try decodeTestRecord(Decimal.self, from: [1, 12, 3] + Array("abc".utf8), fields: fields)
        }
        #expect(throws: RecordFormatError.self) {
            try decodeTestRecord(URL.self, from: [1, 11, 0], fields: fields)
        }
    }

    @Test func deepNestingThrowsInsteadOfOverflowingTheStack() {
        let fields = FieldTable()
        let depth = 100_000
        var bytes: [UInt8] = [1]
        for _ in 0..<depth { bytes += [13, 1] }
        bytes.append(0)
        #expect(throws: RecordFormatError(.nestingTooDeep, at: 1 + 2 * RecordFormat.maximumDepth)) {
            try decodeTestTree(bytes, fields: fields)
        }
        #expect(throws: RecordFormatError(.nestingTooDeep, at: 1 + 2 * RecordFormat.maximumDepth)) {
            try decodeTestRecord(RecordFormatProbe.self, from: bytes, fields: fields)
        }
    }

    @Test func aWrongTagForTheTypeThrowsTypeMismatch() throws {
        var fields = FieldTable()
        let bytes = try encodeTestRecord(["a", "b"], fields: &fields)
        #expect {
            try decodeTestRecord([String: String].self, from: bytes, fields: fields)
        } throws: { error in
            guard case DecodingError.typeMismatch = error else { return false }
            return true
        }
    }

    @Test func randomByteFlipsEitherDecodeOrThrow() throws {
        let (bytes, fields) = try Self.sampleRecord()
        var random = SplitMix64(seed: 7)
        var thrown = 0
        for _ in 0..<3_000 {
            var corrupt = bytes
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let index = Int.random(in: 0..<corrupt.count, using: &random)
                corrupt[index] = UInt8.random(in: 0...255, using: &random)
            }
            do {
                _ = try decodeTestRecord(Sample.self, from: corrupt, fields: fields)
            } catch {
                #expect(isCodecTestError(error), "unexpected \(error)")
                thrown += 1
            }
            do {
                _ = try decodeTestTree(corrupt, fields: fields)
            } catch {
                #expect(error is RecordFormatError, "unexpected \(error)")
            }
        }
        #expect(thrown > 1_000)
    }

    @Test func randomGarbageEitherDecodesOrThrows() throws {
        let (_, fields) = try Self.sampleRecord()
        var random = SplitMix64(seed: 11)
        for _ in 0..<3_000 {
            let length = Int.random(in: 0...64, using: &random)
            // Start most buffers with the right version, and small tags, to get past the first checks.
            var garbage = (0..<length).map { _ in UInt8.random(in: 0...20, using: &random) }
            if !garbage.isEmpty && Bool.random(using: &random) { garbage[0] = 1 }
            for decode in [
                { _ = try decodeTestRecord(Sample.self, from: garbage, fields: fields) },
                { _ = try decodeTestRecord([Int: [String]].self, from: garbage, fields: fields) },
                { _ = try decodeTestRecord([Double?].self, from: garbage, fields: fields) },
                { _ = try decodeTestTree(garbage, fields: fields) },
            ] as [() throws -> Void] {
                do {
                    try decode()
                } catch {
                    #expect(isCodecTestError(error), "unexpected \(error)")
                }
            }
        }
    }
}

/// Decodes any record by skipping its value, to test the skipping walk.
private struct RecordFormatProbe: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// CRC-32C against the standard check value and the hardware and table paths' agreement on every length.
@Suite struct ChecksumTests {
    @Test func theStandardCheckValue() {
        #expect(Checksum.crc32c(Array("123456789".utf8)) == 0xE306_9283)
        #expect(Checksum.crc32c([UInt8]()) == 0)
        #expect(Checksum.crc32c([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(Checksum.crc32c([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
    }

    @Test func everyLengthAndAlignmentMatchesABitwiseReference() {
        func reference(_ bytes: ArraySlice<UInt8>) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = (crc >> 1) ^ (0x82F6_3B78 & (0 &- (crc & 1))) }
            }
            return ~crc
        }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for start in 0..<9 {
            for end in stride(from: start, through: bytes.count, by: 7) {
                let slice = bytes[start..<end]
                let computed = slice.withBorrowedBytes { Checksum.crc32c($0) }
                #expect(computed == reference(slice), "\(start)..<\(end)")
            }
        }
    }
}
