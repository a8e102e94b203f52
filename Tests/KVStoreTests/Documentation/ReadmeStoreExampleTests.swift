import Foundation
import KVStore
import TestSupport
import Testing

// Example: begin models
struct Author: Model {
    var id = UUID.timeOrdered()
    var name: String
    var email: String

    static let entity = Entity<Author>(indexes: [.unique(\.email)])
}

struct Post: Model {
    var id = UUID.timeOrdered()
    var title: String
    var published: Date? = nil
    var authorID: UUID

    static let entity = Entity<Post>(indexes: [.index(\.authorID), .index(\.published)])
}
// Example: end models

// Example: begin relationship models
struct Team: Model {
    var id = UUID.timeOrdered()
    var name: String

    static let entity = Entity<Team>(relationships: [
        .toMany("members", of: Member.self, inverse: \.teamID, deleteRule: .cascade)
    ])
}

struct Member: Model {
    var id = UUID.timeOrdered()
    var name: String
    var teamID: UUID?

    static let entity = Entity<Member>(relationships: [
        .toOne("team", \.teamID, to: Team.self, inverse: "members")
    ])
}
// Example: end relationship models

// Example: begin field coding
struct Reading: Model {
    var id = UUID.timeOrdered()
    var sensor: String
    var celsius: Double
    var takenAt: Date
    var note: String? = nil

    static let entity = Entity<Reading>(indexes: [.index(\.takenAt)])
}

extension Reading: FieldCodable {
    init(fields: borrowing FieldReader) throws {
        self.init(
            id: try fields.decode(UUID.self, forKey: "id"),
            sensor: try fields.decode(String.self, forKey: "sensor"),
            celsius: try fields.decode(Double.self, forKey: "celsius"),
            takenAt: try fields.decode(Date.self, forKey: "takenAt"),
            note: try fields.decodeIfPresent(String.self, forKey: "note"))
    }

    func write(to fields: FieldWriter) throws {
        try fields.encode(id, forKey: "id")
        try fields.encode(sensor, forKey: "sensor")
        try fields.encode(celsius, forKey: "celsius")
        try fields.encode(takenAt, forKey: "takenAt")
        try fields.encodeIfPresent(note, forKey: "note")
    }
}
// Example: end field coding

/// The object-store example of README.md, as it is written there.
@Suite struct ReadmeStoreExampleTests {
    @Test func storeExample() throws {
        let directory = StoreDirectory()
        let path = directory.path

        // Example: begin store example
        let container = try ModelContainer(
            for: Author.self, Post.self,
            configuration: ModelConfiguration(path: path))
        let context = ModelContext(container)

        let ada = Author(name: "Ada", email: "ada@example.com")
        context.insert(ada)
        context.insert(Post(title: "Notes on the Engine", published: .now, authorID: ada.id))
        context.insert(Post(title: "Draft", published: nil, authorID: ada.id))
        try context.save()

        let authorID = ada.id
        var descriptor = FetchDescriptor<Post>(
            predicate: #Predicate { $0.authorID == authorID && $0.published != nil },
            sortBy: [SortDescriptor(\.title)])
        descriptor.fetchLimit = 10
        let published = try context.fetch(descriptor)
        // published.map(\.title) == ["Notes on the Engine"]
        // try context.explain(descriptor) == "index authorID: 1 key"

        do {
            context.insert(Author(name: "Impostor", email: "ada@example.com"))
            try context.save()
        } catch KVStoreError.uniqueViolation {
            // "Author ...: email 'ada@example.com' is already used by Author ...; nothing of this save was written"
            context.rollback()
        }
        // Example: end store example

        #expect(published.map(\.title) == ["Notes on the Engine"])
        #expect(try context.explain(descriptor) == "index authorID: 1 key")
        #expect(try context.fetchCount(FetchDescriptor<Author>()) == 1)
        try container.close()
    }

    @Test func relationshipExample() throws {
        // Example: begin relationship example
        let container = try ModelContainer(
            for: Team.self, Member.self,
            configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)

        let team = Team(name: "Platform")
        context.insert(team)
        try context.save()
        try context.insert(
            contentsOf: (1...1000).lazy.map { Member(name: "member \($0)", teamID: team.id) },
            chunkSize: 250)

        let members = try context.children(of: [team.id], through: \Member.teamID)
        // members[team.id]?.count == 1000

        context.delete(team)
        try context.save()  // cascades to its 1,000 members, in the same transaction
        // try context.fetchCount(FetchDescriptor<Member>()) == 0
        // Example: end relationship example

        #expect(members[team.id]?.count == 1000)
        #expect(try context.fetchCount(FetchDescriptor<Member>()) == 0)
        try container.close()
    }

    @Test func backgroundImportExample() async throws {
        // Example: begin background example
        let container = try ModelContainer(
            for: Author.self, Post.self,
            configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let importer = ModelActor(modelContainer: container)
        let drafts = FetchDescriptor<Post>(predicate: #Predicate { $0.published == nil })

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Yields the drafts at once, then again after each commit that changes them.
                for try await current in container.observe(drafts) {
                    print("\(current.count) drafts")
                    if current.count == 10_000 { return }
                }
            }
            group.addTask {
                let author = Author(name: "Ada", email: "ada@example.com")
                _ = try await importer.perform { context in
                    context.insert(author)
                    try context.save()
                    return try context.insert(
                        contentsOf: (1...10_000).lazy.map { Post(title: "draft \($0)", authorID: author.id) },
                        chunkSize: 2_500
                    ) { saved in print("imported \(saved)") }
                }
            }
            try await group.waitForAll()
        }
        // Example: end background example

        #expect(try await container.read { txn in try txn.fetchCount(drafts) } == 10_000)
        try container.close()
    }

    @Test func fieldCodingExample() throws {
        let container = try ModelContainer(
            for: Reading.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        let start = Date(timeIntervalSinceReferenceDate: 0)
        let readings = (0..<100).map {
            Reading(sensor: "t\($0 % 3)", celsius: Double($0) / 4, takenAt: start + Double($0))
        }
        try container.write { txn in
            for reading in readings { try txn.insert(reading) }
        }
        let cutoff = start + 90
        let late = try container.read { txn in
            try txn.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.takenAt >= cutoff }))
        }
        #expect(late.map(\.id) == readings.suffix(10).map(\.id))
        #expect(late.last?.celsius == 99.0 / 4)
    }

    @Test func readmeShowsTheExamplesAsTested() throws {
        #expect(
            try documentationDifferences(
                [
                    ("models", 0), ("store example", 8), ("relationship models", 0), ("relationship example", 8),
                    ("background example", 8), ("field coding", 0),
                ], testedIn: #filePath) == [])
    }
}
