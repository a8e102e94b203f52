import Foundation
import TestSupport
import Testing

@testable import KVStore

/// Paged and streamed fetches give the models a fetch gives, in its order, a page at a time; continuations survive
/// writes between pages, encoding, and refuse what they were not made for.
@Suite struct FetchPageTests {
    /// Descriptors of every shape a page reads differently: ID order over the record table, index plans, sorts an
    /// index follows and sorts it does not, both directions, offsets and limits.
    static func descriptors() -> [(String, FetchDescriptor<LedgerEntry>)] {
        var limited = FetchDescriptor<LedgerEntry>(sortBy: [SortDescriptor(\.amount, order: .reverse)])
        limited.fetchOffset = 13
        limited.fetchLimit = 40
        var offsetOnly = FetchDescriptor<LedgerEntry>(predicate: #Predicate { $0.account >= 2 })
        offsetOnly.fetchOffset = 500
        return [
            ("all, ID order", FetchDescriptor()),
            ("index keys, ID order", FetchDescriptor(predicate: #Predicate { $0.account == 3 })),
            (
                "scan predicate, ID order",
                FetchDescriptor(predicate: #Predicate { $0.amount > 1_000 && $0.labels.count > 1 })
            ),
            ("sorted by a plain attribute", FetchDescriptor(sortBy: [SortDescriptor(\.amount)])),
            (
                "range sorted by its index",
                FetchDescriptor(predicate: #Predicate { $0.account > 0 }, sortBy: [SortDescriptor(\.account)])
            ),
            (
                "range sorted by its index, reversed",
                FetchDescriptor(
                    predicate: #Predicate { $0.account > 0 }, sortBy: [SortDescriptor(\.account, order: .reverse)])
            ),
            (
                "two sort keys", FetchDescriptor(sortBy: [SortDescriptor(\.account), SortDescriptor(\.bookedAt)])
            ),
            ("offset and limit", limited),
            ("offset past the end", offsetOnly),
        ]
    }

    /// Every page of a listing, concatenated.
    static func listing(
        _ descriptor: FetchDescriptor<LedgerEntry>, in context: ModelContext, limit: Int
    ) throws -> [LedgerEntry] {
        var page = try context.fetchPage(descriptor, limit: limit)
        var models = page.models
        while let next = page.continuation {
            page = try context.fetchPage(descriptor, after: next, limit: limit)
            #expect(page.models.count <= limit)
            models += page.models
        }
        return models
    }

    @Test(arguments: [1, 7, 64])
    func pagesConcatenateToTheFetch(limit: Int) throws {
        try withContainer(LedgerEntry.self) { container throws in
            let context = ModelContext(container)
            try context.insert(contentsOf: AggregateTests.entries(count: 150, seed: 11))
            try context.save()
            // Pending changes too: an insert, a change and a delete, not saved.
            context.insert(AggregateTests.entries(count: 1, seed: 12)[0])
            var changed = try context.fetch(FetchDescriptor<LedgerEntry>())[5]
            changed.amount = -5_000
            context.insert(changed)
            context.delete(try context.fetch(FetchDescriptor<LedgerEntry>())[9])
            for (label, descriptor) in Self.descriptors() {
                // A fetch without sort descriptors returns pending inserts last; a listing is in ID order then.
                var fetched = try context.fetch(descriptor)
                if descriptor.sortBy.isEmpty { fetched.sort { $0.id.isOrdered(before: $1.id) } }
                let expected = fetched.map(\.id)
                #expect(try Self.listing(descriptor, in: context, limit: limit).map(\.id) == expected, "\(label)")
                var cursor = context.fetchCursor(descriptor, batchSize: limit)
                var streamed: [UUID] = []
                while let model = try cursor.next() { streamed.append(model.id) }
                #expect(streamed == expected, "cursor, \(label)")
                #expect(try cursor.continuation() == nil, "\(label)")
            }
        }
    }

    @Test(arguments: [21 as UInt64, 22, 23])
    func aListingSurvivesWritesBetweenPages(seed: UInt64) throws {
        try withContainer(LedgerEntry.self) { container throws in
            let writer = ModelContext(container)
            let initial = AggregateTests.entries(count: 120, seed: seed)
            try writer.insert(contentsOf: initial)
            try writer.save()
            var random = SplitMix64(seed: seed)
            let descriptor = FetchDescriptor<LedgerEntry>(sortBy: [SortDescriptor(\.amount)])
            var seen: [LedgerEntry] = []
            var deleted = Set<UUID>()
            var moved = Set<UUID>()
            var page = try ModelContext(container).fetchPage(descriptor, limit: 10)
            while true {
                seen += page.models
                // Between pages: insert a few, delete a few of any, change the sort value of one.
                try writer.insert(contentsOf: AggregateTests.entries(count: 3, seed: random.next()))
                let stored = try writer.fetch(FetchDescriptor<LedgerEntry>())
                for _ in 0..<2 {
                    let victim = stored[Int.random(in: 0..<stored.count, using: &random)]
                    writer.delete(victim)
                    deleted.insert(victim.id)
                }
                var changed = stored[Int.random(in: 0..<stored.count, using: &random)]
                changed.amount = Int.random(in: -2_000..<8_000, using: &random)
                writer.insert(changed)
                moved.insert(changed.id)
                try writer.save()
                guard let next = page.continuation else { break }
                // A new context each time: the continuation alone carries the position.
                page = try ModelContext(container).fetchPage(descriptor, after: next, limit: 10)
            }
            let ids = seen.map(\.id)
            // A model whose sort value never changed comes once, in order.
            let steadySeen = seen.filter { !moved.contains($0.id) }
            #expect(Set(steadySeen.map(\.id)).count == steadySeen.count)
            for (earlier, later) in zip(steadySeen, steadySeen.dropFirst()) {
                #expect(descriptor.precedes(earlier, later))
            }
            // Every initial model never deleted nor moved came exactly once.
            let steady = initial.filter { !deleted.contains($0.id) && !moved.contains($0.id) }
            for model in steady { #expect(ids.filter { $0 == model.id }.count == 1) }
            // No model deleted before the listing reached its place came.
            let final = Set(try writer.fetch(FetchDescriptor<LedgerEntry>()).map(\.id))
            for id in ids where !final.contains(id) { #expect(deleted.contains(id)) }
        }
    }

    @Test func aContinuationIsCodableAndResumesAfterItsModel() throws {
        try withContainer(LedgerEntry.self) { container throws in
            let context = ModelContext(container)
            try context.insert(contentsOf: AggregateTests.entries(count: 30, seed: 31))
            try context.save()
            let descriptor = FetchDescriptor<LedgerEntry>(sortBy: [SortDescriptor(\.bookedAt, order: .reverse)])
            let expected = try context.fetch(descriptor).map(\.id)
            var cursor = context.fetchCursor(descriptor, batchSize: 4)
            for _ in 0..<6 { _ = try cursor.next() }
            let stopped = try #require(try cursor.continuation())
            // Through JSON, as a program would keep it, and through its token.
            let json = try JSONEncoder().encode(["position": stopped])
            #expect(String(decoding: json, as: UTF8.self).hasPrefix("{\"position\":\""))
            let decoded = try #require(
                try JSONDecoder().decode([String: FetchContinuation].self, from: json)["position"])
            #expect(decoded == stopped)
            let fromToken = try FetchContinuation(token: stopped.token)
            var resumed = context.fetchCursor(descriptor, after: fromToken, batchSize: 5)
            var rest: [UUID] = []
            while let model = try resumed.next() { rest.append(model.id) }
            #expect(rest == Array(expected.dropFirst(6)))
        }
    }

    @Test func aContinuationRefusesWhatItWasNotMadeFor() throws {
        try withContainer(LedgerEntry.self, CountedItem.self) { container throws in
            let context = ModelContext(container)
            try context.insert(contentsOf: AggregateTests.entries(count: 10, seed: 41))
            try context.insert(contentsOf: ExactIndexReadTests.models())
            try context.save()
            let descriptor = FetchDescriptor<LedgerEntry>(predicate: #Predicate { $0.account > 1 })
            let continuation = try #require(try context.fetchPage(descriptor, limit: 2).continuation)
            let otherValue = FetchDescriptor<LedgerEntry>(predicate: #Predicate { $0.account > 2 })
            let error = #expect(throws: KVStoreError.invalidContinuation) {
                try context.fetchPage(otherValue, after: continuation, limit: 2)
            }
            #expect(
                error?.message
                    == "The continuation is of a listing with another predicate, sort, offset or limit: start the listing again"
            )
            let otherEntity = #expect(throws: KVStoreError.invalidContinuation) {
                try context.fetchPage(FetchDescriptor<CountedItem>(), after: continuation, limit: 2)
            }
            #expect(otherEntity?.message.contains("is of a listing of LedgerEntry, not CountedItem") == true)
            for token in ["", "not a token", String(continuation.token.dropLast(3)), "AAAA"] {
                #expect(throws: KVStoreError.invalidContinuation) { try FetchContinuation(token: token) }
            }
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode([FetchContinuation].self, from: Data("[5]".utf8))
            }
            #expect(throws: KVStoreError.invalidModel) { try context.fetchPage(descriptor, limit: 0) }
        }
    }

    @Test func aContinuationMadeBeforeAMigrationIsRefused() throws {
        let directory = StoreDirectory()
        try MigrationSupport.seed(directory.path, schema: TodosV1.self, MigrationSupport.todos(count: 6))
        let descriptor = FetchDescriptor<TodosV1.Todo>()
        let continuation: FetchContinuation = try {
            let container = try ModelContainer(
                for: TodosV1.self, configuration: MigrationSupport.configuration(directory.path))
            defer { try? container.close() }
            return try #require(try ModelContext(container).fetchPage(descriptor, limit: 2).continuation)
        }()
        let migrated = try ModelContainer(
            for: TodosV3.self, migrationPlan: TodosPlan.self,
            configuration: MigrationSupport.configuration(directory.path))
        defer { try? migrated.close() }
        let error = #expect(throws: KVStoreError.invalidContinuation) {
            try ModelContext(migrated).fetchPage(FetchDescriptor<TodosV3.Todo>(), after: continuation, limit: 2)
        }
        #expect(error != nil)
    }

    @Test func referenceModelPagesAreTheContextsObjects() throws {
        try withContainer(LedgerLine.self) { container throws in
            let context = ModelContext(container)
            let lines = (0..<25).map { LedgerLine(account: $0 % 3, amount: 100 - $0) }
            for line in lines { context.insert(line) }
            try context.save()
            lines[4].amount = 1_000
            let descriptor = FetchDescriptor<LedgerLine>(sortBy: [SortDescriptor(\.amount)])
            var cursor = context.fetchCursor(descriptor, batchSize: 4)
            var streamed: [LedgerLine] = []
            while let line = try cursor.next() { streamed.append(line) }
            #expect(streamed.map(\.id) == (try context.fetch(descriptor)).map(\.id))
            #expect(streamed.last === lines[4])
            #expect(streamed.allSatisfy { line in lines.contains { $0 === line } })
        }
    }
}

/// Continuations of reference models with relationship properties: the last object is kept by its attributes and
/// relationship IDs, and decodes again without a context.
@Suite struct ReferenceModelContinuationTests {
    @Test func aListingOfObjectsWithRelationshipsResumes() throws {
        try withContainer(RefProject.self) { container throws in
            let context = ModelContext(container)
            let project = RefProject(name: "p")
            let tag = RefTag(name: "t")
            for number in 0..<9 {
                let task = RefTask(title: "task \(number)", project: project, priority: number % 4)
                task.tags = [tag]
                context.insert(task)
            }
            try context.save()
            let descriptor = FetchDescriptor<RefTask>(sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)])
            var page = try context.fetchPage(descriptor, limit: 2)
            var titles = page.models.map(\.title)
            while let next = page.continuation {
                page = try ModelContext(container).fetchPage(descriptor, after: next, limit: 2)
                titles += page.models.map(\.title)
            }
            #expect(titles == (try context.fetch(descriptor)).map(\.title))
            #expect(titles.count == 9)
        }
    }
}

/// A continuation made by one container resumes in another open on the same store, as in another process.
@Suite struct ContinuationAcrossContainersTests {
    @Test func anotherContainerResumesTheListing() throws {
        let directory = StoreDirectory()
        let configuration = ModelConfiguration(path: directory.path, durability: .off)
        let first = try ModelContainer(for: LedgerEntry.self, configuration: configuration)
        defer { try? first.close() }
        let writer = ModelContext(first)
        try writer.insert(contentsOf: AggregateTests.entries(count: 40, seed: 51))
        try writer.save()
        let descriptor = FetchDescriptor<LedgerEntry>(sortBy: [SortDescriptor(\.amount)])
        let page = try ModelContext(first).fetchPage(descriptor, limit: 15)
        let token = try #require(page.continuation?.token)
        let second = try ModelContainer(for: LedgerEntry.self, configuration: configuration)
        defer { try? second.close() }
        let rest = try ModelContext(second).fetchPage(descriptor, after: FetchContinuation(token: token), limit: 100)
        #expect(rest.continuation == nil)
        let all = try ModelContext(second).fetch(descriptor).map(\.id)
        #expect(page.models.map(\.id) + rest.models.map(\.id) == all)
    }
}
