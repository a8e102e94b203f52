import Foundation
import Testing

@_spi(Testing) @testable import KVStore

private struct Article: Model, Equatable {
    var id = UUID.timeOrdered()
    var slug: String
    var tag: String
    static let entity = Entity<Article>(indexes: [.unique(\.slug), .index(\.tag)])
}

private struct ArticleScript: Model, Equatable {
    var id = UUID.timeOrdered()
    var slug: String
    var tag: String
    static let entity = Entity<ArticleScript>(name: "Article")
}

/// A value longer than LMDB's key limit, the same as the others of `family` for its first 600 bytes.
private func long(_ family: String, _ suffix: String) -> String {
    String(repeating: family, count: 600 / family.count + 1).prefix(600) + suffix
}

/// Unique and index keys are exact for values of any length: values that share a cut key (forced here with a hash
/// that makes every long value of a prefix collide) are told apart by their records.
@Suite struct LongKeyTests {
    private static func open<M: Model>(_ type: M.Type, at path: String) throws -> ModelContainer {
        var configuration = ModelConfiguration(path: path, durability: .off)
        configuration.collidesLongKeysForTesting = true
        return try ModelContainer(for: type, configuration: configuration)
    }

    @Test func distinctLongValuesThatShareACutKeyAreAllStoredAndEachIsFound() throws {
        let directory = StoreDirectory()
        let container = try Self.open(Article.self, at: directory.path)
        defer { try? container.close() }
        let articles = (0..<40).map { Article(slug: long("same-prefix/", "\($0)"), tag: long("tag/", "\($0 % 4)")) }
        try container.write { txn in for article in articles { try txn.insert(article) } }
        let context = ModelContext(container)
        for article in articles {
            let slug = article.slug
            #expect(try context.fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.slug == slug })) == [article])
            let tag = article.tag
            let tagged = try context.fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.tag == tag }))
            #expect(tagged.count == 10)
            #expect(tagged.allSatisfy { $0.tag == tag })
        }
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func aUniqueLongValueIsRefusedExactlyWhenAnotherModelHasIt() throws {
        let directory = StoreDirectory()
        let container = try Self.open(Article.self, at: directory.path)
        defer { try? container.close() }
        let first = Article(slug: long("p/", "first"), tag: "t")
        let second = Article(slug: long("p/", "second"), tag: "t")
        try container.write { txn in
            try txn.insert(first)
            try txn.insert(second)
        }
        let taken = try #require(throws: KVStoreError.self) {
            try container.write { txn in try txn.insert(Article(slug: second.slug, tag: "t")) }
        }
        #expect(taken == .uniqueViolation)
        #expect(taken.description.contains(second.id.uuidString))
        // Moving the first onto the second's value is refused; onto a fresh value, allowed; its old value is free.
        #expect(throws: KVStoreError.uniqueViolation) {
            try container.write { txn in try txn.insert(Article(id: first.id, slug: second.slug, tag: "t")) }
        }
        try container.write { txn in try txn.insert(Article(id: first.id, slug: long("p/", "third"), tag: "t")) }
        try container.write { txn in try txn.insert(Article(slug: long("p/", "first"), tag: "t")) }
        // Deleting frees a value for another model.
        try container.write { txn in _ = try txn.delete(Article.self, id: second.id) }
        try container.write { txn in try txn.insert(Article(slug: second.slug, tag: "t")) }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Article>()) == 3)
        #expect(try integrityErrors(at: directory.path) == [])
    }

    @Test func rangesAndSortsOverCutKeysKeepTheValuesOrder() throws {
        let directory = StoreDirectory()
        let container = try Self.open(Article.self, at: directory.path)
        defer { try? container.close() }
        let suffixes = (0..<30).map { String(format: "%02d", $0) }.shuffled()
        try container.write { txn in
            for suffix in suffixes { try txn.insert(Article(slug: "s\(suffix)", tag: long("range/", suffix))) }
        }
        let context = ModelContext(container)
        let bound = long("range/", "10")
        let above = try context.fetch(
            FetchDescriptor<Article>(predicate: #Predicate { $0.tag > bound }, sortBy: [SortDescriptor(\.tag)]))
        #expect(above.map { String($0.tag.suffix(2)) } == (11..<30).map { String(format: "%02d", $0) })
        var firstFive = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.tag)])
        firstFive.fetchLimit = 5
        // A string sort reads every match and sorts it (QueryPlanner.isByteOrdered says why).
        #expect(try context.explain(firstFive) == "scan")
        #expect(try context.fetch(firstFive).map { String($0.tag.suffix(2)) } == ["00", "01", "02", "03", "04"])
        var lastThree = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.tag, order: .reverse)])
        lastThree.fetchLimit = 3
        #expect(try context.fetch(lastThree).map { String($0.tag.suffix(2)) } == ["29", "28", "27"])
    }

    @Test func aProgramThatDoesNotDeclareTheUniqueIndexKeepsItExactToo() throws {
        let directory = StoreDirectory()
        let existing = Article(slug: long("q/", "kept"), tag: "t")
        do {
            let program = try Self.open(Article.self, at: directory.path)
            try program.write { txn in try txn.insert(existing) }
            try program.close()
        }
        let script = try Self.open(ArticleScript.self, at: directory.path)
        defer { try? script.close() }
        try script.write { txn in
            for index in 0..<10 { try txn.insert(ArticleScript(slug: long("q/", "other \(index)"), tag: "t")) }
        }
        let error = try #require(throws: KVStoreError.self) {
            try script.write { txn in try txn.insert(ArticleScript(slug: existing.slug, tag: "t")) }
        }
        #expect(error == .uniqueViolation)
        #expect(error.description.contains(existing.id.uuidString))
        #expect(try integrityErrors(at: directory.path) == [])
    }
}
