import Foundation
import Testing

@testable import KVStore

/// A class fetch whose predicate compares the model's own attributes tests the stored records, as a struct fetch does,
/// and turns only the matches into objects; the context's unsaved changes still decide what it returns.
@Suite struct ObjectRecordTestTests {
    /// Forty tasks of priorities 0 to 3, every third one done.
    private func seed(_ container: ModelContainer) throws {
        let context = ModelContext(container)
        for number in 0..<40 {
            let task = RefTask(title: "t\(number)", priority: number % 4)
            task.isDone = number % 3 == 0
            context.insert(task)
        }
        try context.save()
    }

    /// The titles of `objects` that `predicate` matches, evaluated on each.
    private func evaluated(_ objects: [RefTask], _ predicate: Predicate<RefTask>) throws -> [String] {
        try objects.filter { try predicate.evaluate($0) }.map(\.title).sorted()
    }

    @Test func anInexactIndexReadAndAScanMatchTheEvaluationWithUnsavedChanges() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let urgentOpen = #Predicate<RefTask> { $0.priority >= 2 && !$0.isDone }
            let doneOrFirst = #Predicate<RefTask> { $0.isDone || $0.title == "t1" }
            let context = ModelContext(container)
            #expect(try context.explain(FetchDescriptor(predicate: urgentOpen)).hasPrefix("index priority"))
            #expect(try context.explain(FetchDescriptor(predicate: doneOrFirst)) == "scan")
            for predicate in [urgentOpen, doneOrFirst] {
                let stored = try ModelContext(container).fetch(FetchDescriptor<RefTask>())
                let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(\.title).sorted()
                #expect(fetched == (try evaluated(stored, predicate)))
                #expect(!context.hasChanges)
            }
            // Unsaved changes: objects changed into and out of both predicates, one deleted, one inserted.
            let all = try context.fetch(FetchDescriptor<RefTask>(sortBy: [SortDescriptor(\.title)]))
            let byTitle = Dictionary(uniqueKeysWithValues: all.map { ($0.title, $0) })
            try #require(byTitle["t2"]).isDone = true  // priority 2, leaves urgentOpen, joins doneOrFirst
            try #require(byTitle["t5"]).priority = 3  // not done: joins urgentOpen
            try #require(byTitle["t3"]).isDone = false  // leaves doneOrFirst
            let deleted = try #require(byTitle["t7"])  // priority 3, open
            context.delete(deleted)
            let inserted = RefTask(title: "new", priority: 2)
            context.insert(inserted)
            let current = all.filter { $0 !== deleted } + [inserted]
            for predicate in [urgentOpen, doneOrFirst] {
                let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(\.title).sorted()
                #expect(fetched == (try evaluated(current, predicate)))
                #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == fetched.count)
            }
            // A new context sees the store, and the saved context's objects once it saved.
            try context.save()
            for predicate in [urgentOpen, doneOrFirst] {
                let fetched = try ModelContext(container).fetch(FetchDescriptor(predicate: predicate))
                #expect(fetched.map(\.title).sorted() == (try evaluated(current, predicate)))
            }
        }
    }

    /// A class compared by its encoding keeps the records it fetched as its snapshots: after a fetch that tested
    /// records, each object's snapshot is its own record, so the context finds nothing changed.
    @Test func aClassComparedByEncodingKeepsItsOwnRecords() throws {
        try withContainer(ScoredNote.self) { container in
            let filling = ModelContext(container)
            for number in 0..<50 {
                filling.insert(
                    ScoredNote(
                        title: "n\(number)", score: number % 5, mark: number % 2 == 0 ? .plain : .starred("\(number)")))
            }
            try filling.save()
            #expect(try container.store(for: ScoredNote.self).objectLayout == nil)
            let context = ModelContext(container)
            let scan = FetchDescriptor<ScoredNote>(
                predicate: #Predicate { $0.title == "n3" || $0.title == "n44" }, sortBy: [SortDescriptor(\.title)])
            let index = FetchDescriptor<ScoredNote>(
                predicate: #Predicate { $0.score >= 3 && $0.title != "n3" }, sortBy: [SortDescriptor(\.title)])
            #expect(try context.explain(scan) == "scan")
            #expect(try context.explain(index).hasPrefix("index score"))
            #expect(try context.fetch(scan).map(\.title) == ["n3", "n44"])
            #expect(try context.fetch(index).count == 19)
            #expect(!context.hasChanges)
            let note = try #require(try context.fetch(scan).first)
            note.mark = .starred("99")
            #expect(context.hasChanges)
            #expect(try context.fetch(scan).map(\.mark) == [.starred("99"), .plain])
        }
    }

    /// A class whose decoding lowercases what it reads: its records' fields disagree with its objects, so the
    /// records stop being tested and the objects are evaluated. The scan had passed over records when it found that
    /// out, so it starts again and returns each match once.
    @Test func aNormalizingClassIsEvaluated() throws {
        try withContainer(LowercasedMember.self) { container in
            let filling = ModelContext(container)
            for number in 0..<40 { filling.insert(LowercasedMember(rank: number, email: "m\(number)@example.org")) }
            filling.insert(LowercasedMember(rank: 50, email: "ANN@EXAMPLE.ORG"))
            for number in 41..<45 { filling.insert(LowercasedMember(rank: number, email: "m\(number)@example.org")) }
            try filling.save()
            let context = ModelContext(container)
            let scan = FetchDescriptor<LowercasedMember>(
                predicate: #Predicate { $0.email == "ANN@EXAMPLE.ORG" || $0.email == "m1@example.org" })
            #expect(try context.explain(scan) == "scan")
            #expect(try context.fetch(scan).map(\.email) == ["m1@example.org"])
            let index = FetchDescriptor<LowercasedMember>(
                predicate: #Predicate { $0.rank > 45 && $0.email == "ann@example.org" })
            #expect(try context.explain(index).hasPrefix("index rank"))
            #expect(try context.fetch(index).map(\.email) == ["ann@example.org"])
            #expect(try context.fetchCount(index) == 1)
        }
    }
}

/// A note with an attribute whose type a bitwise comparison cannot trust (an enum with a payload), so that its
/// context compares it by encoding and keeps the records it fetches.
final class ScoredNote: PersistentModel {
    enum Mark: Codable, Equatable {
        case plain
        case starred(String)
    }

    var id = UUID.timeOrdered()
    var title: String
    var score: Int
    var mark: Mark

    init(title: String, score: Int, mark: Mark) {
        self.title = title
        self.score = score
        self.mark = mark
    }

    static let entity = Entity<ScoredNote>(indexes: [.index(\.score)])
}

/// A member whose decoding lowercases the stored email, with an index on its rank.
final class LowercasedMember: PersistentModel {
    var id = UUID.timeOrdered()
    var rank: Int
    var email: String

    init(rank: Int, email: String) {
        self.rank = rank
        self.email = email
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        rank = try container.decode(Int.self, forKey: .rank)
        email = try container.decode(String.self, forKey: .email).lowercased()
    }

    static let entity = Entity<LowercasedMember>(indexes: [.index(\.rank)])
}
