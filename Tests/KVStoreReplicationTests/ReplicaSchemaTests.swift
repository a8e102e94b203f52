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

extension ReplicationSuites {
    @Suite
    struct ReplicaSchemaTests {
        @Test func anIndexAndAnEntityThePrimaryAddsReachTheReplicaBuilt() async throws {
            try await offPool {
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
        }

        @Test func observersOfAReplicaHearThePrimarysCommits() async throws {
            try await offPool {
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
    }
}

extension ReplicationSuites {
    @Suite
    struct ReplicaExternalValueTests {
        /// A photo with its image in external storage.
        struct Photo: Model, Equatable {
            var id = UUID.timeOrdered()
            var title: String
            var image = ExternalData()
            static let entity = Entity<Photo>(externalStorage: [.attribute(\.image)])
        }

        private func open(_ path: String) throws -> ModelContainer {
            try ModelContainer(for: Photo.self, configuration: ModelConfiguration(path: path))
        }

        /// Every photo's title and image bytes.
        private func contents(_ container: ModelContainer) throws -> [String: Data] {
            let photos = try container.read { txn in try txn.fetch(FetchDescriptor<Photo>()) }
            var contents: [String: Data] = [:]
            for photo in photos { contents[photo.title] = try container.data(for: \.image, of: photo) }
            return contents
        }

        /// The entries of every external table of the store.
        private func externalEntries(_ container: ModelContainer) throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for name in ["external/Photo", "checksums/Photo", "staging/Photo"] {
                let table = try container.environment.openTable(named: name)
                counts[name] = try container.environment.read { txn in try txn.count(of: table) }
            }
            return counts
        }

        @Test func externalValuesGoWithTheirModelsInPiecesAndTheReplacedOnesAreDeleted() async throws {
            try await offPool {
                let fixture = try ReplicationFixture(serverConfiguration: "max_payload: 65536\n")
                let path = fixture.directory.appendingPathComponent("photos").path
                let primary = try open(path)
                try primary.enableHistory()
                let context = ModelContext(primary)
                let kept = Photo(title: "kept", image: ExternalData(Data(repeating: 1, count: 1_000)))
                context.insert(kept)
                try context.save()
                let copy = fixture.directory.appendingPathComponent("photos-replica").path
                try primary.environment.copy(to: copy)
                // A value of several chunks, each larger than a message; a small one; then an update that keeps a value, one
                // that replaces it, and a delete.
                var large = Photo(title: "large", image: ExternalData(Data((0..<700_000).map { UInt8($0 % 251) })))
                var small = Photo(title: "small", image: ExternalData(Data(repeating: 7, count: 10)))
                let gone = Photo(title: "gone", image: ExternalData(Data(repeating: 9, count: 300_000)))
                context.insert(large)
                context.insert(small)
                context.insert(gone)
                try context.save()
                let stream = ReplicationStream(name: "PHOTOS")
                _ = try fixture.jetStream.createStream(stream.configuration())
                let publisher = try ReplicationPublisher(
                    container: primary, stream: stream, jetStream: fixture.jetStream)
                try publisher.publishPending()
                large = try #require(try primary.read { txn in try txn.model(for: large.id, as: Photo.self) })
                large.title = "large, renamed"
                small = try #require(try primary.read { txn in try txn.model(for: small.id, as: Photo.self) })
                small.image = ExternalData(Data(repeating: 8, count: 20))
                context.insert(large)
                context.insert(small)
                context.delete(gone)
                try context.save()
                let before = try fixture.jetStream.streamInfo(stream.name).state.bytes
                try publisher.publishPending()
                let sent = try fixture.jetStream.streamInfo(stream.name).state.bytes - before
                // The renamed photo's 700 KB are not sent again.
                #expect(sent < 10_000, "\(sent) bytes")

                let replicaContainer = try open(copy)
                let replica = try Replica(container: replicaContainer, stream: stream, jetStream: fixture.jetStream)
                while try replica.applyAvailable(wait: .milliseconds(200)) > 0 {}
                #expect(try contents(replicaContainer) == contents(primary))
                #expect(try externalEntries(replicaContainer) == externalEntries(primary))
                #expect(try replicaContainer.lastHistoryToken() == primary.lastHistoryToken())
            }
        }

        @Test func aRestartedPublisherSendsEachValueAgainWithItsModelsNextChange() async throws {
            try await offPool {
                let fixture = try ReplicationFixture()
                let path = fixture.directory.appendingPathComponent("photos").path
                let primary = try open(path)
                try primary.enableHistory()
                let stream = ReplicationStream(name: "PHOTOS")
                _ = try fixture.jetStream.createStream(stream.configuration())
                let context = ModelContext(primary)
                var photo = Photo(title: "first", image: ExternalData(Data(repeating: 3, count: 5_000)))
                context.insert(photo)
                try context.save()
                try ReplicationPublisher(container: primary, stream: stream, jetStream: fixture.jetStream)
                    .publishPending()
                // A copy made now has the value; a replica of an older copy would have gotten it from the stream.
                let copy = fixture.directory.appendingPathComponent("photos-replica").path
                try primary.environment.copy(to: copy)
                photo.title = "second"
                context.insert(photo)
                try context.save()
                let before = try fixture.jetStream.streamInfo(stream.name).state.bytes
                try ReplicationPublisher(container: primary, stream: stream, jetStream: fixture.jetStream)
                    .publishPending()
                #expect(try fixture.jetStream.streamInfo(stream.name).state.bytes - before > 5_000)
                let replicaContainer = try open(copy)
                let replica = try Replica(container: replicaContainer, stream: stream, jetStream: fixture.jetStream)
                while try replica.applyAvailable(wait: .milliseconds(200)) > 0 {}
                #expect(try contents(replicaContainer) == contents(primary))
                #expect(try externalEntries(replicaContainer) == externalEntries(primary))
            }
        }
    }
}

/// A shop whose second version drops its coupons.
enum ShopV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Account.self, Coupon.self]

    struct Coupon: Model {
        var id = UUID.timeOrdered()
        var code: String
        static let entity = Entity<Coupon>(indexes: [.unique(\.code)])
    }
}

enum ShopV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Account.self]
}

enum ShopPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ShopV1.self, ShopV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ShopV1.self, toVersion: ShopV2.self)]
}

extension ReplicationSuites {
    @Suite
    struct ReplicaMigrationTests {
        @Test func commitsOfAnEntityAMigrationRemovedSinceReplicateAsItsRemoval() async throws {
            try await offPool {
                let fixture = try ReplicationFixture()
                let path = fixture.directory.appendingPathComponent("shop").path
                let replicaPath = fixture.directory.appendingPathComponent("shop-replica").path
                do {
                    let shop = try ModelContainer(for: ShopV1.self, configuration: ModelConfiguration(path: path))
                    try shop.enableHistory()
                    let context = ModelContext(shop)
                    context.insert(Account(email: "a@example.com", name: "A"))
                    context.insert(ShopV1.Coupon(code: "SPRING"))
                    try context.save()
                    try shop.environment.copy(to: replicaPath)
                    let summer = ShopV1.Coupon(code: "SUMMER")
                    context.insert(summer)
                    context.insert(Account(email: "b@example.com", name: "B"))
                    try context.save()
                    context.delete(summer)
                    try context.save()
                    try shop.close()
                }
                // The new version drops the coupons; the history still names them.
                let shop = try ModelContainer(
                    for: ShopV2.self, migrationPlan: ShopPlan.self, configuration: ModelConfiguration(path: path))
                let stream = ReplicationStream(name: "SHOP")
                _ = try fixture.jetStream.createStream(stream.configuration())
                let publisher = try ReplicationPublisher(container: shop, stream: stream, jetStream: fixture.jetStream)
                #expect(try publisher.publishPending() > 0)
                let replicaContainer = try ModelContainer(for: [], configuration: ModelConfiguration(path: replicaPath))
                let replica = try Replica(container: replicaContainer, stream: stream, jetStream: fixture.jetStream)
                while try replica.applyAvailable(wait: .milliseconds(200)) > 0 {}
                #expect(try replicaContainer.lastHistoryToken() == shop.lastHistoryToken())
                #expect(try exportedModels(replicaPath) == exportedModels(path))
                func entities(_ container: ModelContainer) throws -> [String] {
                    try container.environment.read { txn in
                        try Catalog.entities(in: txn, table: container.catalogTable).entities.map(\.name).sorted()
                    }
                }
                #expect(try entities(shop) == ["Account"])
                #expect(try entities(replicaContainer) == ["Account"])
                let reader = try ModelContainer(for: Account.self, configuration: ModelConfiguration(path: replicaPath))
                #expect(try ModelContext(reader).fetchCount(FetchDescriptor<Account>()) == 2)
            }
        }
    }
}
