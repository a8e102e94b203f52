import Foundation
import KVStore
import KVStoreReplication
import KVToolCore
import NATS
import NATSTestSupport
import Testing

/// An account, with a unique email.
struct Account: Model, Equatable {
    var id = UUID.timeOrdered()
    var email: String
    var name: String
    static let entity = Entity<Account>(indexes: [.unique(\.email)])
}

/// An order of an account, indexed by it.
struct Order: Model, Equatable {
    var id = UUID.timeOrdered()
    var accountID: UUID
    var total: Int
    var note = ""
    static let entity = Entity<Order>(indexes: [.index(\.accountID), .index(\.total)])
}

/// A primary with history, a NATS server with the stream, and what a test needs to make replicas of the primary.
final class ReplicationFixture: Sendable {
    let directory: URL
    let server: NATSServer
    let connection: NATSConnection
    let jetStream: JetStream
    let stream: ReplicationStream
    let primary: ModelContainer

    init(
        streamName: String = "ORDERS", configuration: StreamConfiguration? = nil, serverConfiguration: String? = nil
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("replication-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        server = try NATSServer(configuration: serverConfiguration)
        connection = try NATSConnection(servers: [server.url], options: testOptions())
        jetStream = connection.jetStream()
        stream = ReplicationStream(name: streamName)
        _ = try jetStream.createStream(configuration ?? stream.configuration())
        primary = try Self.open(directory.appendingPathComponent("primary").path)
        try primary.enableHistory()
    }

    deinit {
        connection.close()
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    static func open(_ path: String) throws -> ModelContainer {
        try ModelContainer(for: Account.self, Order.self, configuration: ModelConfiguration(path: path))
    }

    /// A copy of the primary's store as it is now, the way a replica starts.
    func copyOfPrimary(named name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try primary.environment.copy(to: path)
        return path
    }

    /// Opens a copy of the primary as a replica of the stream.
    func replica(at path: String) throws -> (ModelContainer, Replica) {
        let container = try Self.open(path)
        return (container, try Replica(container: container, stream: stream, jetStream: jetStream))
    }

    func publisher(_ options: ReplicationPublisher.Options = .init()) throws -> ReplicationPublisher {
        try ReplicationPublisher(container: primary, stream: stream, jetStream: jetStream, options: options)
    }

    /// Commits `count` saves of one new account each: commits that change no model twice, so that each goes out as
    /// a group of its own.
    func insertAccounts(_ count: Int, prefix: String) throws {
        let context = ModelContext(primary)
        for index in 0..<count {
            context.insert(Account(email: "\(prefix)\(index)@example.com", name: prefix))
            try context.save()
        }
    }

    /// Commits a random workload of `rounds` saves on the primary: new accounts and orders, updated totals, deleted
    /// orders, an email moved from one account to another.
    func randomWork(rounds: Int, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let context = ModelContext(primary)
        for round in 0..<rounds {
            let accounts = try context.fetch(FetchDescriptor<Account>())
            let orders = try context.fetch(FetchDescriptor<Order>())
            switch random.next() % 5 {
            case 0, 1:
                let account = Account(email: "a\(seed)-\(round)@example.com", name: "A\(round)")
                context.insert(account)
                for index in 0..<Int(random.next() % 4) {
                    context.insert(Order(accountID: account.id, total: Int(random.next() % 1000), note: "\(index)"))
                }
            case 2 where !orders.isEmpty:
                var order = orders[Int(random.next() % UInt64(orders.count))]
                order.total += 1
                context.insert(order)
            case 3 where !orders.isEmpty:
                context.delete(orders[Int(random.next() % UInt64(orders.count))])
            case 4 where accounts.count >= 2:
                var from = accounts[Int(random.next() % UInt64(accounts.count))]
                var to = accounts[Int(random.next() % UInt64(accounts.count))]
                guard from.id != to.id else { continue }
                let email = from.email
                from.email = "moved-\(round)-\(seed)@example.com"
                context.insert(from)
                try context.save()
                to.email = email
                context.insert(to)
            default:
                context.insert(Account(email: "b\(seed)-\(round)@example.com", name: "B\(round)"))
            }
            try context.save()
        }
    }
}

/// Every model of both entities, sorted, and the answers of the indexes: what two stores with the same data agree on.
struct Contents: Equatable {
    var accounts: [Account]
    var orders: [Order]
    var byEmail: [String: UUID]
    var orderCounts: [UUID: Int]

    init(_ container: ModelContainer) throws {
        let context = ModelContext(container)
        accounts = try context.fetch(FetchDescriptor<Account>(sortBy: [SortDescriptor(\.id)]))
        orders = try context.fetch(FetchDescriptor<Order>(sortBy: [SortDescriptor(\.id)]))
        var byEmail: [String: UUID] = [:]
        var orderCounts: [UUID: Int] = [:]
        for account in accounts {
            let email = account.email
            byEmail[email] = try context.fetch(FetchDescriptor<Account>(predicate: #Predicate { $0.email == email }))
                .first?.id
            let id = account.id
            orderCounts[id] = try context.fetchCount(
                FetchDescriptor<Order>(predicate: #Predicate { $0.accountID == id }))
        }
        self.byEmail = byEmail
        self.orderCounts = orderCounts
    }
}

/// SplitMix64, for workloads a seed repeats.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The lines of `kvtool export` of the store at `path`, run in-process, but the header (which names the path and the
/// time): two stores that hold the same models export the same lines.
func exportedModels(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
    let output = StringSink()
    let errors = StringSink()
    let status = KVTool.run(
        arguments: ["export", path], console: Console(output: output, errors: errors, outputIsTerminal: false))
    try #require(status == 0, "kvtool export \(path): \(errors.text)", sourceLocation: sourceLocation)
    return Array(output.text.split(separator: "\n").dropFirst().map(String.init))
}

/// The suites of the replication tests, run one test at a time: each starts NATS servers, stores and often child
/// processes, which is load enough for a two-core machine. Their bodies run off the cooperative pool (``offPool(_:)``),
/// so that their blocking never starves the async tests of the other targets, which share the test process.
@Suite(.requiresNATSServer, .serialized)
enum ReplicationSuites {}
