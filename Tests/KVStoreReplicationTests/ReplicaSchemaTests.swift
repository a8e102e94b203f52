import Foundation
import KVStore
import KVStoreReplication
import NATS
import NATSTestSupport
import Testing

/// Orders as a later version of the primary's program declares them: one more index, on the note.
struct NotedOrder: Model, Equatable {
    var id = UUID.timeOrdered()
    var accountID: UUID
    var total: Int
    var note = ""
    static let entity = Entity<NotedOrder>(
        name: "Order", indexes: [.index(\.accountID), .index(\.total), .index(\.note)])
}

/// An entity the primary's program adds later.
struct Invoice: Model, Equatable {
    var id = UUID.timeOrdered()
    var number: Int
    static let entity = Entity<Invoice>(indexes: [.unique(\.number)])
}

@Suite(.requiresNATSServer, .serialized)
struct ReplicaSchemaTests {
    @Test func anIndexAndAnEntityThePrimaryAddsReachTheReplicaBuilt() throws {
        let fixture = try ReplicationFixture()
        try fixture.randomWork(rounds: 30, seed: 30)
        let copy = try fixture.copyOfPrimary(named: "replica")
        let (replica, follower) = try fixture.replica(at: copy)
        // A new version of the program opens the primary: it builds the note index and adds invoices.
        let path = fixture.directory.appendingPathComponent("primary").path
        let upgraded = try ModelContainer(
            for: Account.self, NotedOrder.self, Invoice.self, configuration: ModelConfiguration(path: path))
        let context = ModelContext(upgraded)
        context.insert(Invoice(number: 1))
        context.insert(NotedOrder(accountID: UUID(), total: 5, note: "new"))
        try context.save()
        try fixture.publisher().publishPending()
        while try follower.applyAvailable(wait: .milliseconds(200)) > 0 {}
        _ = replica
        // A reader of the new version on the replica: the index is there, built, and used.
        let reader = try ModelContainer(
            for: Account.self, NotedOrder.self, Invoice.self, configuration: ModelConfiguration(path: copy))
        let readerContext = ModelContext(reader)
        let noted = FetchDescriptor<NotedOrder>(predicate: #Predicate { $0.note == "new" })
        #expect(try readerContext.explain(noted).hasPrefix("index note"))
        #expect(try readerContext.fetch(noted).map(\.total) == [5])
        let all = try ModelContext(upgraded).fetch(FetchDescriptor<NotedOrder>(sortBy: [SortDescriptor(\.id)]))
        #expect(try readerContext.fetch(FetchDescriptor<NotedOrder>(sortBy: [SortDescriptor(\.id)])) == all)
        for order in all {
            let note = order.note
            let expected = all.filter { $0.note == note }.map(\.id).sorted()
            #expect(
                try readerContext.fetch(FetchDescriptor<NotedOrder>(predicate: #Predicate { $0.note == note }))
                    .map(\.id).sorted() == expected)
        }
        #expect(try readerContext.fetch(FetchDescriptor<Invoice>()).map(\.number) == [1])
    }

    @Test func observersOfAReplicaHearThePrimarysCommits() async throws {
        let fixture = try ReplicationFixture()
        let copy = try fixture.copyOfPrimary(named: "replica")
        let (replica, follower) = try fixture.replica(at: copy)
        let changes = replica.changes(for: [Account.self])
        try fixture.insertAccounts(3, prefix: "seen")
        try fixture.publisher().publishPending()
        while try follower.applyAvailable(wait: .milliseconds(200)) > 0 {}
        var heard: [HistoryToken] = []
        var inserted = 0
        for await change in changes {
            heard.append(try #require(change.historyToken))
            inserted += change.inserted["Account"]?.count ?? 0
            if heard.count == 3 { break }
        }
        #expect(inserted == 3)
        #expect(heard.last == (try fixture.primary.lastHistoryToken()))
    }
}
