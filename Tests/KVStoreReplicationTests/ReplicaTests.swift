import Foundation
import KVStore
import KVStoreReplication
import NATS
import NATSTestSupport
import Testing

extension ReplicationSuites {
    @Suite
    struct ReplicaTests {
        @Test func theTestsRunOffTheCooperativePool() async throws {
            #expect(DispatchQueue.getSpecific(key: DedicatedExecutor.marker) == nil)
            try await offPool {
                #expect(DispatchQueue.getSpecific(key: DedicatedExecutor.marker) == true)
                usleep(1_000)
                #expect(DispatchQueue.getSpecific(key: DedicatedExecutor.marker) == true)
            }
        }

        @Test func aReplicaOfACopyFollowsThePrimaryAndAnswersItsIndexes() async throws {
            try await offPool {
                let fixture = try ReplicationFixture()
                try fixture.randomWork(rounds: 20, seed: 1)
                let copy = try fixture.copyOfPrimary(named: "replica")
                try fixture.randomWork(rounds: 60, seed: 2)
                let publisher = try fixture.publisher()
                #expect(try publisher.publishPending() > 0)
                let (replica, follower) = try fixture.replica(at: copy)
                while try follower.applyAvailable(wait: .milliseconds(200)) > 0 {}
                #expect(try Contents(replica) == Contents(fixture.primary))
                #expect(try exportedModels(copy) == exportedModels(fixture.primary.path))
                #expect(try replica.lastHistoryToken() == fixture.primary.lastHistoryToken())
                let status = try follower.status()
                #expect(status.commitsBehind == 0)
                #expect(status.appliedToken == (try fixture.primary.lastHistoryToken()))
                // The replica's history is the primary's, entry for entry.
                let primaryEntries = try fixture.primary.history(after: nil).map(\.changes)
                #expect(try replica.history(after: nil).suffix(60).map(\.changes) == primaryEntries.suffix(60))
            }
        }

        @Test func writesThroughAContainerOfTheReplicaAreRefused() async throws {
            try await offPool {
                let fixture = try ReplicationFixture()
                let copy = try fixture.copyOfPrimary(named: "replica")
                let (replica, _) = try fixture.replica(at: copy)
                let context = ModelContext(replica)
                context.insert(Account(email: "x@example.com", name: "X"))
                #expect(throws: KVStoreError.readOnly) { try context.save() }
                #expect(throws: KVStoreError.readOnly) { try replica.enableHistory() }
                // A container opened after the store became a replica refuses writes from the start.
                let reopened = try ReplicationFixture.open(copy)
                let again = ModelContext(reopened)
                again.insert(Account(email: "y@example.com", name: "Y"))
                do {
                    try again.save()
                    Issue.record("a save through a container of a replica went through")
                } catch let error as KVStoreError {
                    #expect(error.kind == KVStoreError.readOnly.kind)
                    #expect(error.message.contains("is a replica of the stream 'ORDERS'"))
                }
                #expect(try ModelContext(reopened).fetchCount(FetchDescriptor<Account>()) == 0)
            }
        }

        @Test func theThreadsKeepAReplicaInStepWhileThePrimaryCommits() async throws {
            try await offPool {
                let fixture = try ReplicationFixture()
                let copy = try fixture.copyOfPrimary(named: "replica")
                var options = ReplicationPublisher.Options()
                options.pollInterval = .milliseconds(2)
                let publisher = try fixture.publisher(options)
                let (replica, follower) = try fixture.replica(at: copy)
                publisher.start()
                follower.start()
                defer {
                    publisher.stop()
                    follower.stop()
                }
                try fixture.randomWork(rounds: 150, seed: 3)
                let last = try fixture.primary.lastHistoryToken()
                let caughtUp = await eventually(timeout: .seconds(20)) { (try? replica.lastHistoryToken()) == last }
                #expect(caughtUp)
                #expect(try Contents(replica) == Contents(fixture.primary))
                #expect(try exportedModels(copy) == exportedModels(fixture.primary.path))
                #expect(publisher.status.lastError == nil)
            }
        }

        @Test func aChangeSetLargerThanAMessageGoesInPartsAndIsAppliedWhole() async throws {
            try await offPool {
                let fixture = try ReplicationFixture(serverConfiguration: "max_payload: 65536\n")
                let copy = try fixture.copyOfPrimary(named: "replica")
                let context = ModelContext(fixture.primary)
                let account = Account(email: "big@example.com", name: "Big")
                context.insert(account)
                for index in 0..<2_000 {
                    context.insert(Order(accountID: account.id, total: index, note: String(repeating: "n", count: 200)))
                }
                try context.save()
                let publisher = try fixture.publisher()
                let messages = try publisher.publishPending()
                #expect(messages > 5)
                let (replica, follower) = try fixture.replica(at: copy)
                // One message at a time: the replica applies nothing until it has every part.
                var options = Replica.Options()
                options.batch = 1
                let single = try Replica(
                    container: replica, stream: fixture.stream, jetStream: fixture.jetStream, options: options)
                for _ in 0..<(messages - 1) {
                    #expect(try single.applyAvailable(wait: .milliseconds(200)) == 0)
                    #expect(try ModelContext(replica).fetchCount(FetchDescriptor<Order>()) == 0)
                }
                #expect(try single.applyAvailable(wait: .milliseconds(200)) == 1)
                #expect(try ModelContext(replica).fetchCount(FetchDescriptor<Order>()) == 2_000)
                #expect(try Contents(replica) == Contents(fixture.primary))
                _ = follower
            }
        }

        @Test func aReplicaStoppedAnywhereGoesOnExactlyOnce() async throws {
            try await offPool {
                let fixture = try ReplicationFixture()
                let copied = try fixture.primary.lastHistoryToken().position
                let copy = try fixture.copyOfPrimary(named: "replica")
                try fixture.randomWork(rounds: 80, seed: 4)
                try fixture.publisher().publishPending()
                var options = Replica.Options()
                options.batch = 3
                // A new container and replica for every few messages, as after a restart.
                var applied = 0
                for _ in 0..<200 {
                    let container = try ReplicationFixture.open(copy)
                    let replica = try Replica(
                        container: container, stream: fixture.stream, jetStream: fixture.jetStream, options: options)
                    let count = try replica.applyAvailable(wait: .milliseconds(100))
                    applied += count
                    try container.close()
                    if count == 0 { break }
                }
                let replica = try ReplicationFixture.open(copy)
                #expect(try Contents(replica) == Contents(fixture.primary))
                #expect(UInt64(applied) == (try fixture.primary.lastHistoryToken().position) - copied)
            }
        }

        @Test func aGroupTheStreamHoldsOnlyPartsOfIsSentAgainWholeAndAppliedOnce() async throws {
            try await offPool {
                let fixture = try ReplicationFixture(serverConfiguration: "max_payload: 65536\n")
                let copy = try fixture.copyOfPrimary(named: "replica")
                let laterCopy = try fixture.copyOfPrimary(named: "later")
                let context = ModelContext(fixture.primary)
                let account = Account(email: "parts@example.com", name: "Parts")
                context.insert(account)
                for index in 0..<1_000 {
                    context.insert(Order(accountID: account.id, total: index, note: String(repeating: "p", count: 200)))
                }
                try context.save()
                let messages = try fixture.publisher().publishPending()
                #expect(messages >= 3)
                // The last part is lost, as if the publisher had been killed before it: the stream holds the others.
                let last = try fixture.jetStream.streamInfo(fixture.stream.name).state.lastSequence
                let reply = try fixture.connection.request(
                    subject: "$JS.API.STREAM.MSG.DELETE.\(fixture.stream.name)",
                    payload: Array("{\"seq\":\(last)}".utf8))
                #expect(String(decoding: reply.payload, as: UTF8.self).contains("\"success\":true"))
                // A replica reads the incomplete group and applies nothing of it.
                let (replica, follower) = try fixture.replica(at: copy)
                #expect(try follower.applyAvailable(wait: .milliseconds(200)) == 0)
                #expect(try ModelContext(replica).fetchCount(FetchDescriptor<Order>()) == 0)
                // The program restarts: the group goes out again, whole, after the parts the stream holds.
                #expect(try fixture.publisher().publishPending() == messages)
                #expect(
                    try fixture.jetStream.streamInfo(fixture.stream.name).state.messages == UInt64(2 * messages - 1))
                #expect(try follower.applyAvailable(wait: .milliseconds(200)) == 1)
                #expect(try Contents(replica) == Contents(fixture.primary))
                // A replica that starts now skips the incomplete group too.
                let (later, laterFollower) = try fixture.replica(at: laterCopy)
                #expect(try laterFollower.applyAvailable(wait: .milliseconds(200)) == 1)
                #expect(try Contents(later) == Contents(fixture.primary))
            }
        }

        @Test func aPublisherFarBehindCatchesUpInPassesReadingEachCommitOnce() async throws {
            try await offPool {
                let fixture = try ReplicationFixture()
                let copy = try fixture.copyOfPrimary(named: "replica")
                try fixture.insertAccounts(40, prefix: "backlog")
                try fixture.randomWork(rounds: 40, seed: 5)
                var options = ReplicationPublisher.Options()
                options.commitsPerPass = 7
                let publisher = try fixture.publisher(options)
                #expect(try publisher.publishPending() > 40 / 7)
                #expect(publisher.status.publishedToken == (try fixture.primary.lastHistoryToken()))
                let (replica, follower) = try fixture.replica(at: copy)
                while try follower.applyAvailable(wait: .milliseconds(200)) > 0 {}
                #expect(try Contents(replica) == Contents(fixture.primary))
                #expect(try exportedModels(copy) == exportedModels(fixture.primary.path))
            }
        }
    }
}
