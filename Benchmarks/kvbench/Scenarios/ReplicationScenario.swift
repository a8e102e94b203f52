import Foundation
@_spi(Benchmarking) import KVStore
import KVStoreReplication
import LMDB
import NATS
import NATSServerProcess

/// Replication on loopback: kvbench's insert and update workloads on a primary whose publisher sends its history to
/// a JetStream stream while a replica (another store, in this process) follows, for one NATS node and for a cluster
/// of three with a stream of three replicas.
///
/// The subject's time runs from the first commit until the replica applied the last one; its latencies are each
/// commit's lag, from the commit to the moment the replica showed it (polled every 100 µs). The baseline is the same
/// commits with history on and nothing replicated. Commits hold 1,000 tasks each, as fast as the primary makes them
/// (the lag then counts the queue of commits replication has yet to catch up with); the paced insert commits 100
/// tasks every 5 ms (20,000 tasks a second, which replication keeps up with), so that its lag is a commit's way
/// through publisher, stream and replica. Primary, replica, publisher and the NATS servers share the machine's cores.
/// Without `nats-server` the scenario is skipped with a warning (`make deps` installs it).
struct ReplicationScenario: Scenario {
    /// Tasks per commit of the insert and the update.
    static let commitSize = 1_000
    /// The most measured runs of each side: a replicated run starts a stream, copies the store and runs three
    /// threads, and the scenario's share of `make bench` stays under a minute.
    static let maximumRepeats = 3

    private enum Work: String {
        case insert
        case update
        case pacedInsert = "paced insert"

        /// Tasks per commit.
        var commitSize: Int { self == .pacedInsert ? 100 : ReplicationScenario.commitSize }
        /// The time from one commit's start to the next one's, if paced.
        var period: Duration? { self == .pacedInsert ? .milliseconds(5) : nil }
        /// The tasks a run commits, of the scenario's `count`.
        func objects(of count: Int) -> Int { self == .pacedInsert ? min(count, 10_000) : count }
    }

    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        guard Subject.recordsHistory else { return [] }
        guard NATSServer.executable != nil else {
            context.announce("replication: skipped, nats-server is not installed ('make deps' installs it)")
            return []
        }
        let count = context.sizes.insertCount
        let dataset = try Dataset(projectCount: count / Dataset.tasksPerProject, seed: ScenarioContext.seed)
        var results: [ScenarioResult] = []
        for nodes in [1, 3] {
            context.announce("replication: \(count) tasks inserted, then updated, on \(nodes) NATS node(s)")
            let servers: [NATSServer] = nodes == 1 ? [try NATSServer(name: "bench")] : try NATSCluster().servers
            defer { for server in servers { server.stop() } }
            let connection = try NATSConnection(servers: servers.map(\.url))
            defer { connection.close() }
            let bench = Bench(
                context: context, dataset: dataset, count: count,
                jetStream: connection.jetStream(timeout: .seconds(10)),
                nodes: nodes)
            for work in [Work.insert, .update, .pacedInsert] {
                let measured = try Runner.measure(
                    [bench.workload(work, replicated: true), bench.workload(work, replicated: false)],
                    repeats: min(context.options.repeats, Self.maximumRepeats))
                results.append(
                    ScenarioResult(
                        scenario: ScenarioKind.replication.rawValue,
                        variant: "\(work.rawValue), \(nodes == 1 ? "1 node" : "3 nodes")",
                        records: work.objects(of: count),
                        durability: context.options.durability, idOrder: .timeOrdered, baselineKind: .unreplicated,
                        subject: measured[0], baseline: measured[1]))
            }
        }
        return results
    }

    /// The runs of one topology.
    private final class Bench {
        let context: ScenarioContext
        let dataset: Dataset
        let count: Int
        let jetStream: JetStream
        let nodes: Int
        private var streams = 0

        init(context: ScenarioContext, dataset: Dataset, count: Int, jetStream: JetStream, nodes: Int) {
            self.context = context
            self.dataset = dataset
            self.count = count
            self.jetStream = jetStream
            self.nodes = nodes
        }

        func workload(_ work: Work, replicated: Bool) -> Workload {
            let objects = work.objects(of: count)
            let commits = (objects + work.commitSize - 1) / work.commitSize
            return Workload(
                name: replicated ? "replicated" : "history on", latencyUnit: replicated ? "commit lag" : "commit",
                objectsPerRun: objects, operationsPerRun: commits
            ) { recorder in
                try self.run(work, replicated: replicated, recorder: recorder)
            }
        }

        private func open(_ path: String) throws -> ModelContainer {
            var configuration = ModelConfiguration(
                path: path, durability: context.options.durability.storeDurability,
                initialMapSize: context.settings(records: count).mapSize)
            configuration.usesFieldCodable = context.options.coding == .fields
            return try ModelContainer(for: TaskRecord.self, ProjectRecord.self, configuration: configuration)
        }

        private func run(_ work: Work, replicated: Bool, recorder: RunRecorder) throws -> Int {
            let workspace = context.workspace
            let primaryPath = try workspace.makeDirectory("primary")
            let replicaPath = try workspace.makeDirectory("replica")
            defer {
                try? workspace.remove(primaryPath)
                try? workspace.remove(replicaPath)
            }
            let primary = try open(primaryPath)
            defer { try? primary.close() }
            try primary.enableHistory()
            let chunk = work.commitSize
            let count = work.objects(of: self.count)
            try primary.write { txn in for project in dataset.projects { try txn.insert(project) } }
            if work == .update {
                for start in stride(from: 0, to: count, by: chunk) {
                    try primary.write { txn in
                        for task in dataset.tasks[start..<min(start + chunk, count)] { try txn.insert(task) }
                    }
                }
            }
            var follower: Follower?
            if replicated {
                try FileManager.default.removeItem(atPath: replicaPath)
                try primary.environment.copy(to: replicaPath)
                streams += 1
                follower = try Follower(
                    primary: primary, replica: try open(replicaPath), jetStream: jetStream,
                    stream: ReplicationStream(name: "BENCH\(streams)"), nodes: nodes)
            }
            var committed: [(position: UInt64, nanoseconds: UInt64)] = []
            committed.reserveCapacity(count / chunk + 1)
            recorder.timed {
                let clock = ContinuousClock()
                let begin = clock.now
                for (index, start) in stride(from: 0, to: count, by: chunk).enumerated() {
                    let range = start..<min(start + chunk, count)
                    if let period = work.period {
                        let due = begin + period * index
                        let wait = due - clock.now
                        if wait > .zero {
                            let (seconds, attoseconds) = wait.components
                            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
                        }
                    }
                    do {
                        try primary.write { txn in
                            for task in dataset.tasks[range] {
                                var task = task
                                if work == .update { task.isDone.toggle() }
                                try txn.insert(task)
                            }
                        }
                        committed.append((try primary.lastHistoryToken().position, Clock.nanoseconds()))
                    } catch {
                        FileHandle.standardError.write(Data("kvbench: replication commit failed: \(error)\n".utf8))
                    }
                }
                if let follower, let last = committed.last { follower.wait(for: last.position) }
            }
            guard committed.count == (count + chunk - 1) / chunk else {
                throw Runner.CountMismatch(description: "replication: \(committed.count) commits of \(count / chunk)")
            }
            if let follower {
                let seen = follower.finish()
                for commit in committed {
                    let at = seen[commit.position] ?? Clock.nanoseconds()
                    recorder.record(latency: at > commit.nanoseconds ? at - commit.nanoseconds : 0)
                }
                try follower.check(against: primary)
            } else {
                for (index, commit) in committed.enumerated() {
                    let previous = index == 0 ? commit.nanoseconds : committed[index - 1].nanoseconds
                    recorder.record(latency: commit.nanoseconds - previous)
                }
            }
            return count
        }
    }

    /// A publisher and a replica running while the primary commits, and a thread that notes when each commit shows
    /// on the replica.
    private final class Follower: Sendable {
        let publisher: ReplicationPublisher
        let replica: Replica
        let replicaContainer: ModelContainer
        let stream: ReplicationStream
        let jetStream: JetStream
        private let seen = Locked<(positions: [UInt64: UInt64], last: UInt64, stop: Bool)>(([:], 0, false))
        private let watching = Locked(true)

        init(
            primary: ModelContainer, replica replicaContainer: ModelContainer, jetStream: JetStream,
            stream: ReplicationStream, nodes: Int
        ) throws {
            self.stream = stream
            self.jetStream = jetStream
            self.replicaContainer = replicaContainer
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                do {
                    _ = try jetStream.createStream(stream.configuration(replicas: nodes))
                    break
                } catch  where ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
            var options = ReplicationPublisher.Options()
            options.pollInterval = .milliseconds(1)
            publisher = try ReplicationPublisher(
                container: primary, stream: stream, jetStream: jetStream, options: options)
            replica = try Replica(container: replicaContainer, stream: stream, jetStream: jetStream)
            let start = try replicaContainer.lastHistoryToken().position
            seen.withLock { $0.last = start }
            publisher.start()
            replica.start()
            let seen = self.seen
            let watching = self.watching
            Thread { [replicaContainer] in
                while !seen.withLock({ $0.stop }) {
                    if let position = try? replicaContainer.lastHistoryToken().position {
                        let now = Clock.nanoseconds()
                        seen.withLock { state in
                            guard position > state.last else { return }
                            for reached in (state.last + 1)...position { state.positions[reached] = now }
                            state.last = position
                        }
                    }
                    usleep(100)
                }
                watching.withLock { $0 = false }
            }.start()
        }

        /// Waits until the replica shows `position` (at most two minutes).
        func wait(for position: UInt64) {
            let deadline = ContinuousClock.now + .seconds(120)
            while seen.withLock({ $0.last }) < position, ContinuousClock.now < deadline { usleep(100) }
        }

        /// Stops everything, and returns when each commit showed on the replica.
        func finish() -> [UInt64: UInt64] {
            seen.withLock { $0.stop = true }
            while watching.withLock({ $0 }) { usleep(100) }
            publisher.stop()
            replica.stop()
            try? jetStream.deleteStream(stream.name)
            return seen.withLock { $0.positions }
        }

        /// Checks that the replica holds what the primary holds.
        func check(against primary: ModelContainer) throws {
            defer { try? replicaContainer.close() }
            let replicated = try replicaContainer.read { txn in try txn.fetchCount(FetchDescriptor<TaskRecord>()) }
            let expected = try primary.read { txn in try txn.fetchCount(FetchDescriptor<TaskRecord>()) }
            guard replicated == expected,
                try replicaContainer.lastHistoryToken() == (try primary.lastHistoryToken())
            else {
                throw Runner.CountMismatch(
                    description: "replication: the replica holds \(replicated) tasks, the primary \(expected)")
            }
        }
    }
}
