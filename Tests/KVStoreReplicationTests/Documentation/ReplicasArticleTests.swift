import Foundation
import KVStore
import KVStoreReplication
import NATS
import NATSTestSupport
import TestSupport
import Testing

// The examples of the article "Replicas".

/// The article's model.
enum ReplicasArticle {
    // Example: begin replication model
    struct Shipment: Model {
        var id = UUID.timeOrdered()
        var destination: String
        var isDelivered = false

        static let entity = Entity<Shipment>(indexes: [.index(\.destination)])
    }
    // Example: end replication model
}

extension ReplicationSuites {
    @Suite
    struct ReplicasArticleTests {
        typealias Shipment = ReplicasArticle.Shipment

        @Test func aPrimaryPublishesAndAReplicaFollows() async throws {
            try await offPool {
                let server = try NATSServer()
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "article-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let primaryPath = directory.appendingPathComponent("primary").path
                let replicaPath = directory.appendingPathComponent("replica").path
                let natsURL = server.url

                // Example: begin replication primary
                let container = try ModelContainer(
                    for: Shipment.self, configuration: ModelConfiguration(path: primaryPath))
                try container.enableHistory()

                let connection = try NATSConnection(servers: [natsURL])
                let jetStream = connection.jetStream()
                let stream = ReplicationStream(name: "SHIPMENTS")
                _ = try jetStream.createStream(stream.configuration())  // once; replicas: 3 on a cluster of three

                let publisher = try ReplicationPublisher(container: container, stream: stream, jetStream: jetStream)
                publisher.start()  // sends each commit soon after it is made, from a thread of its own
                // Example: end replication primary
                defer {
                    publisher.stop()
                    connection.close()
                }

                // What `kvtool copy` does on the primary's machine.
                try container.environment.copy(to: replicaPath)
                let context = ModelContext(container)
                context.insert(Shipment(destination: "Lyon"))
                context.insert(Shipment(destination: "Oslo"))
                try context.save()

                // Example: begin replication replica
                // On another machine, from a copy of the primary made with `kvtool copy`:
                let replicaContainer = try ModelContainer(
                    for: Shipment.self, configuration: ModelConfiguration(path: replicaPath))
                let replica = try Replica(container: replicaContainer, stream: stream, jetStream: jetStream)
                replica.start()

                // Read it as any store: fetches, indexes, relationships, observation.
                let replicaContext = ModelContext(replicaContainer)
                let toLyon = FetchDescriptor<Shipment>(predicate: #Predicate { $0.destination == "Lyon" })
                let status = try replica.status()
                // status.commitsBehind, status.secondsBehind: how far the replica is behind the stream
                // Example: end replication replica
                defer { replica.stop() }
                _ = status

                let last = try container.lastHistoryToken()
                let deadline = ContinuousClock.now + .seconds(10)
                while try replicaContainer.lastHistoryToken() != last, ContinuousClock.now < deadline { usleep(1_000) }
                #expect(try replicaContainer.lastHistoryToken() == last)
                #expect(try replicaContext.fetch(toLyon).map(\.destination) == ["Lyon"])
                #expect(try replica.status().commitsBehind == 0)

                // Example: begin replication refusal
                replicaContext.insert(Shipment(destination: "Rome"))
                do {
                    try replicaContext.save()
                } catch KVStoreError.readOnly {
                    // "The store at … is a replica of the stream 'SHIPMENTS' …; only its replication writes it"
                    replicaContext.rollback()
                }
                // Example: end replication refusal
                #expect(try replicaContext.fetchCount(FetchDescriptor<Shipment>()) == 2)
            }
        }

        @Test func theArticleShowsTheExamplesAsTested() throws {
            #expect(
                try documentationDifferences(
                    [
                        ("replication model", 4), ("replication primary", 16), ("replication replica", 16),
                        ("replication refusal", 16),
                    ], testedIn: #filePath) == [])
        }
    }
}
