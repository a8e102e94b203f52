import Foundation
import KVStoreInspection
import LMDB
import Testing

@testable import KVStore

// One entity, "Doc", declared with more and fewer indexes, as a program and a script beside it would.

private struct DocIndexed: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var tags: [String] = []
    static let entity = Entity<DocIndexed>(name: "Doc", indexes: [.index(\.title), .index(\.tags)])
}

private struct DocPlain: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var tags: [String] = []
    static let entity = Entity<DocPlain>(name: "Doc")
}

private struct DocUnique: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var tags: [String] = []
    static let entity = Entity<DocUnique>(name: "Doc", indexes: [.unique(\.title)])
}

private struct DocRemovingTitle: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var tags: [String] = []
    static let entity = Entity<DocRemovingTitle>(name: "Doc", indexes: [.index(\.tags)], removedIndexes: ["title"])
}

/// A key type with an encoding of its own: only a program declaring the index can compute its keys.
private struct Reversed: Codable, Sendable, Equatable, IndexKeyEncodable {
    var text: String
    func appendIndexKey(to bytes: inout [UInt8]) { String(text.reversed()).appendIndexKey(to: &bytes) }
}

private struct DocCustomKey: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var code = Reversed(text: "")
    static let entity = Entity<DocCustomKey>(name: "Doc", indexes: [.index(\.code)])
}

private struct DocPlainCode: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var code = Reversed(text: "")
    static let entity = Entity<DocPlainCode>(name: "Doc")
}

/// A program that indexes a computed property, and a script that writes the same entity without declaring it.
private struct DocFolded: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var titleFolded: String { title.lowercased() }
    static let entity = Entity<DocFolded>(name: "Doc", indexes: [.index(\.titleFolded, name: "titleFolded")])
}

private struct DocUnfolded: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    static let entity = Entity<DocUnfolded>(name: "Doc")
}

// A project whose tasks cascade, and a script's project that declares neither the tasks nor the relationship.

private struct Folder: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    static let entity = Entity<Folder>(relationships: [
        .toMany("files", of: File.self, inverse: \.folderID, deleteRule: .cascade)
    ])
}

private struct File: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    var folderID: UUID?
    static let entity = Entity<File>(
        indexes: [.unique(\.name)], relationships: [.toOne("folder", \.folderID, to: Folder.self, inverse: "files")])
}

private struct FolderOnly: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
    static let entity = Entity<FolderOnly>(name: "Folder")
}

private func open<M: Model>(_ type: M.Type, at path: String) throws -> ModelContainer {
    try ModelContainer(for: type, configuration: ModelConfiguration(path: path, durability: .off))
}

/// The names of the indexes the catalog of the store at `path` lists for `entity`.
private func storedIndexes(of entity: String, at path: String) throws -> [String] {
    let environment = try Environment.open(path: path)
    defer { try? environment.close() }
    let catalog = try environment.openTable(named: Catalog.tableName)
    return try environment.read { txn in
        try Catalog.read(EntityCatalog.self, key: Catalog.entityKey(entity), in: txn, table: catalog)?.indexes.map(
            \.name)
            ?? []
    }
}

/// The errors the integrity check (`kvtool check`'s) finds in the store at `path`, through the public API.
func integrityErrors(at path: String) throws -> [String] {
    try StoreInspection.check(path: path).errors.map(\.description)
}

/// The store's catalog is the one truth about its schema: a program that declares less keeps and maintains what the
/// store has, changes are explicit, and opening never changes a store silently.
@Suite struct CatalogTruthTests {
    @Test func anIndexTheModelNoLongerDeclaresIsKeptAndMaintainedFromTheRecords() throws {
        let directory = StoreDirectory()
        let kept = DocIndexed(title: "kept", tags: ["a", "b"])
        let changed = DocIndexed(title: "before", tags: ["a"])
        let deleted = DocIndexed(title: "deleted", tags: ["b"])
        do {
            let program = try open(DocIndexed.self, at: directory.path)
            try program.write { txn in for doc in [kept, changed, deleted] { try txn.insert(doc) } }
            try program.close()
        }
        // A script that declares no index inserts, updates and deletes.
        let added = DocPlain(title: "added", tags: ["c", "a"])
        do {
            let script = try open(DocPlain.self, at: directory.path)
            try script.write { txn in
                try txn.insert(added)
                try txn.insert(DocPlain(id: changed.id, title: "after", tags: ["c"]))
                try txn.delete(DocPlain.self, id: deleted.id)
            }
            try script.close()
        }
        // The script kept the indexes in the catalog and in step with the records, before the program reopens.
        #expect(try storedIndexes(of: "Doc", at: directory.path) == ["title", "tags"])
        #expect(try integrityErrors(at: directory.path) == [])
        let program = try open(DocIndexed.self, at: directory.path)
        defer { try? program.close() }
        let context = ModelContext(program)
        func titles(_ predicate: Predicate<DocIndexed>) throws -> [String] {
            try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.title)])).map(\.title)
        }
        #expect(try titles(#Predicate { $0.title == "after" }) == ["after"])
        #expect(try titles(#Predicate { $0.title == "before" }) == [])
        #expect(try titles(#Predicate { $0.title == "deleted" }) == [])
        #expect(try titles(#Predicate { $0.tags.contains("a") }) == ["added", "kept"])
        #expect(try titles(#Predicate { $0.tags.contains("c") }) == ["added", "after"])
        #expect(
            try context.explain(FetchDescriptor<DocIndexed>(predicate: #Predicate { $0.title == "x" })).contains(
                "index title"))
    }

    @Test func aUniqueConstraintTheModelDoesNotDeclareIsStillEnforced() throws {
        let directory = StoreDirectory()
        let first = DocUnique(title: "taken")
        do {
            let program = try open(DocUnique.self, at: directory.path)
            try program.write { txn in try txn.insert(first) }
            try program.close()
        }
        let script = try open(DocPlain.self, at: directory.path)
        defer { try? script.close() }
        let error = try #require(throws: KVStoreError.self) {
            try script.write { txn in try txn.insert(DocPlain(title: "taken")) }
        }
        #expect(error == .uniqueViolation)
        #expect(error.description.contains("unique index title"))
        #expect(error.description.contains(first.id.uuidString))
        // Its own record may keep its value; a free value is taken.
        try script.write { txn in try txn.insert(DocPlain(id: first.id, title: "taken", tags: ["x"])) }
        try script.write { txn in try txn.insert(DocPlain(title: "free")) }
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func containersOfOneProcessMaintainEachOthersIndexes() throws {
        let directory = StoreDirectory()
        let program = try open(DocIndexed.self, at: directory.path)
        defer { try? program.close() }
        let script = try open(DocPlain.self, at: directory.path)
        defer { try? script.close() }
        let doc = DocPlain(title: "from the script", tags: ["s"])
        try script.write { txn in try txn.insert(doc) }
        let context = ModelContext(program)
        #expect(
            try context.fetch(FetchDescriptor(predicate: #Predicate<DocIndexed> { $0.title == "from the script" })).map(
                \.id) == [doc.id])
        try script.write { txn in try txn.insert(DocPlain(id: doc.id, title: "renamed", tags: ["s"])) }
        #expect(
            try context.fetch(FetchDescriptor(predicate: #Predicate<DocIndexed> { $0.title == "from the script" }))
                .isEmpty)
        #expect(
            try context.fetchCount(FetchDescriptor(predicate: #Predicate<DocIndexed> { $0.title == "renamed" })) == 1)
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func anIndexAddedByAnotherContainerIsMaintainedByTheOpenOnes() throws {
        let directory = StoreDirectory()
        let script = try open(DocPlain.self, at: directory.path)
        defer { try? script.close() }
        try script.write { txn in try txn.insert(DocPlain(title: "before the index")) }
        let program = try open(DocIndexed.self, at: directory.path)
        defer { try? program.close() }
        // The script's container was open before the index existed: its next write learns of it.
        try script.write { txn in try txn.insert(DocPlain(title: "after the index")) }
        let found = try ModelContext(program).fetch(
            FetchDescriptor(predicate: #Predicate<DocIndexed> { $0.title == "after the index" }))
        #expect(found.count == 1)
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func aDeclaredRemovalDeletesTheIndexAndStopsEveryWriterFromWritingIt() throws {
        let directory = StoreDirectory()
        let program = try open(DocIndexed.self, at: directory.path)
        defer { try? program.close() }
        try program.write { txn in try txn.insert(DocIndexed(title: "one")) }
        let remover = try open(DocRemovingTitle.self, at: directory.path)
        defer { try? remover.close() }
        #expect(throws: LMDBError.notFound) {
            try remover.environment.openTable(
                named: Catalog.indexTableName("Doc", "title"), options: [.dupSort, .dupFixed])
        }
        // The program still declares the index: it is refused, with nothing written.
        let error = try #require(throws: KVStoreError.self) {
            try program.write { txn in try txn.insert(DocIndexed(title: "two")) }
        }
        #expect(error == .schemaChanged)
        #expect(error.description.contains("index title of Doc"))
        #expect(throws: KVStoreError.schemaChanged) { try ModelContext(program).fetch(FetchDescriptor<DocIndexed>()) }
        try remover.write { txn in try txn.insert(DocRemovingTitle(title: "three")) }
        #expect(try ModelContext(remover).fetchCount(FetchDescriptor<DocRemovingTitle>()) == 2)
        // A program opening later that declares the removed index is refused rather than building it again.
        let reopened = try #require(throws: KVStoreError.self) { try open(DocIndexed.self, at: directory.path) }
        #expect(reopened == .schemaChanged)
        #expect(reopened.description.contains("removed"))
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func anIndexTableToRemoveOfAnotherKindIsDamageNotATableThatIsMissing() throws {
        let directory = StoreDirectory()
        do {
            let program = try open(DocIndexed.self, at: directory.path)
            try program.write { txn in try txn.insert(DocIndexed(title: "one")) }
            try program.close()
        }
        // The title index's table becomes a plain table: the catalog still describes a dupSort one.
        let name = Catalog.indexTableName("Doc", "title")
        do {
            let environment = try Environment.open(path: directory.path)
            defer { try? environment.close() }
            try environment.dropTable(try environment.openTable(named: name, options: [.dupSort, .dupFixed]))
            let plain = try environment.openTable(named: name, create: true)
            try environment.write { txn in try txn.put(Array("x".utf8), forKey: Array("one".utf8), in: plain) }
        }
        // Removing the index opens its table to delete it: the table is there, so LMDB's answer is not "not found".
        let error = try #require(throws: KVStoreError.self) { try open(DocRemovingTitle.self, at: directory.path) }
        #expect(error == .damaged)
        #expect(error.description.contains("'\(name)'"))
        #expect(error.description.contains("not the kind of table its catalog describes"))
    }

    @Test func aChangedIndexDefinitionIsRefusedOutsideAMigration() throws {
        let directory = StoreDirectory()
        do {
            let program = try open(DocIndexed.self, at: directory.path)
            try program.write { txn in try txn.insert(DocIndexed(title: "one")) }
            try program.close()
        }
        let error = try #require(throws: KVStoreError.self) { try open(DocUnique.self, at: directory.path) }
        #expect(error == .incompatibleSchema)
        #expect(error.description.contains("stored as an index on (title) but declared as unique on (title)"))
    }

    @Test func anIndexWithItsOwnKeyEncodingIsNeverWrittenWrongByAProgramThatDoesNotDeclareIt() throws {
        let directory = StoreDirectory()
        do {
            let program = try open(DocCustomKey.self, at: directory.path)
            try program.write { txn in try txn.insert(DocCustomKey(title: "one", code: Reversed(text: "abc"))) }
            try program.close()
        }
        let script = try open(DocPlainCode.self, at: directory.path)
        defer { try? script.close() }
        let error = try #require(throws: KVStoreError.self) {
            try script.write { txn in try txn.insert(DocPlainCode(title: "two", code: Reversed(text: "xyz"))) }
        }
        #expect(error == .schemaChanged)
        #expect(error.description.contains("index code"))
        #expect(error.description.contains("key encoding of its own"))
        #expect(try ModelContext(script).fetchCount(FetchDescriptor<DocPlainCode>()) == 1)
    }

    /// An index on a computed property has keys only its program can compute: a script that does not declare it is
    /// refused rather than leaving the index without its models, and the program finds what it wrote.
    @Test func anIndexOnAComputedPropertyIsNeverWrittenWrongByAProgramThatDoesNotDeclareIt() throws {
        let directory = StoreDirectory()
        do {
            let program = try open(DocFolded.self, at: directory.path)
            try program.write { txn in try txn.insert(DocFolded(title: "One")) }
            try program.close()
        }
        do {
            let script = try open(DocUnfolded.self, at: directory.path)
            defer { try? script.close() }
            let error = try #require(throws: KVStoreError.self) {
                try script.write { txn in try txn.insert(DocUnfolded(title: "Two")) }
            }
            #expect(error == .schemaChanged)
            #expect(error.description.contains("index titleFolded"))
        }
        let program = try open(DocFolded.self, at: directory.path)
        defer { try? program.close() }
        let folded = "one"
        let found = try program.read { txn in
            try txn.fetch(FetchDescriptor<DocFolded>(predicate: #Predicate { $0.titleFolded == folded }))
        }
        #expect(found.map(\.title) == ["One"])
    }

    @Test func deletingThroughARelationshipTheProgramDoesNotDeclareAppliesTheStoresRule() throws {
        let directory = StoreDirectory()
        let folder = Folder(name: "inbox")
        let other = Folder(name: "other")
        let files = (0..<5).map { File(name: "file \($0)", folderID: folder.id) }
        let elsewhere = File(name: "elsewhere", folderID: other.id)
        do {
            let program = try ModelContainer(
                for: Folder.self, File.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
            try program.write { txn in
                try txn.insert(folder)
                try txn.insert(other)
                for file in files + [elsewhere] { try txn.insert(file) }
            }
            try program.close()
        }
        // The script knows only folders; the store says their files cascade.
        do {
            let script = try open(FolderOnly.self, at: directory.path)
            try script.write { txn in _ = try txn.delete(FolderOnly.self, id: folder.id) }
            try script.close()
        }
        #expect(try integrityErrors(at: directory.path) == [])
        let program = try ModelContainer(
            for: Folder.self, File.self, configuration: ModelConfiguration(path: directory.path, durability: .off))
        defer { try? program.close() }
        let context = ModelContext(program)
        #expect(try context.fetch(FetchDescriptor<File>()) == [elsewhere])
        // The deleted files' unique names are free again: the script kept the unique index in step.
        try program.write { txn in try txn.insert(File(name: "file 0", folderID: other.id)) }
    }

    @Test func aTableTheCatalogNamesAndTheFileLacksIsDamageNotAnEmptyEntity() throws {
        let directory = StoreDirectory()
        do {
            let program = try open(DocIndexed.self, at: directory.path)
            try program.write { txn in try txn.insert(DocIndexed(title: "one")) }
            try program.close()
        }
        do {
            let environment = try Environment.open(path: directory.path)
            try environment.dropTable(try environment.openTable(named: Catalog.recordTableName("Doc")))
            try environment.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/data.mdb"))
        let error = try #require(throws: KVStoreError.self) { try open(DocIndexed.self, at: directory.path) }
        #expect(error == .damaged)
        #expect(error.description.contains("'records/Doc'"))
        #expect(error.description.contains("kvtool check"))
        // Nothing was written: no empty table took the missing one's place.
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/data.mdb")) == before)
    }

    @Test func anLMDBEnvironmentOfSomethingElseIsRefusedAndLeftAlone() throws {
        let directory = StoreDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        do {
            let environment = try Environment.open(path: directory.path)
            let users = try environment.openTable(named: "users", create: true)
            try environment.write { txn in try txn.put([1], forKey: [1], in: users) }
            try environment.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/data.mdb"))
        let error = try #require(throws: KVStoreError.self) { try open(DocPlain.self, at: directory.path) }
        #expect(error == .storage)
        #expect(error.description.contains("not a KVStore store"))
        #expect(error.description.contains("'users'"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/data.mdb")) == before)
    }

    @Test func reopeningAStoreThatNeedsNothingWritesNothing() throws {
        let directory = StoreDirectory()
        do {
            let program = try open(DocIndexed.self, at: directory.path)
            try program.write { txn in try txn.insert(DocIndexed(title: "one", tags: ["a"])) }
            try program.close()
        }
        func lastTransaction() throws -> Int {
            let environment = try Environment.open(path: directory.path)
            defer { try? environment.close() }
            return try environment.info().lastTransactionID
        }
        let before = try lastTransaction()
        for _ in 0..<3 { try open(DocIndexed.self, at: directory.path).close() }
        try open(DocPlain.self, at: directory.path).close()
        #expect(try lastTransaction() == before)
    }
}

/// A read-only container writes nothing, whatever it is asked.
@Suite struct ReadOnlyContainerTests {
    private static func readOnly(_ path: String) -> ModelConfiguration {
        var configuration = ModelConfiguration(path: path)
        configuration.isReadOnly = true
        return configuration
    }

    private static func fileBytes(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
    }

    @Test func aReadOnlyContainerReadsAndWritesNothing() throws {
        let directory = StoreDirectory()
        let doc = DocIndexedForReadOnly(title: "kept", tags: ["a"])
        do {
            let program = try ModelContainer(
                for: DocIndexedForReadOnly.self, configuration: ModelConfiguration(path: directory.path))
            try program.write { txn in try txn.insert(doc) }
            try program.close()
        }
        let before = try Self.fileBytes(directory.path)
        let container = try ModelContainer(
            for: DocIndexedForReadOnly.self, configuration: Self.readOnly(directory.path))
        let context = ModelContext(container)
        #expect(
            try context.fetch(FetchDescriptor<DocIndexedForReadOnly>(predicate: #Predicate { $0.title == "kept" })) == [
                doc
            ])
        let error = try #require(throws: KVStoreError.self) {
            try container.write { txn in try txn.insert(DocIndexedForReadOnly(title: "new", tags: [])) }
        }
        #expect(error == .readOnly)
        context.insert(DocIndexedForReadOnly(title: "new", tags: []))
        #expect(throws: KVStoreError.readOnly) { try context.save() }
        try container.close()
        #expect(try Self.fileBytes(directory.path) == before)
    }

    @Test func aReadOnlyOpenThatWouldHaveToWriteIsRefused() throws {
        let directory = StoreDirectory()
        #expect(throws: KVStoreError.readOnly) {
            try ModelContainer(for: DocPlainForReadOnly.self, configuration: Self.readOnly(directory.path))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        do {
            let script = try ModelContainer(
                for: DocPlainForReadOnly.self, configuration: ModelConfiguration(path: directory.path))
            try script.write { txn in try txn.insert(DocPlainForReadOnly(title: "x", tags: [])) }
            try script.close()
        }
        let before = try Self.fileBytes(directory.path)
        // The program's indexes are not in the store yet: building them would be a write.
        let error = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: DocIndexedForReadOnly.self, configuration: Self.readOnly(directory.path))
        }
        #expect(error == .readOnly)
        #expect(error.description.contains("no index title of Doc"))
        #expect(try Self.fileBytes(directory.path) == before)
    }
}

private struct DocIndexedForReadOnly: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var tags: [String]
    static let entity = Entity<DocIndexedForReadOnly>(name: "Doc", indexes: [.index(\.title), .index(\.tags)])
}

private struct DocPlainForReadOnly: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    var tags: [String]
    static let entity = Entity<DocPlainForReadOnly>(name: "Doc")
}
