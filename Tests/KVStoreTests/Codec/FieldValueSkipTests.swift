import Testing

@testable import KVStore

/// Finding a field skips the values stored before it through `ByteReader.endOfFieldValue(at:)`, which skips the
/// common kinds in line: for every value, whole or cut short, and every bad tag or length, it gives the general
/// `endOfValue(at:depth:)`'s end or throws its error.
@Suite struct FieldValueSkipTests {
    /// Whole values of every kind the fast path knows, and some it leaves to the general one.
    static let values: [[UInt8]] = [
        [ValueKind.null.rawValue], [ValueKind.false.rawValue], [ValueKind.true.rawValue],
        [ValueKind.int.rawValue, 0x05], [ValueKind.int.rawValue, 0xAC, 0x02], [ValueKind.uint.rawValue, 0x7F],
        [ValueKind.uint.rawValue, 0xFF, 0xFF, 0x03],
        [ValueKind.double.rawValue] + Array(repeating: 0x11, count: 8),
        [ValueKind.date.rawValue] + Array(repeating: 0x22, count: 8),
        [ValueKind.uuid.rawValue] + Array(repeating: 0x33, count: 16),
        [ValueKind.string.rawValue, 0x00], [ValueKind.string.rawValue, 0x03] + Array("abc".utf8),
        [ValueKind.string.rawValue, 0x80, 0x01] + Array(repeating: 0x61, count: 128),
        [ValueKind.data.rawValue, 0x02, 0x00, 0xFF], [ValueKind.float.rawValue, 0, 0, 0, 0],
        [ValueKind.array.rawValue, 0x02, ValueKind.true.rawValue, ValueKind.null.rawValue],
        [ValueKind.object.rawValue, 0x01, 0x01, ValueKind.int.rawValue, 0x02],
    ]

    /// Bad bytes: an unknown tag, lengths past the end, a varint that never ends.
    static let damaged: [[UInt8]] = [
        [0x7E], [0xFF, 0x00], [ValueKind.string.rawValue, 0x7F, 0x61], [ValueKind.string.rawValue, 0x90],
        [ValueKind.int.rawValue, 0x80], [ValueKind.uint.rawValue, 0x80, 0x80],
        [ValueKind.data.rawValue, 0x05, 0x00], [ValueKind.array.rawValue, 0x7F],
    ]

    /// The end or the error of skipping the value at `offset` of `bytes`, by each path.
    static func skipped(
        _ bytes: [UInt8], at offset: Int
    ) -> (fast: Result<Int, RecordFormatError>, general: Result<Int, RecordFormatError>) {
        bytes.withBorrowedBytes { buffer in
            let reader = ByteReader(buffer)
            return (
                Result { () throws(RecordFormatError) in try reader.endOfFieldValue(at: offset) },
                Result { () throws(RecordFormatError) in try reader.endOfValue(at: offset, depth: 1) }
            )
        }
    }

    @Test(arguments: values + damaged)
    func everyValueWholeOrCutShortSkipsAsTheGeneralPathDoes(value: [UInt8]) {
        for length in 0...value.count {
            // The value cut after `length` bytes, alone and after a byte of another field.
            for prefix in [[], [ValueKind.true.rawValue]] as [[UInt8]] {
                let bytes = prefix + value.prefix(length)
                let (fast, general) = Self.skipped(bytes, at: prefix.count)
                #expect(fast == general, "\(value) cut to \(length) bytes after \(prefix.count)")
            }
        }
    }

    @Test func aWholeValueEndsWhereTheNextBegins() throws {
        for value in Self.values {
            let bytes = value + [ValueKind.null.rawValue]
            #expect(try Self.skipped(bytes, at: 0).fast.get() == value.count, "\(value)")
        }
    }

    /// Where a record's field is, walked entry by entry through the general reader: what
    /// `StoredRecordFields.valueOffset(ofField:)` must answer (`nil` when the object or the entries before the field
    /// do not read, `.some(nil)` when no entry has the id).
    static func referenceOffset(in body: [UInt8], ofField id: UInt64) -> Int?? {
        body.withBorrowedBytes { buffer in
            let reader = ByteReader(buffer)
            var offset = RecordDecoding.recordValueOffset
            guard offset < body.count, body[offset] == ValueKind.object.rawValue else { return nil }
            offset += 1
            guard let count = try? reader.readCount(at: &offset, minimumElementSize: 2) else { return nil }
            for _ in 0..<count {
                guard let entry = try? reader.readVarint(at: &offset) else { return nil }
                if entry == id { return .some(offset) }
                guard let end = try? reader.endOfValue(at: offset, depth: 1) else { return nil }
                offset = end
            }
            return .some(nil)
        }
    }

    /// A scan's test finds a field by walking the entries before it in line: an object of every value above and the
    /// damaged ones, each under its own id (one of them past 127, so in two bytes), cut at every length, gives for
    /// every id the offset, the missing field or the failure the general reader's walk gives.
    @Test func findingAFieldInEveryCutObjectAgreesWithTheGeneralWalk() {
        let entries = Self.values + Self.damaged.prefix(3)
        let ids: [[UInt8]] = entries.indices.map { $0 == 5 ? [0x81, 0x01] : [UInt8($0 + 1)] }
        var object: [UInt8] = [ValueKind.object.rawValue, UInt8(entries.count)]
        for (id, value) in zip(ids, entries) { object += id + value }
        let wanted: [UInt64] = Array(1...UInt64(entries.count + 1)) + [129, 300]
        for length in 0...object.count {
            // A record's body: the version byte and the object cut short; the checksum's four bytes are not read.
            let body = [RecordFormat.version] + object.prefix(length)
            let record = body + [0, 0, 0, 0]
            record.withBorrowedBytes { bytes in
                let fields = StoredRecordFields(decodedRecord: bytes)
                for id in wanted {
                    let expected = Self.referenceOffset(in: body, ofField: id)
                    let found: Int?? = fields.map { $0.valueOffset(ofField: id) } ?? nil
                    #expect(found == expected, "field \(id) of the object cut to \(length) bytes")
                }
            }
        }
    }
}
