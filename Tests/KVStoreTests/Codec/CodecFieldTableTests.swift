import Foundation
import Testing

@testable import KVStore

/// Interning field names, and persisting the table.
@Suite struct CodecFieldTableTests {
    @Test func idsStartAtOneAndAreStable() {
        var table = FieldTable()
        #expect(table.id(for: "title", in: .topLevel) == 1)
        #expect(table.id(for: "done", in: .topLevel) == 2)
        #expect(table.id(for: "title", in: .topLevel) == 1)
        #expect(table.count == 2)
        #expect(table.names == ["title", "done"])
        #expect(table.existingID(for: "done", in: .topLevel) == 2)
        #expect(table.existingID(for: "missing", in: .topLevel) == nil)
        #expect(table.name(for: 1, in: .topLevel) == "title")
        #expect(table.name(for: 0, in: .topLevel) == nil)
        #expect(table.name(for: 3, in: .topLevel) == nil)
    }

    @Test func theFirstNonNullKindIsKept() {
        var table = FieldTable()
        let id = table.id(for: "due", in: .topLevel)
        #expect(table.kind(of: id) == nil)
        table.observe(.null, for: id)
        #expect(table.kind(of: id) == nil)
        table.observe(.date, for: id)
        table.observe(.string, for: id)
        #expect(table.kind(of: id) == .date)
        #expect(table.kind(of: 99) == nil)
    }

    @Test func addingANameOrKindMakesTheTableDiffer() {
        var table = FieldTable()
        _ = table.id(for: "a", in: .topLevel)
        let loaded = table
        _ = table.id(for: "a", in: .topLevel)
        table.observe(.null, for: 1)
        #expect(table == loaded)
        #expect(table.revision == loaded.revision)
        table.observe(.int, for: 1)
        #expect(table != loaded)
        #expect(table.revision == loaded.revision + 1)
        table.observe(.string, for: 1)
        #expect(table.revision == loaded.revision + 1)
        _ = table.id(for: "b", in: .topLevel)
        #expect(table.count == loaded.count + 1)
        #expect(table.revision == loaded.revision + 2)
    }

    @Test func onlyAnUnchangedCopyIsIdentical() throws {
        var table = FieldTable()
        _ = table.id(for: "a", in: .topLevel)
        let copy = table
        #expect(copy.isIdentical(to: table))
        // An equal table built on its own, and copies that changed, are not.
        var rebuilt = FieldTable()
        _ = rebuilt.id(for: "a", in: .topLevel)
        #expect(rebuilt == table && !rebuilt.isIdentical(to: table))
        table.observe(.int, for: 1)
        #expect(!copy.isIdentical(to: table))
        var renamed = copy
        let didRename = renamed.rename("a", to: "b")
        #expect(didRename)
        #expect(!renamed.isIdentical(to: copy))
        var decoded = try JSONDecoder().decode(FieldTable.self, from: JSONEncoder().encode(copy))
        #expect(!decoded.isIdentical(to: copy))
        _ = decoded.id(for: "c", in: .topLevel)
        #expect(!decoded.isIdentical(to: copy))
    }

    @Test func theTableRoundTripsThroughCodable() throws {
        var table = FieldTable()
        _ = table.id(for: "x", in: .topLevel)
        _ = table.id(for: "y", in: .topLevel)
        table.observe(.uuid, for: 2)
        let json = try JSONEncoder().encode(table)
        let decoded = try JSONDecoder().decode(FieldTable.self, from: json)
        #expect(decoded == table)
        #expect(decoded.existingID(for: "y", in: .topLevel) == 2)
        #expect(try codecRoundTrip(table) == table)
    }

    @Test func aPersistedTableWithDuplicateNamesIsRejected() {
        let json = Data(#"{"names":["a","a"],"kinds":[]}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FieldTable.self, from: json) }
    }

    @Test func nestedStructsShareTheEntityTableAndDictionaryKeysAreNotInterned() throws {
        struct Inner: Codable { var title: String; var map: [String: Int] }
        struct Outer: Codable { var title: String; var inner: Inner }
        var fields = FieldTable()
        _ = try encodeTestRecord(Outer(title: "o", inner: Inner(title: "i", map: ["key": 1])), fields: &fields)
        #expect(fields.names == ["title", "inner", "map"])
    }
}
