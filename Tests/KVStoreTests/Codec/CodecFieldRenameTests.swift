import Foundation
import Testing

@testable import KVStore

/// Renames of top-level fields, which leave the nested fields of the old name as they are.
@Suite struct CodecFieldRenameTests {
    struct Step: Codable, Equatable {
        var text: String
        var done: Bool
    }

    struct ItemV1: Codable, Equatable {
        var done: Bool
        var steps: [Step]
        var review: Step
    }

    struct ItemV2: Codable, Equatable {
        var isDone: Bool
        var steps: [Step]
        var review: Step
    }

    /// A table with `title` and `done`, `done` renamed `isDone` at the top level.
    static func renamedTable() -> FieldTable {
        var table = FieldTable()
        _ = table.id(for: "title", in: .topLevel)
        _ = table.id(for: "done", in: .topLevel)
        let didRename = table.rename("done", to: "isDone")
        #expect(didRename)
        return table
    }

    @Test func aRenameNamesTheIdAnewAtTheTopLevelOnly() {
        let table = Self.renamedTable()
        #expect(table.existingID(for: "isDone", in: .topLevel) == 2)
        #expect(table.existingID(for: "done", in: .topLevel) == nil)
        #expect(table.existingID(for: "done", in: .nested) == 2)
        #expect(table.existingID(for: "isDone", in: .nested) == nil)
        #expect(table.name(for: 2, in: .topLevel) == "isDone")
        #expect(table.name(for: 2, in: .nested) == "done")
        #expect(table.id(2, isNamed: "isDone", in: .topLevel) && !table.id(2, isNamed: "done", in: .topLevel))
        #expect(table.id(2, isNamed: "done", in: .nested) && !table.id(2, isNamed: "isDone", in: .nested))
        #expect(table.name(for: 1, in: .topLevel) == "title" && table.name(for: 1, in: .nested) == "title")
        #expect(table.names == ["title", "done"])
        #expect(table.topLevelNames == [2: "isDone"])
    }

    @Test func aNameNewInOneScopeAfterARenameGetsAnIdOfItsOwn() throws {
        var table = Self.renamedTable()
        // A nested `isDone` is not the renamed field.
        #expect(table.id(for: "isDone", in: .nested) == 3)
        #expect(table.existingID(for: "isDone", in: .topLevel) == 2)
        #expect(table.name(for: 3, in: .topLevel) == nil)
        // Nor is a new top-level `done` the nested one.
        #expect(table.id(for: "done", in: .topLevel) == 4)
        #expect(table.existingID(for: "done", in: .nested) == 2)
        #expect(table.name(for: 4, in: .nested) == nil)
        #expect(table.names == ["title", "done", "isDone", "done"])

        let decoded = try JSONDecoder().decode(FieldTable.self, from: JSONEncoder().encode(table))
        #expect(decoded == table)
        for scope in [FieldScope.topLevel, .nested] {
            for name in ["title", "done", "isDone"] {
                #expect(decoded.existingID(for: name, in: scope) == table.existingID(for: name, in: scope))
            }
            for id in UInt32(1)...4 { #expect(decoded.name(for: id, in: scope) == table.name(for: id, in: scope)) }
        }
    }

    @Test func aRenameToANameTheTableHasIsRefused() {
        var table = Self.renamedTable()
        _ = table.id(for: "note", in: .nested)
        // Any name the top level could read is taken: the table cannot tell where `note` is used.
        let refusals = [
            table.rename("title", to: "note"), table.rename("title", to: "isDone"),
            table.rename("done", to: "finished"),
        ]
        #expect(refusals == [false, false, false])
        #expect(table.topLevelNames == [2: "isDone"])
    }

    @Test func renamingBackGivesTheIdOneNameAgain() {
        var table = Self.renamedTable()
        let didRename = table.rename("isDone", to: "done")
        #expect(didRename)
        #expect(table.topLevelNames.isEmpty)
        #expect(table.existingID(for: "done", in: .topLevel) == 2)
        #expect(
            table
                == {
                    var plain = FieldTable()
                    _ = plain.id(for: "title", in: .topLevel)
                    _ = plain.id(for: "done", in: .topLevel)
                    return plain
                }())
    }

    @Test func aTableNeverRenamedPersistsAsItDidBefore() throws {
        var table = FieldTable()
        _ = table.id(for: "done", in: .topLevel)
        table.observe(.true, for: 1)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(table), as: UTF8.self) == #"{"kinds":[2],"names":["done"]}"#)
        // What the previous code wrote, renames included (they applied everywhere), reads in both scopes alike.
        let old = try JSONDecoder().decode(
            FieldTable.self, from: Data(#"{"kinds":[null,2],"names":["title","isDone"]}"#.utf8))
        #expect(old.topLevelNames.isEmpty)
        #expect(old.existingID(for: "isDone", in: .topLevel) == 2 && old.existingID(for: "isDone", in: .nested) == 2)
        #expect(
            String(decoding: try encoder.encode(Self.renamedTable()), as: UTF8.self)
                == #"{"kinds":[null,null],"names":["title","done"],"topLevelNames":{"2":"isDone"}}"#)
    }

    @Test(arguments: [
        #"{"names":["a"],"topLevelNames":{"2":"b"}}"#,
        #"{"names":["a"],"topLevelNames":{"x":"b"}}"#,
        #"{"names":["a","b"],"topLevelNames":{"1":"c","2":"c"}}"#,
        #"{"names":["a","a","a"],"topLevelNames":{"1":"b"}}"#,
    ])
    func aPersistedTableWhoseScopesNameTwiceIsRejected(json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FieldTable.self, from: Data(json.utf8)) }
    }

    @Test func aRenamedTableReadsOldRecordsAndWritesTheSameBytes() throws {
        var fields = FieldTable()
        let old = ItemV1(
            done: true, steps: [Step(text: "a", done: false)], review: Step(text: "r", done: false))
        let bytes = try encodeTestRecord(old, fields: &fields)
        let didRename = fields.rename("done", to: "isDone")
        #expect(didRename)

        let read = try decodeTestRecord(ItemV2.self, from: bytes, fields: fields)
        #expect(read == ItemV2(isDone: true, steps: old.steps, review: old.review))
        // The new model writes the ids the old one did, and no new name.
        var written = fields
        #expect(try encodeTestRecord(read, fields: &written) == bytes)
        #expect(written.count == fields.count)
        // The tree that kvtool reads and writes names each object's fields in its scope.
        let tree = try decodeTestTree(bytes, fields: fields)
        guard case .object(let entries) = tree else {
            Issue.record("not an object: \(tree)")
            return
        }
        #expect(entries.map(\.name) == ["isDone", "steps", "review"])
        guard case .object(let review) = entries[2].value else {
            Issue.record("not an object: \(entries[2].value)")
            return
        }
        #expect(review.map(\.name) == ["text", "done"])
        var treeFields = fields
        #expect(tree.encode(fields: &treeFields) == bytes)
        #expect(treeFields == fields)
    }

    @Test func aSingleValueWrapperKeepsTheRecordsOwnScope() throws {
        struct Wrapper: Codable, Equatable {
            var item: ItemV2
            init(item: ItemV2) { self.item = item }
            init(from decoder: any Decoder) throws { item = try decoder.singleValueContainer().decode(ItemV2.self) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(item)
            }
        }
        var fields = FieldTable()
        let bytes = try encodeTestRecord(
            ItemV1(done: false, steps: [], review: Step(text: "r", done: true)), fields: &fields)
        let didRename = fields.rename("done", to: "isDone")
        #expect(didRename)
        let wrapped = try decodeTestRecord(Wrapper.self, from: bytes, fields: fields)
        #expect(wrapped.item == ItemV2(isDone: false, steps: [], review: Step(text: "r", done: true)))
        var written = fields
        #expect(try encodeTestRecord(wrapped, fields: &written) == bytes)
    }
}
