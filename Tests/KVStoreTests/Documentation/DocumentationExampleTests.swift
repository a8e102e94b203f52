import Foundation
import KVStore
import TestSupport
import Testing

/// The example of the article "Models and entities", in a namespace of its own: its `Task` would hide the standard
/// library's everywhere else in the tests.
enum EntityDeclarationsExample {
    // Example: begin entity declarations
    struct Task: Model {
        var id = UUID.timeOrdered()
        var title: String
        var tags: [String] = []
        var dueDate: Date?
        var projectID: UUID?

        static let entity = Entity<Task>(indexes: [
            .index(\.dueDate),  // equality and ranges; sorted reads with a limit
            .index(\.tags),  // multi-entry: one entry per element, for `$0.tags.contains(tag)`
            .unique(\.projectID, \.title),  // compound: a title once per project
        ])
    }
    // Example: end entity declarations
}

/// The model of the article "Fetching and the planner"'s prefix and case example, in a namespace of its own.
enum PrefixAndCaseExample {
    // Example: begin prefix and case models
    struct Person: Model {
        var id = UUID()
        var name: String
        /// The name in lower case, not stored: an index on it finds names whatever their case.
        var nameFolded: String { name.lowercased() }

        static let entity = Entity<Person>(indexes: [
            .index(\.name),
            .index(\.nameFolded, name: "nameFolded"),  // an index on a computed property needs a name
        ])
    }
    // Example: end prefix and case models
}

/// The examples of the DocC articles that the README does not show, run as written there.
@Suite struct DocumentationExampleTests {
    @Test func fetchingExample() throws {
        // Example: begin fetching example
        let container = try ModelContainer(
            for: Author.self, Post.self,
            configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let ada = Author(name: "Ada", email: "ada@example.com")
        context.insert(ada)
        for day in 1...30 {
            let published = Date(timeIntervalSince1970: 1_700_000_000 + Double(day) * 86_400)
            context.insert(Post(title: "Day \(day)", published: published, authorID: ada.id))
        }
        try context.save()

        let since = Date(timeIntervalSince1970: 1_700_000_000 + 25 * 86_400)
        let recent = FetchDescriptor<Post>(
            predicate: #Predicate { $0.published != nil && $0.published! > since },
            sortBy: [SortDescriptor(\.title)])
        // try context.fetch(recent).map(\.title) == ["Day 26", "Day 27", "Day 28", "Day 29", "Day 30"]
        // try context.explain(recent) == "index published: range (00, +inf)"

        var latest = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.published, order: .reverse)])
        latest.fetchLimit = 3
        // try context.fetch(latest).map(\.title) == ["Day 30", "Day 29", "Day 28"]
        // try context.explain(latest) == "index published: ordered reverse"

        let authorID = ada.id
        let byAda = FetchDescriptor<Post>(predicate: #Predicate { $0.authorID == authorID })
        // try context.fetchCount(byAda) == 30
        // try context.explain(byAda) == "index authorID: 1 key"
        // Example: end fetching example

        #expect(try context.fetch(recent).map(\.title) == ["Day 26", "Day 27", "Day 28", "Day 29", "Day 30"])
        #expect(try context.explain(recent) == "index published: range (00, +inf)")
        #expect(try context.fetch(latest).map(\.title) == ["Day 30", "Day 29", "Day 28"])
        #expect(try context.explain(latest) == "index published: ordered reverse")
        #expect(try context.fetchCount(byAda) == 30)
        #expect(try context.explain(byAda) == "index authorID: 1 key")
        try container.close()
    }

    @Test func entityDeclarations() throws {
        typealias Task = EntityDeclarationsExample.Task
        let container = try ModelContainer(
            for: Task.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let project = UUID.timeOrdered()
        context.insert(Task(title: "Plant", tags: ["garden"], projectID: project))
        context.insert(Task(title: "Water", tags: ["garden", "daily"], projectID: project))
        try context.save()
        let tag = "daily"
        let daily = FetchDescriptor<Task>(predicate: #Predicate { $0.tags.contains(tag) })
        #expect(try context.fetch(daily).map(\.title) == ["Water"])
        #expect(try context.explain(daily) == "index tags: 1 key")
        context.insert(Task(title: "Plant", projectID: project))
        #expect(throws: KVStoreError.self) { try context.save() }
        try container.close()
    }

    @Test func prefixAndCaseExample() throws {
        typealias Person = PrefixAndCaseExample.Person
        // Example: begin prefix and case example
        let container = try ModelContainer(
            for: Person.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        try context.insert(contentsOf: ["Ada", "Adam", "ADA", "Bob"].map { Person(name: $0) })

        let startingWithAd = FetchDescriptor<Person>(predicate: #Predicate { $0.name.starts(with: "Ad") })
        // try context.fetch(startingWithAd).map(\.name).sorted() == ["Ada", "Adam"]
        // try context.explain(startingWithAd) == "index name: range [014164, 014165)"

        let query = "ada".lowercased()
        let anyCase = FetchDescriptor<Person>(predicate: #Predicate { $0.nameFolded == query })
        // try context.fetch(anyCase).map(\.name).sorted() == ["ADA", "Ada"]
        // try context.explain(anyCase) == "index nameFolded: 1 key"
        // Example: end prefix and case example

        #expect(try context.fetch(startingWithAd).map(\.name).sorted() == ["Ada", "Adam"])
        #expect(try context.explain(startingWithAd) == "index name: range [014164, 014165)")
        #expect(try context.fetch(anyCase).map(\.name).sorted() == ["ADA", "Ada"])
        #expect(try context.explain(anyCase) == "index nameFolded: 1 key")
        try container.close()
    }

    @Test func queryShapesExample() throws {
        // Example: begin query shapes example
        let container = try ModelContainer(
            for: Author.self, Post.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let ada = Author(name: "Ada", email: "ada@example.com")
        let alan = Author(name: "Alan", email: "alan@example.com")
        try context.insert(contentsOf: [ada, alan])
        for day in 1...30 {
            let published = day % 10 == 0 ? nil : Date(timeIntervalSince1970: 1_700_000_000 + Double(day) * 86_400)
            context.insert(Post(title: "Day \(day)", published: published, authorID: day <= 20 ? ada.id : alan.id))
        }
        try context.save()

        // Aggregates, from the index when it holds the attribute.
        let adaID = ada.id
        let byAda = #Predicate<Post> { $0.authorID == adaID }
        // try context.aggregate(.count, matching: byAda) == 20
        // try context.aggregate(.maximum(\Post.published)) == Date(timeIntervalSince1970: 1_700_000_000 + 29 * 86_400)
        // try context.explain(.maximum(\Post.published)) == "maximum(published): index published keys"
        // try context.aggregate(.count, groupedBy: \Post.authorID) == [adaID: 20, alan.id: 10]
        // try context.aggregate(.distinct(\Post.authorID), matching: byAda) == [adaID]

        // Pages that resume after the last model, across writes.
        let newestFirst = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.title, order: .reverse)])
        let first = try context.fetchPage(newestFirst, limit: 2)
        // first.models.map(\.title) == ["Day 9", "Day 8"]
        let second = try context.fetchPage(newestFirst, after: first.continuation, limit: 2)
        // second.models.map(\.title) == ["Day 7", "Day 6"]

        // Posts of authors whose name starts with "Al", through the index on authorID.
        let byAl = RelatedFetchDescriptor(
            FetchDescriptor<Post>(sortBy: [SortDescriptor(\.title)]), through: \.authorID,
            parent: FetchDescriptor<Author>(predicate: #Predicate { $0.name.starts(with: "Al") }))
        // try context.fetch(byAl).count == 10
        // try context.explain(byAl) == "parents: scan; then children: index authorID, 1 key per parent"
        // Example: end query shapes example

        #expect(try context.aggregate(.count, matching: byAda) == 20)
        #expect(
            try context.aggregate(.maximum(\Post.published)) == Date(timeIntervalSince1970: 1_700_000_000 + 29 * 86_400)
        )
        #expect(try context.explain(.maximum(\Post.published)) == "maximum(published): index published keys")
        #expect(try context.aggregate(.count, groupedBy: \Post.authorID) == [adaID: 20, alan.id: 10])
        #expect(try context.aggregate(.distinct(\Post.authorID), matching: byAda) == [adaID])
        #expect(first.models.map(\.title) == ["Day 9", "Day 8"])
        #expect(second.models.map(\.title) == ["Day 7", "Day 6"])
        #expect(try context.fetch(byAl).count == 10)
        #expect(try context.explain(byAl) == "parents: scan; then children: index authorID, 1 key per parent")
        // The README's aggregate: each author's latest post.
        let latest = try context.aggregate(.maximum(\Post.published), groupedBy: \Post.authorID)
        #expect(latest[adaID] == Date(timeIntervalSince1970: 1_700_000_000 + 19 * 86_400))
        #expect(latest[alan.id] == Date(timeIntervalSince1970: 1_700_000_000 + 29 * 86_400))
        try container.close()
    }

    @Test func theDocumentationShowsTheExamplesAsTested() throws {
        #expect(
            try documentationDifferences(
                [
                    ("entity declarations", 4), ("fetching example", 8), ("prefix and case models", 4),
                    ("prefix and case example", 8), ("query shapes example", 8),
                ], testedIn: #filePath) == [])
    }

    /// Every example a document marks is the code of a test: some test file has its `// Example: begin` line.
    @Test func everyMarkedExampleIsTested() throws {
        let root = packageRoot(of: #filePath)
        var tested = Set<String>()
        let tests = root.appendingPathComponent("Tests")
        let files = FileManager.default.enumerator(atPath: tests.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let trimmed = line.drop { $0 == " " }
                if trimmed.hasPrefix("// Example: begin ") {
                    tested.insert(String(trimmed.dropFirst("// Example: begin ".count)))
                }
            }
        }
        var marked: [String] = []
        for document in try documentationFiles(under: root) {
            let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            marked += exampleNames(in: text).map { "\(document): \($0)" }
            for name in exampleNames(in: text) {
                #expect(tested.contains(name), "\(document) shows the example '\(name)', which no test runs")
            }
        }
        #expect(marked.count >= 15)
    }
}
