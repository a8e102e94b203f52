import Foundation
import KVStore
import Testing

@testable import KVToolCore

/// `--on-conflict fail | replace | skip`: records of the input whose ID or unique value a stored record has.
@Suite struct ImportConflictTests {
    /// A project line.
    static func project(_ id: UUID, _ name: String) -> String {
        #"{"entity":"Project","id":"\#(id)","record":{"id":"\#(id)","name":"\#(name)","#
            + #""createdAt":"2026-05-09T06:13:20Z"}}"#
    }

    /// Makes the sample store, and returns a file of `lines` beside it.
    static func makeStore(_ store: borrowing TemporaryStore, lines: [String]) throws -> String {
        try Sample.makeStore(at: store.path)
        let file = store.sibling("input.jsonl")
        try ImportTesting.write(lines, to: file)
        return file
    }

    static let fresh = fixedID(8, entity: 1)

    @Test func failIsTheDefaultForIDsAndUniqueValues() throws {
        let store = TemporaryStore()
        let file = try Self.makeStore(
            store,
            lines: [
                Self.project(Sample.inbox.id, "Inbox again"), Self.project(Self.fresh, "Garden"),
            ])
        let before = try ImportTesting.export(store.path)
        let result = kvtool("import", store.path, file)
        #expect(
            result.errors.split(separator: "\n").map(String.init) == [
                "Error: line 1: Project \(Sample.inbox.id): the store already has a record with this ID "
                    + "(--on-conflict fail, the default; replace or skip decide otherwise)",
                "Error: line 2: Project \(Self.fresh): name \"Garden\" is already used by the stored Project "
                    + "\(Sample.garden.id) (unique index name)",
                "Error: the input is invalid: 2 problems; nothing was written to the store",
            ])
        #expect(try ImportTesting.export(store.path) == before)
    }

    @Test func replaceWritesRecordsInPlaceOfTheStoredOnes() throws {
        let store = TemporaryStore()
        let file = try Self.makeStore(
            store,
            lines: [
                Self.project(Sample.inbox.id, "Inbox renamed"), Self.project(Self.fresh, "Fresh"),
            ])
        #expect(
            kvtool("import", store.path, file, "--on-conflict", "replace")
                == RunResult(
                    status: 0, output: "Imported 2 records (1 replacing stored ones) from \(file).\n", errors: ""))
        #expect(kvtool("count", store.path, "Project").output == "3\n")
        #expect(kvtool("count", store.path, "Project", "--where", "name=Inbox").output == "0\n")
        #expect(kvtool("count", store.path, "Project", "--where", "name=Inbox renamed").output == "1\n")
        ImportTesting.expectClean(store.path)
    }

    /// Replacing never deletes another record: its delete rules would apply, which kvtool does not run. A unique value
    /// that an earlier line frees is free, though.
    @Test func replaceRefusesAUniqueValueOfAnotherStoredRecordUnlessAnEarlierLineFreesIt() throws {
        let store = TemporaryStore()
        let file = try Self.makeStore(store, lines: [Self.project(Self.fresh, "Inbox")])
        let refused = kvtool("import", store.path, file, "--on-conflict", "replace")
        #expect(refused.status == 65)
        #expect(
            refused.errors.split(separator: "\n").first.map(String.init)
                == "Error: line 1: Project \(Self.fresh): name \"Inbox\" is already used by the stored Project "
                + "\(Sample.inbox.id) (unique index name); --on-conflict replace replaces the record with the same ID "
                + "and never deletes another one (its delete rules would apply): delete it first, or replace it on an "
                + "earlier line")
        // The two projects swap names: the first line frees "Garden", the second "Inbox", the third takes it.
        try ImportTesting.write(
            [
                Self.project(Sample.inbox.id, "Garden 2"), Self.project(Sample.garden.id, "Inbox 2"),
                Self.project(Self.fresh, "Inbox"),
            ], to: file)
        #expect(kvtool("import", store.path, file, "--on-conflict", "replace").status == 0)
        #expect(kvtool("count", store.path, "Project", "--where", "name=Inbox").output == "1\n")
        #expect(
            kvtool("list", store.path, "Project", "--where", "name=Inbox", "--fields", "id").output
                == #"{"id":"\#(Self.fresh)"}"# + "\n")
        ImportTesting.expectClean(store.path)
    }

    @Test func skipKeepsStoredRecordsAndSkipsUniqueValuesTheyHold() throws {
        let store = TemporaryStore()
        let file = try Self.makeStore(
            store,
            lines: [
                Self.project(Sample.inbox.id, "Inbox renamed"), Self.project(Self.fresh, "Garden"),
                Self.project(fixedID(9, entity: 1), "Third"),
            ])
        #expect(
            kvtool("import", store.path, file, "--on-conflict", "skip")
                == RunResult(
                    status: 0, output: "Imported 1 record from \(file); skipped 2 (--on-conflict skip).\n",
                    errors: ""))
        #expect(kvtool("count", store.path, "Project").output == "3\n")
        #expect(kvtool("count", store.path, "Project", "--where", "name=Inbox").output == "1\n")
        ImportTesting.expectClean(store.path)
    }

    /// A record skipped for its unique value is not stored, so nothing of the input may refer to it.
    @Test func skipRefusesReferencesToARecordItSkips() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        let task =
            #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000209","record":{"id":"01900000-0000-7000-8000-000000000209","#
            + #""title":"T","isDone":false,"createdAt":"2026-05-09T06:13:20Z","projectID":"\#(Self.fresh)"}}"#
        let file = store.sibling("input.jsonl")
        try ImportTesting.write([Self.project(Self.fresh, "Garden"), task], to: file)
        let result = kvtool("import", store.path, file, "--on-conflict", "skip")
        #expect(result.status == 65)
        #expect(
            result.errors.split(separator: "\n").first.map(String.init)
                == "Error: line 2: Task 01900000-0000-7000-8000-000000000209: projectID references Project "
                + "\(Self.fresh), which this import skips (line 1: a unique value of it is a stored record's)")
    }

    /// The replaced record's external value goes, in the same transaction; an identical one (the same value ID and
    /// bytes, as when an export is imported back) is left as it is.
    @Test func replaceDeletesTheExternalValuesItReplaces() throws {
        let source = TemporaryStore()
        try ExternalSample.makeStore(at: source.path)
        let file = source.sibling("photo.jsonl")
        #expect(kvtool("export", source.path, "--output", file).status == 0)
        let before = try ImportTesting.export(source.path)
        #expect(kvtool("import", source.path, file, "--on-conflict", "replace").status == 0)
        #expect(try ImportTesting.export(source.path) == before)
        ImportTesting.expectClean(source.path)

        let container = try ModelContainer(for: Photo.self, configuration: ModelConfiguration(path: source.path))
        let changed = Data(repeating: 7, count: 300_000)
        try container.write { txn in
            var photo = try #require(try txn.model(for: ExternalSample.photoID, as: Photo.self))
            photo.image = ExternalData(changed)
            try txn.insert(photo)
        }
        try container.close()
        #expect(kvtool("import", source.path, file, "--on-conflict", "replace").status == 0)
        ImportTesting.expectClean(source.path)
        #expect(try ImportTesting.export(source.path) == before)
        let chunks = kvtool("info", source.path).output.split(separator: "\n").first { $0.hasPrefix("external/Photo") }
        #expect(chunks?.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == "3")
    }
}
