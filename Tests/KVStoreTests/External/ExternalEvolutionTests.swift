import Foundation
import Testing

@testable import KVStore

/// A document with two external attributes.
struct DocumentV1: Model {
    var id = UUID.timeOrdered()
    var title: String
    var body = ExternalData()
    var draft = ExternalData()

    static let entity = Entity<DocumentV1>(
        name: "Document", externalStorage: [.attribute(\.body), .attribute(\.draft)])
}

/// The same document, its `draft` attribute removed without a migration plan.
struct DocumentV2: Model {
    var id: UUID
    var title: String
    var body: ExternalData

    static let entity = Entity<DocumentV2>(name: "Document", externalStorage: [.attribute(\.body)])
}

@Suite struct ExternalEvolutionTests {
    static func chunkCount(_ container: ModelContainer) throws -> Int {
        let table = try container.environment.openTable(named: Catalog.externalTableName("Document"))
        return try container.environment.read { txn in try txn.count(of: table) }
    }

    @Test func aRemovedExternalAttributeKeepsItsValuesUntilItsModelIsSavedOrDeleted() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let first = DocumentV1(title: "first", body: ExternalData(Data([1, 2])), draft: ExternalData(Data([3])))
        let second = DocumentV1(title: "second", body: ExternalData(Data([4])), draft: ExternalData(Data([5, 6])))
        do {
            let container = try ModelContainer(for: DocumentV1.self, configuration: configuration)
            try container.write { txn in
                try txn.insert(first)
                try txn.insert(second)
            }
            try container.close()
        }
        let container = try ModelContainer(for: DocumentV2.self, configuration: configuration)
        // Opening deletes nothing, and the store stays consistent.
        #expect(try Self.chunkCount(container) == 4)
        var check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, "\(check.output)")
        let context = ModelContext(container)
        var documents = try context.fetch(FetchDescriptor<DocumentV2>(sortBy: [SortDescriptor(\.title)]))
        #expect(try documents.map { try container.data(for: \.body, of: $0) } == [Data([1, 2]), Data([4])])
        // Saving a model writes its record without the old descriptor, and deletes the value with it.
        documents[0].title = "first, edited"
        context.insert(documents[0])
        try context.save()
        #expect(try Self.chunkCount(container) == 3)
        // Deleting a model deletes every value it has, the retired one included.
        context.delete(documents[1])
        try context.save()
        #expect(try Self.chunkCount(container) == 1)
        #expect(try container.data(for: \.body, of: documents[0]) == Data([1, 2]))
        try container.close()
        check = MigrationSupport.check(directory.path)
        #expect(check.isConsistent, "\(check.output)")
    }
}
