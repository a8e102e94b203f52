import Foundation
import KVStore
import TestSupport
import Testing

// The examples of the article "Porting from SwiftData", each pattern's models in a namespace of its own so that they
// do not clash with the other tests' models.

/// The models of the article's overview, which its first sections change and save.
enum PortingExample {
    // Example: begin porting models
    // SwiftData:
    // @Model final class Project {
    //     @Attribute(.unique) var name: String
    //     @Relationship(deleteRule: .cascade, inverse: \Item.project) var items: [Item] = []
    // }
    // @Model final class Item {
    //     var title: String
    //     @Attribute(.externalStorage) var photo: Data?
    //     var project: Project?
    // }

    struct Project: Model {
        var id = UUID.timeOrdered()
        var name: String

        static let entity = Entity<Project>(
            indexes: [.unique(\.name)],
            relationships: [.toMany("items", of: Item.self, inverse: \.projectID, deleteRule: .cascade)])
    }

    struct Item: Model {
        var id = UUID.timeOrdered()
        var title: String
        var photo: ExternalData?
        var projectID: UUID?

        static let entity = Entity<Item>(
            relationships: [.toOne("project", \.projectID, to: Project.self, inverse: "items")],
            externalStorage: [.attribute(\.photo)])
    }
    // Example: end porting models
}

/// The pattern "a repository with a context per unit of work", and its in-memory tests.
enum PortingRepositoryExample {
    // Example: begin porting repository models
    struct Project: Model {
        var id = UUID.timeOrdered()
        var name: String

        static let entity = Entity<Project>(relationships: [
            .toMany("todos", of: Todo.self, inverse: \.projectID, deleteRule: .cascade)
        ])
    }

    struct Todo: Model {
        var id = UUID.timeOrdered()
        var title: String
        var isDone = false
        var createdAt = Date.now
        var projectID: UUID?

        static let entity = Entity<Todo>(
            indexes: [.index(\.createdAt)],
            relationships: [.toOne("project", \.projectID, to: Project.self, inverse: "todos")])
    }
    // Example: end porting repository models

    // Example: begin porting repository
    enum RepositoryError: Error {
        case notFound
    }

    struct TodoRepository {
        let container: ModelContainer

        func addTodo(_ title: String, to projectID: UUID) throws -> UUID {
            let context = ModelContext(container)
            guard try context.model(for: projectID, as: Project.self) != nil else { throw RepositoryError.notFound }
            let todo = Todo(title: title, projectID: projectID)
            context.insert(todo)
            try context.save()
            return todo.id
        }

        func complete(_ todoID: UUID) throws {
            let context = ModelContext(container)
            try context.modify(Todo.self, id: todoID) { $0.isDone = true }
            try context.save()
        }

        func openTodos(in projectID: UUID) throws -> [String] {
            let context = ModelContext(container)
            let descriptor = FetchDescriptor<Todo>(
                predicate: #Predicate { $0.projectID == projectID && !$0.isDone },
                sortBy: [SortDescriptor(\.createdAt)])
            return try context.fetch(descriptor).map(\.title)
        }
    }
    // Example: end porting repository

    // Example: begin porting in-memory tests
    @Suite struct TodoTests {
        @Test func completingATodoTakesItOffTheOpenList() throws {
            let container = try ModelContainer(
                for: Todo.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
            let context = ModelContext(container)
            var todo = Todo(title: "Water the tulips")
            context.insert(todo)
            try context.save()

            try context.modify(&todo) { $0.isDone = true }
            try context.save()

            let open = try context.fetch(FetchDescriptor<Todo>(predicate: #Predicate { !$0.isDone }))
            #expect(open.isEmpty)
        }
    }
    // Example: end porting in-memory tests
}

/// The repository pattern with reference models: SwiftData's code with its declarations changed.
enum PortingReferenceRepositoryExample {
    // Example: begin porting reference repository models
    final class Project: PersistentModel {
        var id = UUID.timeOrdered()
        var name: String
        @ToMany var todos: [Todo] = []

        init(name: String) {
            self.name = name
        }

        static let entity = Entity<Project>(relationships: [
            .toMany("todos", \.todos, inverse: "project", deleteRule: .cascade)
        ])
    }

    final class Todo: PersistentModel {
        var id = UUID.timeOrdered()
        var title: String
        var isDone = false
        var createdAt = Date.now
        @ToOne var project: Project?

        init(title: String, project: Project? = nil) {
            self.title = title
            self.project = project
        }

        static let entity = Entity<Todo>(
            indexes: [.index(\.createdAt)], relationships: [.toOne("project", \.project, inverse: "todos")])
    }
    // Example: end porting reference repository models

    // Example: begin porting reference repository
    enum RepositoryError: Error {
        case notFound
    }

    struct TodoRepository {
        let container: ModelContainer

        func addTodo(_ title: String, to projectID: UUID) throws -> UUID {
            let context = ModelContext(container)
            guard let project = try context.model(for: projectID, as: Project.self) else {
                throw RepositoryError.notFound
            }
            let todo = Todo(title: title, project: project)
            context.insert(todo)
            try context.save()
            return todo.id
        }

        func complete(_ todoID: UUID) throws {
            let context = ModelContext(container)
            guard let todo = try context.model(for: todoID, as: Todo.self) else { throw RepositoryError.notFound }
            todo.isDone = true
            try context.save()
        }

        func openTodos(in projectID: UUID) throws -> [String] {
            let context = ModelContext(container)
            let descriptor = FetchDescriptor<Todo>(
                predicate: #Predicate { $0.project?.id == projectID && !$0.isDone },
                sortBy: [SortDescriptor(\.createdAt)])
            return try context.fetch(descriptor).map(\.title)
        }
    }
    // Example: end porting reference repository
}

/// The pattern "a background importer that saves every 100 models".
enum PortingImporterExample {
    // Example: begin porting importer models
    struct Contact: Model {
        var id = UUID.timeOrdered()
        var name: String
        var email: String

        static let entity = Entity<Contact>(indexes: [.index(\.email)])
    }

    struct ContactRow: Sendable {
        var name: String
        var email: String
    }
    // Example: end porting importer models
}

// An extension lives at file scope, where the example's code names the models without their namespace.
typealias Contact = PortingImporterExample.Contact
typealias ContactRow = PortingImporterExample.ContactRow

// Example: begin porting importer
extension ModelActor {
    func importContacts(_ rows: [ContactRow]) throws {
        for (index, row) in rows.enumerated() {
            modelContext.insert(Contact(name: row.name, email: row.email))
            if (index + 1) % 100 == 0 {
                try modelContext.save()
            }
        }
        try modelContext.save()
    }
}
// Example: end porting importer

/// The pattern "external storage".
enum PortingExternalExample {
    // Example: begin porting external models
    struct Photo: Model {
        var id = UUID.timeOrdered()
        var title: String
        var image: ExternalData
        var thumbnail: ExternalData?

        static let entity = Entity<Photo>(externalStorage: [.attribute(\.image), .attribute(\.thumbnail)])
    }
    // Example: end porting external models
}

/// The pattern "batch fetch".
enum PortingBatchFetchExample {
    // Example: begin porting batch fetch models
    struct Order: Model {
        var id = UUID.timeOrdered()
        var customer: String
        var amount: Double
        var placedAt: Date

        static let entity = Entity<Order>(indexes: [.index(\.placedAt)])
    }
    // Example: end porting batch fetch models
}

/// The pattern "chunked insert".
enum PortingUpsertExample {
    // Example: begin porting upsert models
    struct Contact: Model {
        var id = UUID.timeOrdered()
        var email: String
        var name: String

        static let entity = Entity<Contact>(indexes: [.unique(\.email, onConflict: .update)])
    }
    // Example: end porting upsert models
}

enum PortingChunkedInsertExample {
    // Example: begin porting chunked insert models
    struct Reading: Model {
        var id = UUID.timeOrdered()
        var sensor: String
        var celsius: Double
        var takenAt: Date

        static let entity = Entity<Reading>(indexes: [.index(\.sensor)])
    }
    // Example: end porting chunked insert models
}

/// The pattern "notes with links and backlinks".
enum PortingNotesExample {
    // Example: begin porting notes models
    struct Note: Model {
        var id = UUID.timeOrdered()
        var title: String
        var body = ""
        var links: [UUID] = []

        static let entity = Entity<Note>(relationships: [
            .toMany("links", \.links, to: Note.self, inverse: "backlinks"),
            .toMany("backlinks", of: Note.self, inverse: \.links),
        ])
    }
    // Example: end porting notes models
}

/// The examples of the article "Porting from SwiftData", run as written there, each followed by what it must do.
@Suite struct PortingGuideExampleTests {
    typealias Project = PortingExample.Project
    typealias Item = PortingExample.Item

    @Test func changeThenSave() throws {
        let container = try ModelContainer(
            for: Project.self, Item.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let garden = Project(name: "Garden")
        context.insert(garden)
        context.insert(Item(title: "Tulips", projectID: garden.id))
        try context.save()

        // Example: begin porting change
        var item = try context.fetch(FetchDescriptor<Item>(predicate: #Predicate { $0.title == "Tulips" }))[0]
        try context.modify(&item) { $0.title = "Red tulips" }
        try context.save()
        // Example: end porting change

        #expect(item.title == "Red tulips")
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).model(for: item.id, as: Item.self)?.title == "Red tulips")

        // Changing a copy alone changes nothing in the context or the store.
        var copy = item
        copy.title = "Changed copy"
        #expect(!context.hasChanges)
        #expect(try context.model(for: item.id, as: Item.self)?.title == "Red tulips")

        let itemID = item.id
        // Example: begin porting change by id
        try context.modify(Item.self, id: itemID) { $0.title = "Yellow tulips" }
        try context.save()
        // Example: end porting change by id

        #expect(try ModelContext(container).model(for: itemID, as: Item.self)?.title == "Yellow tulips")
        #expect(throws: KVStoreError.modelNotFound) {
            try context.modify(Item.self, id: UUID.timeOrdered()) { $0.title = "None" }
        }

        // Example: begin porting write
        try container.write { txn in
            guard var item = try txn.model(for: itemID, as: Item.self) else { return }
            item.title = "Tulips, planted"
            try txn.insert(item)
        }
        // Example: end porting write

        #expect(try context.model(for: itemID, as: Item.self)?.title == "Tulips, planted")

        // A unique name is refused, not merged; a cascade deletes the project's items.
        context.insert(Project(name: "Garden"))
        #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
        context.rollback()
        context.delete(garden)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Item>()) == 0)
        try container.close()
    }

    @Test func anUnsavedContextsChangesGoWithIt() throws {
        let container = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        do {
            let context = ModelContext(container)
            context.insert(Project(name: "Never saved"))
            #expect(context.hasChanges)
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Project>()) == 0)
        try container.close()
    }

    @Test func repository() throws {
        typealias Project = PortingRepositoryExample.Project
        typealias TodoRepository = PortingRepositoryExample.TodoRepository
        let container = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let garden = Project(name: "Garden")
        let setup = ModelContext(container)
        setup.insert(garden)
        try setup.save()

        let repository = TodoRepository(container: container)
        let water = try repository.addTodo("Water the tulips", to: garden.id)
        _ = try repository.addTodo("Plant the bulbs", to: garden.id)
        try repository.complete(water)

        #expect(try repository.openTodos(in: garden.id) == ["Plant the bulbs"])
        let projectID = garden.id
        let open = FetchDescriptor<PortingRepositoryExample.Todo>(
            predicate: #Predicate { $0.projectID == projectID && !$0.isDone })
        #expect(try ModelContext(container).explain(open) == "index projectID: 1 key")
        #expect(throws: PortingRepositoryExample.RepositoryError.notFound) {
            try repository.addTodo("Nowhere", to: UUID.timeOrdered())
        }
        #expect(throws: KVStoreError.modelNotFound) { try repository.complete(UUID.timeOrdered()) }
        try container.close()
    }

    @Test func backgroundImporter() async throws {
        let container = try ModelContainer(
            for: Contact.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let commits = container.changes(for: [Contact.self])
        let rows = (1...250).map { ContactRow(name: "Contact \($0)", email: "contact\($0)@example.com") }

        // Example: begin porting importer use
        let importer = ModelActor(modelContainer: container)
        try await importer.importContacts(rows)
        // Example: end porting importer use

        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Contact>()) == 250)
        #expect(try await importer.perform { !$0.hasChanges })
        // One commit per 100 contacts, and one for the rest.
        var sizes: [Int] = []
        for await change in commits {
            sizes.append(change.inserted["Contact"]?.count ?? 0)
            if sizes.reduce(0, +) == 250 { break }
        }
        #expect(sizes == [100, 100, 50])
        try container.close()
    }

    @Test func externalStorage() throws {
        typealias Photo = PortingExternalExample.Photo
        let container = try ModelContainer(
            for: Photo.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let jpeg = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let exportURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("porting-\(UUID().uuidString).jpeg")
        defer { try? FileManager.default.removeItem(at: exportURL) }

        // Example: begin porting external
        let photo = Photo(title: "Dunes", image: ExternalData(jpeg))
        context.insert(photo)
        try context.save()

        var dunes = try context.fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.title == "Dunes" }))[0]
        let bytes = try context.data(for: \.image, of: dunes)
        try bytes.write(to: exportURL)

        try context.modify(&dunes) { $0.thumbnail = ExternalData(bytes.prefix(1_000)) }
        try context.save()
        // Example: end porting external

        #expect(try Data(contentsOf: exportURL) == jpeg)
        #expect(dunes.image.byteCount == jpeg.count)
        let stored = try #require(try ModelContext(container).model(for: photo.id, as: Photo.self))
        #expect(try context.data(for: \.thumbnail, of: stored) == jpeg.prefix(1_000))
        #expect(try context.data(for: \.image, of: stored) == jpeg)
        try container.close()
    }

    @Test func batchFetch() throws {
        typealias Order = PortingBatchFetchExample.Order
        let container = try ModelContainer(
            for: Order.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        try context.insert(
            contentsOf: (0..<2_000).lazy.map {
                Order(customer: "customer \($0 % 7)", amount: Double($0 % 10), placedAt: start + Double($0) * 60)
            })
        let all = try context.fetch(FetchDescriptor<Order>())
        let ids = [all[5].id, all[1_500].id, all[42].id]

        // Example: begin porting batch fetch
        let wanted = FetchDescriptor<Order>(predicate: #Predicate { ids.contains($0.id) })
        let picked = try context.fetch(wanted)

        var page = FetchDescriptor<Order>(sortBy: [SortDescriptor(\.placedAt, order: .reverse)])
        page.fetchLimit = 50
        page.fetchOffset = 100
        let third = try context.fetch(page)

        var total = 0.0
        try context.enumerate(FetchDescriptor<Order>(), batchSize: 500) { orders in
            for order in orders { total += order.amount }
        }
        // Example: end porting batch fetch

        #expect(Set(picked.map(\.id)) == Set(ids))
        #expect(try context.explain(wanted) == "key id: 3 keys")
        #expect(try context.models(for: ids, as: Order.self).map { $0?.id } == ids)
        #expect(third.map(\.id) == all.reversed()[100..<150].map(\.id))
        #expect(try context.explain(page) == "index placedAt: ordered reverse")
        #expect(total == all.reduce(0) { $0 + $1.amount })
        #expect(total == 9_000)
        try container.close()
    }

    @Test func uniqueUpsert() throws {
        typealias Contact = PortingUpsertExample.Contact
        let container = try ModelContainer(
            for: Contact.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let first = Contact(email: "ada@example.com", name: "Ada")
        context.insert(first)
        try context.save()
        let rows = [(email: "ada@example.com", name: "Ada Lovelace"), (email: "grace@example.com", name: "Grace")]

        // Example: begin porting upsert
        for row in rows {
            context.insert(Contact(email: row.email, name: row.name))
        }
        let result = try context.save()
        let contacts = try context.fetch(FetchDescriptor<Contact>(sortBy: [SortDescriptor(\.email)]))
        // Ada's contact kept its ID and took the new name: result.storedID(of:) maps the inserted ID to it.
        // Example: end porting upsert

        #expect(contacts.map(\.name) == ["Ada Lovelace", "Grace"])
        #expect(contacts[0].id == first.id)
        #expect(result.mergedIDs.count == 1)
        #expect(result.mergedIDs.values.first == first.id)
    }

    @Test func chunkedInsert() throws {
        typealias Reading = PortingChunkedInsertExample.Reading
        let container = try ModelContainer(
            for: Reading.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let rows = (0..<20_000).lazy.map {
            (sensor: "s\($0 % 4)", celsius: Double($0 % 30), takenAt: start + Double($0))
        }

        // Example: begin porting chunked insert
        let context = ModelContext(container)
        let saved = try context.insert(
            contentsOf: rows.map { Reading(sensor: $0.sensor, celsius: $0.celsius, takenAt: $0.takenAt) },
            chunkSize: 5_000
        ) { saved in print("\(saved) readings saved") }
        // Example: end porting chunked insert

        #expect(saved == 20_000)
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Reading>()) == 20_000)
        let sensor = "s1"
        #expect(
            try context.fetchCount(FetchDescriptor<Reading>(predicate: #Predicate { $0.sensor == sensor })) == 5_000)
        try container.close()
    }

    @Test func notesWithLinksAndBacklinks() throws {
        typealias Note = PortingNotesExample.Note
        let container = try ModelContainer(
            for: Note.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)

        // Example: begin porting notes
        let swift = Note(title: "Swift")
        let lmdb = Note(title: "LMDB")
        var kvstore = Note(title: "KVStore")
        context.insert(swift)
        context.insert(lmdb)
        context.insert(kvstore)
        try context.modify(&kvstore) { $0.links = [swift.id, lmdb.id] }
        try context.save()

        let links = try context.models(for: kvstore.links, as: Note.self).compactMap { $0?.title }
        let backlinks = try context.children(of: [lmdb.id], through: \Note.links)[lmdb.id, default: []]

        context.delete(lmdb)
        try context.save()
        // Example: end porting notes

        #expect(links == ["Swift", "LMDB"])
        #expect(backlinks.map(\.title) == ["KVStore"])
        #expect(try context.model(for: kvstore.id, as: Note.self)?.links == [swift.id])
        #expect(try context.children(of: [swift.id], through: \Note.links)[swift.id]?.map(\.title) == ["KVStore"])
        try container.close()
    }

    /// The guide's answer to `@Transient`: a property left out of `CodingKeys`, with a default value, is not stored.
    @Test func aPropertyLeftOutOfCodingKeysIsNotStored() throws {
        let container = try ModelContainer(
            for: Cached.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Cached(title: "Stored", cache: "not stored"))
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Cached>())
        #expect(fetched.map(\.title) == ["Stored"])
        #expect(fetched.map(\.cache) == [""])
        try container.close()
    }

    struct Cached: Model {
        var id = UUID.timeOrdered()
        var title: String
        var cache = ""

        enum CodingKeys: String, CodingKey {
            case id, title
        }
    }

    @Test func theReferenceModelRepositoryWorksAsSwiftDatasDoes() throws {
        typealias Example = PortingReferenceRepositoryExample
        let container = try ModelContainer(
            for: Example.Project.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        let project = Example.Project(name: "Garden")
        let setup = ModelContext(container)
        setup.insert(project)
        try setup.save()
        let repository = Example.TodoRepository(container: container)
        let water = try repository.addTodo("Water the tulips", to: project.id)
        _ = try repository.addTodo("Plant the bulbs", to: project.id)
        #expect(try repository.openTodos(in: project.id) == ["Water the tulips", "Plant the bulbs"])
        try repository.complete(water)
        #expect(try repository.openTodos(in: project.id) == ["Plant the bulbs"])
        #expect(throws: Example.RepositoryError.self) { try repository.complete(UUID()) }
        #expect(throws: Example.RepositoryError.self) { try repository.addTodo("Lost", to: UUID()) }
        let context = ModelContext(container)
        let garden = try #require(try context.model(for: project.id, as: Example.Project.self))
        #expect(garden.todos.map(\.title) == ["Water the tulips", "Plant the bulbs"])
        context.delete(garden)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Example.Todo>()) == 0)
    }

    @Test func theGuideShowsTheExamplesAsTested() throws {
        #expect(
            try documentationDifferences(
                [
                    ("porting models", 4), ("porting change", 8), ("porting change by id", 8), ("porting write", 8),
                    ("porting repository models", 4), ("porting repository", 4), ("porting in-memory tests", 4),
                    ("porting importer models", 4), ("porting importer", 0), ("porting importer use", 8),
                    ("porting external models", 4), ("porting external", 8), ("porting batch fetch models", 4),
                    ("porting batch fetch", 8), ("porting chunked insert models", 4), ("porting chunked insert", 8),
                    ("porting notes models", 4), ("porting notes", 8),
                    ("porting reference repository models", 4), ("porting reference repository", 4),
                ], testedIn: #filePath) == [])
    }
}
