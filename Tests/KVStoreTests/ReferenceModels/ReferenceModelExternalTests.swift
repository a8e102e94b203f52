import Foundation
import Testing

@testable import KVStore

/// A reference model's external values are kept apart from its record, as a struct's.
@Suite struct ReferenceModelExternalTests {
    @Test func anExternalValueIsSavedReadChangedAndDeletedWithItsObject() throws {
        let directory = StoreDirectory()
        let container = try ModelContainer(for: Scan.self, configuration: ModelConfiguration(path: directory.path))
        defer { try? container.close() }
        let bytes = Data((0..<300_000).map { UInt8($0 % 251) })
        let context = ModelContext(container)
        let scan = Scan(name: "page", image: ExternalData(bytes))
        context.insert(scan)
        try context.save()
        #expect(!context.hasChanges)
        #expect(scan.image.isStored)
        #expect(try context.data(for: \.image, of: scan) == bytes)

        let fresh = ModelContext(container)
        let read = try #require(try fresh.fetch(FetchDescriptor<Scan>()).first)
        #expect(read.image.isStored)
        #expect(try fresh.data(for: \.image, of: read) == bytes)
        // A change of another field keeps the value; a new value replaces it.
        read.name = "renamed"
        try fresh.save()
        #expect(try ModelContext(container).data(for: \.image, of: read) == bytes)
        read.image = ExternalData(Data("small".utf8))
        try fresh.save()
        let third = ModelContext(container)
        let again = try #require(try third.model(for: scan.id, as: Scan.self))
        #expect(try third.data(for: \.image, of: again) == Data("small".utf8))
        #expect(try integrityErrors(at: directory.path) == [])
        third.delete(again)
        try third.save()
        #expect(try integrityErrors(at: directory.path) == [])
    }
}

final class Scan: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String
    var image: ExternalData

    init(name: String, image: ExternalData) {
        self.name = name
        self.image = image
    }

    static let entity = Entity<Scan>(externalStorage: [.attribute(\.image)])
}
