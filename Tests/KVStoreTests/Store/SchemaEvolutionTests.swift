import Foundation
import LMDB
import Testing

@testable import KVStore

/// Versions of one entity, "Note", as a program's model changes over time.
private struct NoteV1: Model, Equatable {
    var id = UUID.timeOrdered()
    var title: String
    static let entity = Entity<NoteV1>(name: "Note")
}

private struct NoteWithOptionalField: Model {
    var id: UUID
    var title: String
    var subtitle: String?
    static let entity = Entity<NoteWithOptionalField>(name: "Note")
}

private struct NoteWithRequiredField: Model {
    var id: UUID
    var title: String
    var pages: Int
    static let entity = Entity<NoteWithRequiredField>(name: "Note")
}

private struct NoteWithChangedType: Model {
    var id: UUID
    var title: Int
    static let entity = Entity<NoteWithChangedType>(name: "Note")
}

private struct NoteWithIndex: Model, Equatable {
    var id: UUID
    var title: String
    static let entity = Entity<NoteWithIndex>(name: "Note", indexes: [.index(\.title)])
}

private struct NoteWithUniqueTitle: Model {
    var id: UUID
    var title: String
    static let entity = Entity<NoteWithUniqueTitle>(name: "Note", indexes: [.unique(\.title)])
}

@Suite struct SchemaEvolutionTests {
    private func open<M: Model>(_ type: M.Type, at path: String) throws -> ModelContainer {
        try ModelContainer(for: type, configuration: ModelConfiguration(path: path, durability: .off))
    }

    private func seed(_ path: String, titles: [String]) throws -> [NoteV1] {
        let container = try open(NoteV1.self, at: path)
        defer { try? container.close() }
        let context = ModelContext(container)
        let notes = titles.map { NoteV1(title: $0) }
        for note in notes { context.insert(note) }
        try context.save()
        return notes
    }

    @Test func aStoreSurvivesReopening() throws {
        let directory = StoreDirectory()
        let notes = try seed(directory.path, titles: ["a", "b"])
        let container = try open(NoteV1.self, at: directory.path)
        defer { try? container.close() }
        #expect(try ModelContext(container).fetch(FetchDescriptor<NoteV1>()) == notes)
    }

    @Test func aNewOptionalFieldNeedsNothing() throws {
        let directory = StoreDirectory()
        let notes = try seed(directory.path, titles: ["a"])
        let container = try open(NoteWithOptionalField.self, at: directory.path)
        defer { try? container.close() }
        let context = ModelContext(container)
        let read = try #require(try context.model(for: notes[0].id, as: NoteWithOptionalField.self))
        #expect(read.title == "a")
        #expect(read.subtitle == nil)
        context.insert(NoteWithOptionalField(id: UUID.timeOrdered(), title: "b", subtitle: "new"))
        try context.save()
        #expect(try context.fetch(FetchDescriptor<NoteWithOptionalField>()).compactMap(\.subtitle) == ["new"])
    }

    @Test func aRemovedFieldIsSkipped() throws {
        let directory = StoreDirectory()
        let id = UUID.timeOrdered()
        do {
            let container = try open(NoteWithOptionalField.self, at: directory.path)
            let context = ModelContext(container)
            context.insert(NoteWithOptionalField(id: id, title: "t", subtitle: "dropped later"))
            try context.save()
            try container.close()
        }
        let container = try open(NoteV1.self, at: directory.path)
        defer { try? container.close() }
        #expect(try ModelContext(container).model(for: id, as: NoteV1.self) == NoteV1(id: id, title: "t"))
    }

    @Test func aNewNonOptionalFieldIsRefusedWithItsName() throws {
        let directory = StoreDirectory()
        _ = try seed(directory.path, titles: ["a"])
        let error = try #require(throws: KVStoreError.self) { try open(NoteWithRequiredField.self, at: directory.path) }
        #expect(error == .incompatibleSchema)
        #expect(error.entity == "Note")
        #expect(error.field == "pages")
        #expect(error.description.contains("Note.pages"))
    }

    @Test func aChangedTypeIsRefusedWithTheFieldsName() throws {
        let directory = StoreDirectory()
        _ = try seed(directory.path, titles: ["a"])
        let error = try #require(throws: KVStoreError.self) { try open(NoteWithChangedType.self, at: directory.path) }
        #expect(error == .incompatibleSchema)
        #expect(error.field == "title")
        #expect(error.description.contains("Note.title"))
        // Nothing was lost: the old model still reads the store.
        let container = try open(NoteV1.self, at: directory.path)
        defer { try? container.close() }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<NoteV1>()) == 1)
    }

    @Test func aNewIndexIsBuiltOnOpen() throws {
        let directory = StoreDirectory()
        let titles = (0..<25_000).map { "note \($0 % 1000)" }  // several build chunks
        _ = try seed(directory.path, titles: titles)
        let container = try open(NoteWithIndex.self, at: directory.path)
        defer { try? container.close() }
        let context = ModelContext(container)
        let descriptor = FetchDescriptor<NoteWithIndex>(predicate: #Predicate { $0.title == "note 7" })
        #expect(try context.explain(descriptor).contains("index title"))
        #expect(try context.fetch(descriptor).count == 25)
        let entry = try container.read { _ throws in
            try container.environment.read { txn throws in
                try Catalog.read(
                    EntityCatalog.self, key: Catalog.entityKey("Note"), in: txn, table: container.catalogTable)
            }
        }
        #expect(entry?.indexes.map(\.name) == ["title"])
        #expect(entry?.indexes.first?.isReady == true)
    }

    @Test func aUniqueIndexOverDuplicatesIsRefused() throws {
        let directory = StoreDirectory()
        _ = try seed(directory.path, titles: ["same", "same"])
        let error = try #require(throws: KVStoreError.self) { try open(NoteWithUniqueTitle.self, at: directory.path) }
        #expect(error == .uniqueViolation)
        #expect(error.description.contains("unique index title"))
    }

    @Test func aStoreOfANewerFormatIsRefused() throws {
        let directory = StoreDirectory()
        _ = try seed(directory.path, titles: ["a"])
        do {
            let environment = try Environment.open(path: directory.path)
            let catalog = try environment.openTable(named: Catalog.tableName)
            try environment.write { txn throws in
                try txn.put(
                    Array(#"{"created":"2030-01-01T00:00:00Z","formatVersion":99}"#.utf8), forKey: Catalog.formatKey,
                    in: catalog)
            }
            try environment.close()
        }
        let error = try #require(throws: KVStoreError.self) { try open(NoteV1.self, at: directory.path) }
        #expect(error == .newerFormat)
        #expect(error.description.contains("format 99"))
        #expect(error.description.contains("Upgrade KVStore"))
    }

    @Test func theFormatIsStamped() throws {
        let directory = StoreDirectory()
        _ = try seed(directory.path, titles: [])
        let environment = try Environment.open(path: directory.path)
        defer { try? environment.close() }
        let catalog = try environment.openTable(named: Catalog.tableName)
        let format = try environment.read { txn throws in
            try Catalog.read(StoreFormat.self, key: Catalog.formatKey, in: txn, table: catalog)
        }
        #expect(format?.formatVersion == Catalog.newStoreFormatVersion)
    }
}
