import Foundation
import KVStore
import Testing

// README: begin models
struct Author: Model {
    var id = UUID.timeOrdered()
    var name: String
    var email: String

    static let entity = Entity<Author>(indexes: [.unique(\.email)])
}

struct Post: Model {
    var id = UUID.timeOrdered()
    var title: String
    var published: Date?
    var authorID: UUID

    static let entity = Entity<Post>(indexes: [.index(\.authorID), .index(\.published)])
}
// README: end models

/// The object-store example of README.md, as it is written there.
@Suite struct ReadmeStoreExampleTests {
    @Test func storeExample() throws {
        let directory = StoreDirectory()
        let path = directory.path

        // README: begin store example
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
        // README: end store example

        #expect(published.map(\.title) == ["Notes on the Engine"])
        #expect(try context.explain(descriptor) == "index authorID: 1 key")
        #expect(try context.fetchCount(FetchDescriptor<Author>()) == 1)
        try container.close()
    }

    @Test func readmeShowsTheExamplesAsTested() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        for (name, indent) in [("models", 0), ("store example", 8)] {
            let marker = try #require(readme.range(of: "<!-- example: \(name) -->\n```swift\n"))
            let end = try #require(readme.range(of: "```", range: marker.upperBound..<readme.endIndex))
            let shown = String(readme[marker.upperBound..<end.lowerBound])
            let begin = try #require(source.range(of: "// README: begin \(name)\n"))
            let finish = try #require(
                source.range(of: String(repeating: " ", count: indent) + "// README: end \(name)"))
            let prefix = String(repeating: " ", count: indent)
            let tested = source[begin.upperBound..<finish.lowerBound]
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(prefix) ? $0.dropFirst(indent) : $0 }
                .joined(separator: "\n")
            #expect(shown == tested, "README block '\(name)' differs from the test")
        }
    }
}
