import Foundation
import TestSupport
import Testing

@testable import KVStore

/// Round trips of single values of every scalar type the codec knows, at the
/// top level and as fields, through the typed coders and through RecordValue.
@Suite struct CodecScalarTests {
    /// A struct with one field, to test values as fields as well as records.
    struct Box<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value
    }

    @Test(arguments: [Int64.min, Int64.min + 1, -1_000_000_007, -129, -128, -1, 0, 1, 63, 64, 127, 128, 300, Int64.max])
    func signedIntegersRoundTrip(_ value: Int64) throws {
        #expect(try codecRoundTrip(value) == value)
        #expect(try codecRoundTrip(Box(value: Int(value))) == Box(value: Int(value)))
        if let small = Int32(exactly: value) { #expect(try codecRoundTrip(Box(value: small)) == Box(value: small)) }
        if let small = Int16(exactly: value) { #expect(try codecRoundTrip(Box(value: small)) == Box(value: small)) }
        if let small = Int8(exactly: value) { #expect(try codecRoundTrip(Box(value: small)) == Box(value: small)) }
    }

    @Test(arguments: [
        UInt64.min, 1, 127, 128, 255, 256, 65_535, 65_536, UInt64(UInt32.max), UInt64.max - 1, UInt64.max,
    ])
    func unsignedIntegersRoundTrip(_ value: UInt64) throws {
        #expect(try codecRoundTrip(value) == value)
        #expect(try codecRoundTrip(Box(value: UInt(value))) == Box(value: UInt(value)))
        if let small = UInt32(exactly: value) { #expect(try codecRoundTrip(Box(value: small)) == Box(value: small)) }
        if let small = UInt16(exactly: value) { #expect(try codecRoundTrip(Box(value: small)) == Box(value: small)) }
        if let small = UInt8(exactly: value) { #expect(try codecRoundTrip(Box(value: small)) == Box(value: small)) }
    }

    @Test func integerExtremesOfEveryWidthRoundTrip() throws {
        #expect(try codecRoundTrip([Int8.min, Int8.max]) == [Int8.min, Int8.max])
        #expect(try codecRoundTrip([Int16.min, Int16.max]) == [Int16.min, Int16.max])
        #expect(try codecRoundTrip([Int32.min, Int32.max]) == [Int32.min, Int32.max])
        #expect(try codecRoundTrip([Int.min, Int.max]) == [Int.min, Int.max])
        #expect(try codecRoundTrip([UInt8.min, UInt8.max]) == [UInt8.min, UInt8.max])
        #expect(try codecRoundTrip([UInt16.min, UInt16.max]) == [UInt16.min, UInt16.max])
        #expect(try codecRoundTrip([UInt32.min, UInt32.max]) == [UInt32.min, UInt32.max])
        #expect(try codecRoundTrip([UInt.min, UInt.max]) == [UInt.min, UInt.max])
        #expect(try codecRoundTrip(Box(value: Int128(Int64.min))) == Box(value: Int128(Int64.min)))
        #expect(try codecRoundTrip(Box(value: UInt128(UInt64.max))) == Box(value: UInt128(UInt64.max)))
    }

    @Test func wideIntegersOutsideSixtyFourBitsFailToEncode() {
        var fields = FieldTable()
        #expect(throws: EncodingError.self) { try encodeTestRecord(Box(value: Int128(Int64.max) + 1), fields: &fields) }
        #expect(throws: EncodingError.self) {
            try encodeTestRecord(Box(value: UInt128(UInt64.max) + 1), fields: &fields)
        }
    }

    @Test(arguments: [
        0.0, -0.0, 1.0, -1.0, 0.1, -2.5e-300, Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude,
        Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude, Double.infinity, -Double.infinity, Double.nan,
        -Double.nan, Double.signalingNaN, Double.pi,
    ])
    func doublesRoundTripBitForBit(_ value: Double) throws {
        #expect(try codecRoundTrip(value).bitPattern == value.bitPattern)
        #expect(try codecRoundTrip(Box(value: [value])).value[0].bitPattern == value.bitPattern)
    }

    @Test(
        arguments: [
            Float(0), -0.0, 1.5, -1.5, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .infinity, -.infinity, .nan, -.nan, .pi,
        ] as [Float])
    func floatsRoundTripBitForBit(_ value: Float) throws {
        #expect(try codecRoundTrip(value).bitPattern == value.bitPattern)
        #expect(try codecRoundTrip(Box(value: [value])).value[0].bitPattern == value.bitPattern)
    }

    @Test(arguments: [true, false])
    func boolsRoundTrip(_ value: Bool) throws {
        #expect(try codecRoundTrip(value) == value)
        #expect(try codecRoundTrip(Box(value: value)) == Box(value: value))
    }

    @Test(arguments: [
        "", "a", "Hello, world", "🧑‍🚀 emoji 👍🏽", "e\u{301} combining", "\u{0}", "a\u{0}b\u{0}", "日本語のテキスト",
        String(repeating: "long text ", count: 2_000),
    ])
    func stringsRoundTrip(_ value: String) throws {
        let decoded = try codecRoundTrip(value)
        #expect(Array(decoded.utf8) == Array(value.utf8))
        #expect(try codecRoundTrip(Box(value: value)) == Box(value: value))
    }

    @Test(arguments: [0, 1, 100, 1 << 20])
    func dataRoundTrips(_ count: Int) throws {
        var random = SplitMix64(seed: UInt64(count))
        let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })
        #expect(try codecRoundTrip(data) == data)
        #expect(try codecRoundTrip(Box(value: data)) == Box(value: data))
    }

    @Test(arguments: [0, -1, 1.5, 1e9, -978_307_200, 7.25e8, .infinity] as [Double])
    func datesRoundTrip(_ interval: Double) throws {
        let date = Date(timeIntervalSinceReferenceDate: interval)
        #expect(try codecRoundTrip(date) == date)
        #expect(try codecRoundTrip(Box(value: date)) == Box(value: date))
    }

    @Test func uuidsRoundTrip() throws {
        let values = [UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        for uuid in values {
            #expect(try codecRoundTrip(uuid) == uuid)
            #expect(try codecRoundTrip(Box(value: uuid)) == Box(value: uuid))
        }
    }

    @Test(arguments: [
        "https://example.com/path?q=1#frag", "file:///tmp/a%20b.txt", "mailto:someone@example.com", "relative/path",
    ])
    func urlsRoundTrip(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect(try codecRoundTrip(url) == url)
        #expect(try codecRoundTrip(Box(value: url)) == Box(value: url))
    }

    @Test(arguments: [
        "0", "1", "-1", "3.14159", "-12345678901234567890.123456789", "0.000000000000000000000000000001",
        "99999999999999999999999999999999999999", "-0.5",
    ])
    func decimalsRoundTripExactly(_ text: String) throws {
        let decimal = try #require(Decimal(string: text, locale: nil))
        #expect(try codecRoundTrip(decimal) == decimal)
        #expect(try codecRoundTrip(Box(value: decimal)) == Box(value: decimal))
    }

    @Test func decimalNaNRoundTrips() throws {
        #expect(try codecRoundTrip(Decimal.nan).isNaN)
    }

    @Test func specialTypesKeepTheirTagsAtEveryLevel() throws {
        var fields = FieldTable()
        let date = Date(timeIntervalSinceReferenceDate: 42)
        let uuid = UUID()
        let url = try #require(URL(string: "https://example.com"))
        let bytes = try encodeTestRecord([[date]] as [[Date?]], fields: &fields)
        #expect(try decodeTestTree(bytes, fields: fields) == .array([.array([.date(date)])]))
        let single = try encodeTestRecord(Box(value: [uuid: url]), fields: &fields)
        // A UUID-keyed dictionary is Codable's alternating key/value array.
        #expect(
            try decodeTestTree(single, fields: fields)
                == .object([("value", .array([.uuid(uuid), .url(url.absoluteString)]))]))
        let decimal = try encodeTestRecord(Optional(Decimal(5)), fields: &fields)
        #expect(try decodeTestTree(decimal, fields: fields) == .decimal("5"))
    }
}
