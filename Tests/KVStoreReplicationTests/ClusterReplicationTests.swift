import Foundation
import KVStore
import KVStoreReplication
import NATS
import NATSTestSupport
import Testing

extension ReplicationSuites {
    @Suite
    struct ClusterReplicationTests {
        @Test func killingTheStreamLeaderLosesNoCommitAndReplicationResumes() async throws {
            try await offPool {
                let cluster = try NATSCluster()
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "cluster-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let primary = try ReplicationFixture.open(directory.appendingPathComponent("primary").path)
                try primary.enableHistory()
                let copy = directory.appendingPathComponent("replica").path
                try primary.environment.copy(to: copy)

                let connection = try NATSConnection(servers: cluster.urls, options: testOptions())
                defer { connection.close() }
                let jetStream = connection.jetStream(timeout: .seconds(2))
                let stream = ReplicationStream(name: "CLUSTERED")
                let leaderName = try await onThread { () -> String in
                    let deadline = ContinuousClock.now + .seconds(20)
                    while true {
                        do {
                            _ = try jetStream.createStream(stream.configuration(replicas: 3))
                            let info = try jetStream.streamInfo(stream.name)
                            if let leader = info.cluster?.leader, info.cluster?.replicas?.count == 2 { return leader }
                        } catch  where ContinuousClock.now < deadline {}
                        usleep(100_000)
                    }
                }
                let leader = try #require(cluster.server(named: leaderName))

                let publisher = try ReplicationPublisher(container: primary, stream: stream, jetStream: jetStream)
                let replicaContainer = try ReplicationFixture.open(copy)
                let replica = try Replica(container: replicaContainer, stream: stream, jetStream: jetStream)
                publisher.start()
                replica.start()
                defer {
                    publisher.stop()
                    replica.stop()
                }
                let context = ModelContext(primary)
                for index in 0..<300 {
                    if index == 100 { leader.stop() }
                    context.insert(Account(email: "c\(index)@example.com", name: "C"))
                    try context.save()
                    if index % 20 == 0 { try await Task.sleep(for: .milliseconds(20)) }
                }
                let last = try primary.lastHistoryToken()
                let caughtUp = await eventually(timeout: .seconds(60)) {
                    (try? replicaContainer.lastHistoryToken()) == last
                }
                #expect(
                    caughtUp, "\(String(describing: try? replica.status())) \(String(describing: publisher.status))")
                #expect(try Contents(replicaContainer) == Contents(primary))
                #expect(publisher.status.isStopped == false)
            }
        }
    }
}
