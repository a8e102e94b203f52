import Foundation
import KVStore
import Testing

@testable import KVToolCore

/// What the import's first pass refuses, with the line and the reason, before anything is written.
@Suite struct ImportValidationTests {
    /// The lines of the sample store's export, with its relationships.
    static func sampleExport(_ store: borrowing TemporaryStore) throws -> [String] {
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        return kvtool("export", store.path).output.split(separator: "\n").map(String.init)
    }

    /// Imports `lines` into a new store beside `store` and returns the result; the store must not be created.
    static func importIntoNewStore(_ lines: [String], beside store: borrowing TemporaryStore) throws -> RunResult {
        let file = store.sibling("input.jsonl")
        try ImportTesting.write(lines, to: file)
        let target = store.sibling("target")
        let result = kvtool("import", target, file)
        #expect(!FileManager.default.fileExists(atPath: target), "an invalid input creates no store")
        return result
    }

    /// Before: the import stored a task without its title, which the program's `Task` cannot decode.
    @Test func aMissingNonOptionalFieldIsRefused() throws {
        let store = TemporaryStore()
        var lines = try Self.sampleExport(store)
        lines[4] = lines[4].replacingOccurrences(of: #""title":"Plant tulips","#, with: "")
        let result = try Self.importIntoNewStore(lines, beside: store)
        #expect(
            result
                == RunResult(
                    status: 65, output: "",
                    errors: "Error: line 5: Task 01900000-0000-7000-8000-000000000202: has no value for 'title', which "
                        + "every Task of the export has (a non-optional field of the program's model, as far as the "
                        + "catalogs tell)\nError: the input is invalid: 1 problem; nothing was written to the store\n"))

        // Without an export, the store's records are the evidence.
        let file = store.sibling("hand.jsonl")
        try ImportTesting.write(
            [
                #"{"entity":"Task","id":"01900000-0000-7000-8000-000000000209","record":{"#
                    + #""id":"01900000-0000-7000-8000-000000000209","title":"No date","isDone":false}}"#
            ], to: file)
        let handWritten = kvtool("import", store.path, file)
        #expect(handWritten.status == 65)
        #expect(
            handWritten.errors.hasPrefix(
                "Error: line 1: Task 01900000-0000-7000-8000-000000000209: has no value for 'createdAt', which every "
                    + "Task of the store has"))
        #expect(kvtool("count", store.path, "Task").output == "4\n")
    }

    /// Before: a task referring to a project that exists nowhere was stored, and `check` then failed.
    @Test func aDanglingReferenceIsRefused() throws {
        let store = TemporaryStore()
        var lines = try Self.sampleExport(store)
        let missing = fixedID(9, entity: 1)
        lines[3] = lines[3].replacingOccurrences(of: "\(Sample.inbox.id)", with: "\(missing)")
        let result = try Self.importIntoNewStore(lines, beside: store)
        #expect(result.status == 65)
        #expect(
            result.errors.split(separator: "\n").first.map(String.init)
                == "Error: line 4: Task 01900000-0000-7000-8000-000000000201: projectID references Project \(missing), "
                + "which is neither in the input nor in the store (relationship project does not allow dangling "
                + "references)")

        // A reference to a record later in the input resolves: tasks before their projects.
        let reordered = [lines[0]] + Array(lines[3...6]) + Array(lines[1...2]) + [lines[7]]
        let target = store.sibling("reordered")
        let file = store.sibling("reordered.jsonl")
        try ImportTesting.write(
            reordered.map { $0.replacingOccurrences(of: "\(missing)", with: "\(Sample.inbox.id)") }, to: file)
        #expect(kvtool("import", target, file).status == 0)
        ImportTesting.expectClean(target)
    }

    /// Before: a descriptor that names no stored chunks, or chunks of the wrong size, was stored as it was.
    @Test(arguments: [
        (
            #""size":600000"#, #""size":"many""#,
            "field 'image': an external value's descriptor needs an int of 0 or more as its size"
        ),
        (
            #","chunkSize":262128"#, "",
            "field 'image': an external value's descriptor has the members id, size, not exactly id, size and chunkSize"
        ),
        (
            #""size":600000"#, #""size":600000,"extra":1"#,
            "field 'image': an external value's descriptor has the members chunkSize, extra, id, size, not exactly id, size and chunkSize"
        ),
        (
            #""chunkSize":262128"#, #""chunkSize":0"#,
            "field 'image': an external value's descriptor needs an int from 1 to 67108864 as its chunkSize"
        ),
        (
            #""size":600000"#, #""size":600001"#,
            "chunk 2 of Photo.image of 01900000-0000-7000-8000-000000000301 holds 75744 bytes; its descriptor (600001 bytes in chunks of 262128) makes it 75745"
        ),
    ])
    func aMalformedExternalDescriptorIsRefused(_ original: String, _ replacement: String, _ message: String) throws {
        let source = TemporaryStore()
        try ExternalSample.makeStore(at: source.path)
        var lines = kvtool("export", source.path).output.split(separator: "\n").map(String.init)
        try #require(lines[1].contains(original))
        lines[1] = lines[1].replacingOccurrences(of: original, with: replacement)
        let result = try Self.importIntoNewStore(lines, beside: source)
        #expect(result.status == 65)
        let first = result.errors.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasSuffix(message), "\(result.errors)")
    }

    @Test func missingOrDisorderedChunkLinesAreRefused() throws {
        let source = TemporaryStore()
        try ExternalSample.makeStore(at: source.path)
        let lines = kvtool("export", source.path).output.split(separator: "\n").map(String.init)
        // The header, the record, three chunk lines of its 600,000-byte image, the end line.
        try #require(lines.count == 6)
        let withoutChunk = try Self.importIntoNewStore(
            lines.enumerated().filter { $0.offset != 3 }.map(\.element), beside: source)
        #expect(
            withoutChunk.errors.split(separator: "\n").first.map(String.init)
                == "Error: line 4: expected chunk 1 of Photo.image of 01900000-0000-7000-8000-000000000301 (the record "
                + "at line 2), found chunk 2 of Photo.image of 01900000-0000-7000-8000-000000000301")
        let cut = try Self.importIntoNewStore(Array(lines.prefix(4)), beside: source)
        #expect(
            cut.errors.split(separator: "\n").map(String.init) == [
                "Error: line 2: Photo 01900000-0000-7000-8000-000000000301: the input ends before chunk 2 of image (its "
                    + "value has 3 chunks)",
                "Error: line 4: the export has no end line: it is incomplete (was it cut short?), or the line was removed",
                "Error: the input is invalid: 2 problems; nothing was written to the store",
            ])
    }

    /// Before: both members were stored, so the record held two titles and the program read one of them.
    @Test func duplicateJSONMembersAreRefused() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path, projects: [Sample.inbox], tasks: [])
        let file = store.sibling("twice.jsonl")
        try ImportTesting.write(
            [
                #"{"entity":"Project","id":"01900000-0000-7000-8000-000000000109","record":{"#
                    + #""id":"01900000-0000-7000-8000-000000000109","name":"A","name":"B","createdAt":"2026-05-09T06:13:20Z"}}"#
            ], to: file)
        let transaction = try ImportTesting.lastTransaction(store.path)
        #expect(
            kvtool("import", store.path, file)
                == RunResult(
                    status: 65, output: "",
                    errors: """
                        Error: line 1: malformed JSON at column 130: the member name "name" appears twice in an object
                        Error: the input is invalid: 1 problem; nothing was written to the store

                        """))
        #expect(try ImportTesting.lastTransaction(store.path) == transaction)
    }

    @Test func duplicateIDsAndUniqueValuesWithinTheInputAreRefused() throws {
        let store = TemporaryStore()
        var lines = try Self.sampleExport(store)
        lines.insert(lines[1], at: 2)
        lines.insert(lines[1].replacingOccurrences(of: "\(Sample.inbox.id)", with: "\(fixedID(7, entity: 1))"), at: 3)
        let result = try Self.importIntoNewStore(lines, beside: store)
        let errors: [String] = result.errors.split(separator: "\n").map(String.init)
        let expected: [String] = [
            "Error: line 3: Project 01900000-0000-7000-8000-000000000101: the ID appears twice in the input, also at "
                + "line 2",
            "Error: line 4: Project 01900000-0000-7000-8000-000000000107: name \"Inbox\" is also the value of Project "
                + "01900000-0000-7000-8000-000000000101 at line 2 (unique index name)",
        ]
        #expect(Array(errors.prefix(2)) == expected)
    }

    /// An export's end line counts its lines: one lost in a copy is found.
    @Test func anExportThatLostARecordIsRefused() throws {
        let store = TemporaryStore()
        var lines = try Self.sampleExport(store)
        lines.remove(at: 6)
        let result = try Self.importIntoNewStore(lines, beside: store)
        #expect(
            result.errors.split(separator: "\n").first.map(String.init)
                == "Error: line 7: the end line counts 4 records and 0 chunks of Task, and the input has 3 and 0: lines "
                + "were lost or added")
    }

    @Test func problemsAreReportedInLineOrderUpToALimit() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path, projects: [], tasks: [])
        let file = store.sibling("many.jsonl")
        try ImportTesting.write((0..<150).map { _ in "nope" }, to: file)
        let result = kvtool("import", store.path, file)
        let errors = result.errors.split(separator: "\n")
        #expect(errors.count == 101)
        #expect(errors.first == "Error: line 1: malformed JSON at column 1: unexpected character 'n'")
        #expect(errors[99].hasPrefix("Error: line 100: "))
        #expect(
            errors.last
                == "Error: the input is invalid: 150 problems (the first 100 shown); nothing was written to the store")
    }
}

/// Where an import creates a store, and where it does not.
@Suite struct ImportNewStoreTests {
    @Test func aStoreIsCreatedOnlyAtANewPathOrInAnEmptyDirectory() throws {
        let source = TemporaryStore()
        try Sample.makeStore(at: source.path)
        let file = source.sibling("export.jsonl")
        #expect(kvtool("export", source.path, "--output", file).status == 0)
        let crowded = source.sibling("crowded")
        try FileManager.default.createDirectory(atPath: crowded, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: crowded + "/notes.txt"))
        #expect(
            kvtool("import", crowded, file)
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: '\(crowded)' holds no store but other files (notes.txt); import creates a store "
                        + "only in a new or empty directory\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: crowded) == ["notes.txt"])
        let empty = source.sibling("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        #expect(kvtool("import", empty, file).status == 0)
        ImportTesting.expectClean(empty)
    }

    /// A store whose catalog does not read keeps it: the import neither reads nor writes over the damaged entry.
    @Test func aStoreWithADamagedCatalogEntryIsRefused() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let file = store.sibling("export.jsonl")
        #expect(kvtool("export", store.path, "--output", file).status == 0)
        try withEnvironment(at: store.path) { environment in
            let catalog = try environment.openTable(named: Catalog.tableName)
            try environment.write { txn in try txn.put(Array("{".utf8), forKey: Catalog.entityKey("Task"), in: catalog)
            }
        }
        let result = kvtool("import", store.path, file, "--on-conflict", "skip")
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("Error: The catalog entry 'entity/Task' of '\(store.path)' does not decode"))
    }
}
