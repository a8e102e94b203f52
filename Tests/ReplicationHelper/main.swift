import Foundation
import KVStore
import KVStoreReplication
import NATS

// The child process of the replication tests, killed at random moments by them:
//
//   ReplicationHelper primary <store> <nats-url> <stream> <rounds> [big]
//       commits `rounds` saves of new orders on the primary while its publisher runs on its own thread, printing
//       "committed <position>" after each save, then "published" once the stream holds them all.
//   ReplicationHelper replica <store> <nats-url> <stream>
//       applies the stream to the replica until it holds nothing more, printing "applied <position>" after each
//       batch, then "caught up".

struct Order: Model, Equatable {
    var id = UUID.timeOrdered()
    var accountID: UUID
    var total: Int
    var note = ""
    static let entity = Entity<Order>(indexes: [.index(\.accountID), .index(\.total)])
}

struct Account: Model, Equatable {
    var id = UUID.timeOrdered()
    var email: String
    var name: String
    static let entity = Entity<Account>(indexes: [.unique(\.email)])
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 5 else {
    FileHandle.standardError.write(
        Data("usage: ReplicationHelper primary|replica <store> <nats-url> <stream> [rounds]\n".utf8))
    exit(2)
}
let container = try ModelContainer(
    for: Account.self, Order.self, configuration: ModelConfiguration(path: arguments[2]))
let connection = try NATSConnection(servers: [arguments[3]])
let stream = ReplicationStream(name: arguments[4])
let jetStream = connection.jetStream(timeout: .seconds(5))

switch arguments[1] {
case "primary":
    let rounds = Int(arguments[5]) ?? 100
    var options = ReplicationPublisher.Options()
    options.pollInterval = .milliseconds(1)
    let publisher = try ReplicationPublisher(
        container: container, stream: stream, jetStream: jetStream, options: options)
    publisher.start()
    let context = ModelContext(container)
    let account = Account(email: "\(UUID())@example.com", name: "child")
    context.insert(account)
    try context.save()
    for round in 0..<rounds {
        // With "big", every fifth save is larger than a message of a small server, and goes in parts.
        let count = arguments.count > 6 && arguments[6] == "big" && round % 5 == 4 ? 120 : 3
        for index in 0..<count {
            context.insert(
                Order(accountID: account.id, total: round * 1_000 + index, note: String(repeating: "x", count: 200)))
        }
        try context.save()
        say("committed \(try container.lastHistoryToken().position)")
    }
    while publisher.status.publishedToken != (try container.lastHistoryToken()) {
        if publisher.status.isStopped, let error = publisher.status.lastError { throw error }
        Thread.sleep(forTimeInterval: 0.005)
    }
    publisher.stop()
    say("published")
case "replica":
    let replica = try Replica(container: container, stream: stream, jetStream: jetStream)
    while try replica.applyAvailable(wait: .milliseconds(300)) > 0 {
        say("applied \(try container.lastHistoryToken().position)")
    }
    say("caught up")
default:
    exit(2)
}
