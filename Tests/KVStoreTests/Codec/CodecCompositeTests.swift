import Foundation
import Testing

@testable import KVStore

/// Round trips of containers, nested types, enums and custom Codable
/// implementations, and how records written by one version of a type decode
/// with another.
@Suite struct CodecCompositeTests {
    struct Address: Codable, Equatable {
        var street: String
        var zip: Int?
    }

    struct Person: Codable, Equatable {
        var id: UUID
        var name: String
        var age: UInt8
        var addresses: [Address]
        var primary: Address?
        var tags: Set<String>
        var scores: [String: Double]
        var counts: [Int: [String]]
        var nested: [[Int?]]
        var optionalOptional: Int??
    }

    /// An enum with String raw values, usable as a dictionary key.
    enum Color: String, Codable, Equatable, CodingKeyRepresentable {
        case red, green, blue
    }

    /// An enum with Int raw values, usable as a dictionary key.
    enum Priority: Int, Codable, Equatable, CodingKeyRepresentable {
        case low = -1, normal = 0, high = 10
    }

    indirect enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case rectangle(width: Double, height: Double)
        case labeled(String, Shape?)
        case empty
    }

    /// A type whose hand-written Codable uses every container kind.
    struct Custom: Codable, Equatable {
        var title: String
        var points: [(x: Int, y: Int)]
        var flags: [Bool]
        var note: String?

        enum CodingKeys: String, CodingKey {
            case title, geometry, flags, meta
        }

        enum GeometryKeys: String, CodingKey {
            case points, count
        }

        init(title: String, points: [(x: Int, y: Int)], flags: [Bool], note: String?) {
            self.title = title
            self.points = points
            self.flags = flags
            self.note = note
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(title, forKey: .title)
            var geometry = container.nestedContainer(keyedBy: GeometryKeys.self, forKey: .geometry)
            try geometry.encode(points.count, forKey: .count)
            var list = geometry.nestedUnkeyedContainer(forKey: .points)
            for point in points {
                var pair = list.nestedUnkeyedContainer()
                try pair.encode(point.x)
                try pair.encode(point.y)
            }
            var flagList = container.nestedUnkeyedContainer(forKey: .flags)
            try flagList.encode(contentsOf: flags)
            var meta = container.superEncoder(forKey: .meta).singleValueContainer()
            try meta.encode(note)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decode(String.self, forKey: .title)
            let geometry = try container.nestedContainer(keyedBy: GeometryKeys.self, forKey: .geometry)
            let count = try geometry.decode(Int.self, forKey: .count)
            var list = try geometry.nestedUnkeyedContainer(forKey: .points)
            var points: [(x: Int, y: Int)] = []
            while !list.isAtEnd {
                var pair = try list.nestedUnkeyedContainer()
                points.append((try pair.decode(Int.self), try pair.decode(Int.self)))
            }
            guard points.count == count else {
                throw DecodingError.dataCorruptedError(forKey: .count, in: geometry, debugDescription: "count")
            }
            self.points = points
            var flagList = try container.nestedUnkeyedContainer(forKey: .flags)
            var flags: [Bool] = []
            while !flagList.isAtEnd { flags.append(try flagList.decode(Bool.self)) }
            self.flags = flags
            note = try container.superDecoder(forKey: .meta).singleValueContainer().decode(String?.self)
        }

        static func == (lhs: Custom, rhs: Custom) -> Bool {
            lhs.title == rhs.title && lhs.flags == rhs.flags && lhs.note == rhs.note
                && lhs.points.map { [$0.x, $0.y] } == rhs.points.map { [$0.x, $0.y] }
        }
    }

    /// A wrapper that encodes its value through a single value container.
    struct Wrapper<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value

        init(_ value: Value) {
            self.value = value
        }

        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(Value.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    class Animal: Codable {
        var name: String

        init(name: String) {
            self.name = name
        }
    }

    /// A subclass that keeps its superclass's fields under `super`.
    final class Dog: Animal {
        var breed: String

        enum CodingKeys: String, CodingKey {
            case breed
        }

        init(name: String, breed: String) {
            self.breed = breed
            super.init(name: name)
        }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            breed = try container.decode(String.self, forKey: .breed)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let superEncoder = container.superEncoder()
            try container.encode(breed, forKey: .breed)
            try super.encode(to: superEncoder)
        }
    }

    /// A subclass that shares its superclass's keyed container.
    final class Cat: Animal {
        var lives: Int

        enum CodingKeys: String, CodingKey {
            case lives
        }

        init(name: String, lives: Int) {
            self.lives = lives
            super.init(name: name)
        }

        required init(from decoder: any Decoder) throws {
            lives = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .lives)
            try super.init(from: decoder)
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(lives, forKey: .lives)
            try super.encode(to: encoder)
        }
    }

    static let person = Person(
        id: UUID(), name: "Ada", age: 36,
        addresses: [Address(street: "1 Main St", zip: 12345), Address(street: "2 Side St", zip: nil)],
        primary: Address(street: "1 Main St", zip: 12345), tags: ["a", "b", "c"], scores: ["x": 1.5, "": -2],
        counts: [-3: ["minus"], 0: [], 7: ["a", "b"]], nested: [[1, nil, 3], [], [nil]], optionalOptional: .some(5))

    @Test func nestedStructsAndCollectionsRoundTrip() throws {
        #expect(try codecRoundTrip(Self.person) == Self.person)
        var empty = Self.person
        empty.addresses = []
        empty.primary = nil
        empty.tags = []
        empty.scores = [:]
        empty.counts = [:]
        empty.optionalOptional = nil
        #expect(try codecRoundTrip(empty) == empty)
    }

    @Test func largeCollectionsRoundTrip() throws {
        let numbers = Array(0..<5_000)
        #expect(try codecRoundTrip(numbers) == numbers)
        let map = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("key \($0)", $0) })
        #expect(try codecRoundTrip(map) == map)
        let intMap = Dictionary(uniqueKeysWithValues: (-500..<500).map { ($0, "\($0)") })
        #expect(try codecRoundTrip(intMap) == intMap)
        let addresses = (0..<300).map { (index: Int) in Address(street: "\(index) Road", zip: index) }
        #expect(try codecRoundTrip(addresses) == addresses)
    }

    @Test func dictionariesUseMapTagsWithInlineKeys() throws {
        var fields = FieldTable()
        let bytes = try encodeTestRecord(["b": 2, "a": 1], fields: &fields)
        #expect(fields.count == 0, "dictionary keys must not be interned")
        #expect(try decodeTestTree(bytes, fields: fields) == .stringMap([("a", .int(1)), ("b", .int(2))]))
        let intBytes = try encodeTestRecord([5: true, -1: false], fields: &fields)
        #expect(try decodeTestTree(intBytes, fields: fields) == .intMap([(-1, .bool(false)), (5, .bool(true))]))
        #expect(fields.count == 0)
    }

    @Test func dictionariesKeyedByCodingKeyRepresentableTypesKeepKeysInline() throws {
        var fields = FieldTable()
        let colors: [Color: Int] = [.red: 1, .blue: 3]
        let bytes = try encodeTestRecord(colors, fields: &fields)
        #expect(try decodeTestTree(bytes, fields: fields) == .stringMap([("blue", .int(3)), ("red", .int(1))]))
        #expect(try decodeTestRecord([Color: Int].self, from: bytes, fields: fields) == colors)
        let priorities: [Priority: String] = [.low: "l", .high: "h"]
        let priorityBytes = try encodeTestRecord(priorities, fields: &fields)
        #expect(try decodeTestRecord([Priority: String].self, from: priorityBytes, fields: fields) == priorities)
        #expect(fields.count == 0, "dictionary keys must not be interned")
        #expect(try codecRoundTrip(["x": [Color.green: [Priority.normal: true]]]) == ["x": [.green: [.normal: true]]])
    }

    @Test func equalDictionariesEncodeToEqualBytes() throws {
        var fields = FieldTable()
        var first: [String: Int] = [:]
        var second: [String: Int] = [:]
        for index in 0..<100 { first["k\(index)"] = index }
        for index in (0..<100).reversed() { second["k\(index)"] = index }
        #expect(try encodeTestRecord(first, fields: &fields) == encodeTestRecord(second, fields: &fields))
    }

    @Test func optionalsRoundTrip() throws {
        #expect(try codecRoundTrip(Int?.none) == nil)
        #expect(try codecRoundTrip(Int?.some(3)) == 3)
        #expect(try codecRoundTrip([Int?.none, 1]) == [nil, 1])
        #expect(try codecRoundTrip(Int??.some(.some(4))) == .some(.some(4)))
        // Codable cannot tell .some(nil) from nil.
        #expect(try codecRoundTrip(Int??.some(.none)) == .none)
        #expect(try codecRoundTrip([String??.some(nil), "x"]) == [.none, "x"])
    }

    @Test(arguments: [Color.red, .green, .blue])
    func stringRawValueEnumsRoundTrip(_ color: Color) throws {
        #expect(try codecRoundTrip(color) == color)
        #expect(try codecRoundTrip([color]) == [color])
        var fields = FieldTable()
        #expect(try decodeTestTree(encodeTestRecord(color, fields: &fields), fields: fields) == .string(color.rawValue))
    }

    @Test(arguments: [Priority.low, .normal, .high])
    func intRawValueEnumsRoundTrip(_ priority: Priority) throws {
        #expect(try codecRoundTrip(priority) == priority)
        var fields = FieldTable()
        #expect(
            try decodeTestTree(encodeTestRecord(priority, fields: &fields), fields: fields)
                == .int(Int64(priority.rawValue)))
    }

    @Test(arguments: [
        Shape.circle(radius: 2), .rectangle(width: 3, height: 4), .labeled("name", .circle(radius: 1)),
        .labeled("none", nil), .empty,
    ])
    func enumsWithAssociatedValuesRoundTrip(_ shape: Shape) throws {
        #expect(try codecRoundTrip(shape) == shape)
        #expect(try codecRoundTrip([shape, shape]) == [shape, shape])
    }

    @Test func customCodableWithNestedUnkeyedAndSuperContainersRoundTrips() throws {
        let value = Custom(title: "t", points: [(1, 2), (-3, 4)], flags: [true, false, true], note: "n")
        #expect(try codecRoundTrip(value) == value)
        let empty = Custom(title: "", points: [], flags: [], note: nil)
        #expect(try codecRoundTrip(empty) == empty)
    }

    @Test func singleValueWrappersRoundTrip() throws {
        #expect(try codecRoundTrip(Wrapper(Self.person)) == Wrapper(Self.person))
        #expect(
            try codecRoundTrip(Wrapper(Wrapper(Date(timeIntervalSinceReferenceDate: 5)))).value.value
                .timeIntervalSinceReferenceDate == 5)
        #expect(try codecRoundTrip([Wrapper(UUID?.none)]) == [Wrapper(nil)])
    }

    @Test func classHierarchiesRoundTrip() throws {
        let dog = try codecRoundTrip(Dog(name: "Rex", breed: "Collie"))
        #expect(dog.name == "Rex" && dog.breed == "Collie")
        let cat = try codecRoundTrip(Cat(name: "Tom", lives: 9))
        #expect(cat.name == "Tom" && cat.lives == 9)
    }

    @Test func emptyTypesRoundTrip() throws {
        struct Empty: Codable, Equatable {}
        #expect(try codecRoundTrip(Empty()) == Empty())
        #expect(try codecRoundTrip([Empty(), Empty()]) == [Empty(), Empty()])
    }

    // MARK: Schema evolution

    struct TaskV1: Codable, Equatable {
        var title: String
        var done: Bool
    }

    struct TaskV2: Codable, Equatable {
        var title: String
        var done: Bool
        var due: Date?
        var tags: [String]?
    }

    @Test func aNewOptionalFieldDecodesAsNilFromAnOldRecord() throws {
        var fields = FieldTable()
        let old = try encodeTestRecord(TaskV1(title: "a", done: true), fields: &fields)
        #expect(try decodeTestRecord(TaskV2.self, from: old, fields: fields) == TaskV2(title: "a", done: true))
    }

    @Test func anOldTypeSkipsAFieldItDoesNotKnow() throws {
        var fields = FieldTable()
        let new = try encodeTestRecord(
            TaskV2(title: "b", done: false, due: Date(timeIntervalSinceReferenceDate: 1), tags: ["x"]), fields: &fields)
        #expect(try decodeTestRecord(TaskV1.self, from: new, fields: fields) == TaskV1(title: "b", done: false))
    }

    @Test func aMissingRequiredFieldThrowsKeyNotFoundNamingIt() throws {
        struct Needs: Codable { var title: String; var count: Int }
        var fields = FieldTable()
        let bytes = try encodeTestRecord(TaskV1(title: "a", done: true), fields: &fields)
        #expect {
            try decodeTestRecord(Needs.self, from: bytes, fields: fields)
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "count"
        }
    }

    @Test func fieldIDsTheTableDoesNotNameAreSkipped() throws {
        var fields = FieldTable()
        let bytes = try encodeTestRecord(TaskV2(title: "c", done: true, due: nil, tags: ["t"]), fields: &fields)
        var truncatedTable = FieldTable()
        _ = truncatedTable.id(for: "title", in: .topLevel)
        _ = truncatedTable.id(for: "done", in: .topLevel)
        #expect(
            try decodeTestRecord(TaskV1.self, from: bytes, fields: truncatedTable) == TaskV1(title: "c", done: true))
    }

    // MARK: Numbers across types

    @Test func integersDecodeIntoAnyWidthThatHoldsThem() throws {
        var fields = FieldTable()
        let bytes = try encodeTestRecord([Int64(-5), 200, 70_000], fields: &fields)
        #expect(try decodeTestRecord([Int32].self, from: bytes, fields: fields) == [-5, 200, 70_000])
        #expect(try decodeTestRecord([Double].self, from: bytes, fields: fields) == [-5, 200, 70_000])
        #expect(try decodeTestRecord([Float].self, from: bytes, fields: fields) == [-5, 200, 70_000])
        let unsigned = try encodeTestRecord([UInt64(1), 127], fields: &fields)
        #expect(try decodeTestRecord([Int8].self, from: unsigned, fields: fields) == [1, 127])
        let signed = try encodeTestRecord([Int64(0), 255], fields: &fields)
        #expect(try decodeTestRecord([UInt8].self, from: signed, fields: fields) == [0, 255])
        let float = try encodeTestRecord(Float(1.5), fields: &fields)
        #expect(try decodeTestRecord(Double.self, from: float, fields: fields) == 1.5)
        let double = try encodeTestRecord(0.25, fields: &fields)
        #expect(try decodeTestRecord(Float.self, from: double, fields: fields) == 0.25)
    }

    /// Values stored by one type that another cannot hold exactly.
    enum Mismatch: String, CaseIterable {
        case int8TooLarge, uint8Negative, int64TooLarge, uintNegative, doubleInexact, floatInexact, stringAsInt
        case nullAsInt, boolAsString, uuidAsDate, intAsBool
    }

    @Test(arguments: Mismatch.allCases)
    func valuesThatDoNotFitThrowDecodingErrors(_ mismatch: Mismatch) throws {
        var fields = FieldTable()
        func check<Stored: Encodable, Requested: Decodable>(_ stored: Stored, as requested: Requested.Type) throws {
            let bytes = try encodeTestRecord(CodecSlot(value: stored), fields: &fields)
            #expect(throws: DecodingError.self) {
                try decodeTestRecord(CodecSlot<Requested>.self, from: bytes, fields: fields)
            }
        }
        switch mismatch {
        case .int8TooLarge: try check(Int64(300), as: Int8.self)
        case .uint8Negative: try check(Int64(-1), as: UInt8.self)
        case .int64TooLarge: try check(UInt64.max, as: Int64.self)
        case .uintNegative: try check(Int64.min, as: UInt.self)
        case .doubleInexact: try check(Int64(1 << 53) + 1, as: Double.self)
        case .floatInexact: try check(0.1, as: Float.self)
        case .stringAsInt: try check("12", as: Int.self)
        case .nullAsInt: try check(Int?.none, as: Int.self)
        case .boolAsString: try check(true, as: String.self)
        case .uuidAsDate: try check(UUID(), as: Date.self)
        case .intAsBool: try check(1, as: Bool.self)
        }
    }
}

/// A one-field struct that is Encodable or Decodable as its value is.
struct CodecSlot<Value> {
    var value: Value
}

extension CodecSlot: Encodable where Value: Encodable {}
extension CodecSlot: Decodable where Value: Decodable {}
