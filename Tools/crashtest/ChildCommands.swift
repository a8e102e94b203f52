import CommandLineKit
import Foundation
import KVStore

// The hidden subcommands that crashtest starts as its child processes; each tells its parent it is ready with a line
// on standard output. They are parsed like the others, so a parent that passes a wrong option fails loudly.

/// `crashtest writer`: writes random transactions to the store, logging each, until it is killed (or for a minute).
struct WriterCommand: CrashTestCommand {
    static let configuration = CommandConfiguration(
        name: "writer", abstract: "Write random transactions, logging each, until killed (a child of 'run').",
        isHidden: true)

    /// The options of `crashtest writer`.
    struct Arguments: ParsableArguments {
        let store = CommonOptions.store
        let log = Option<String>("log", valueName: "path", help: "The expectation log to append to.")
        let seed = Option<UInt64>("seed", valueName: "s", help: "The seed of the writer's transactions.", default: 0)
        let lastSequence = Option<Int>(
            "last-sequence", valueName: "n", help: "How many transactions the log holds so far.", default: 0,
            parser: .integer(in: 0...))
        let durability = CommonOptions.durability
    }

    let store: String
    let log: String
    let seed: UInt64
    let lastSequence: Int
    let durability: Durability

    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        store = try arguments[\.store]
        log = try arguments[\.log]
        seed = try arguments[\.seed]
        lastSequence = try arguments[\.lastSequence]
        durability = try arguments[\.durability]
    }

    func run() throws -> Int32 {
        let container = try openCrashStore(store, durability: durability)
        // Before the first transaction, so that every transaction of the store has its entry.
        try container.enableHistory(retention: Writer.historyRetention(seed: seed))
        let writer = try Writer(
            container: container, log: try ExpectationLog(appendingTo: log), lastSequence: lastSequence, seed: seed)
        Child.signalReady()
        try writer.run(until: .now + .seconds(60))
        return 0
    }
}

/// `crashtest read`: holds a read transaction open until it is killed (or for a minute).
struct ReadCommand: StoreChildCommand {
    static let configuration = CommandConfiguration(
        name: "read", abstract: "Hold a read transaction open until killed (a child of 'run').", isHidden: true)

    /// The store's directory.
    let store: String

    func run() throws -> Int32 {
        let container = try openCrashStore(store)
        try container.read { _ in
            Child.signalReady()
            Thread.sleep(forTimeInterval: 60)
        }
        return 0
    }
}

/// `crashtest hold`: keeps the store open until it is killed (or for a minute).
struct HoldCommand: StoreChildCommand {
    static let configuration = CommandConfiguration(
        name: "hold", abstract: "Keep the store open until killed (a child of 'run').", isHidden: true)

    /// The store's directory.
    let store: String

    func run() throws -> Int32 {
        let container = try openCrashStore(store)
        Child.signalReady()
        Thread.sleep(forTimeInterval: 60)
        try container.close()
        return 0
    }
}

/// `crashtest old-writer`: saves notes of the old schema, one save each, until a save fails.
struct OldWriterCommand: StoreChildCommand {
    static let configuration = CommandConfiguration(
        name: "old-writer", abstract: "Save old-schema notes until a save fails (a child of 'mixed').",
        isHidden: true)

    /// The store's directory.
    let store: String

    func run() throws -> Int32 {
        try MixedVersionRun.runOldWriter(store: store)
    }
}

/// `crashtest migrate`: opens the store with the new schema, which migrates it.
struct MigrateCommand: StoreChildCommand {
    static let configuration = CommandConfiguration(
        name: "migrate", abstract: "Migrate the store to the new schema (a child of 'mixed').", isHidden: true)

    /// The store's directory.
    let store: String

    func run() throws -> Int32 {
        try MixedVersionRun.runMigration(store: store)
    }
}

/// `crashtest new-writer`: inserts, updates and deletes notes of the new schema, one commit each, until killed.
struct NewWriterCommand: CrashTestCommand {
    static let configuration = CommandConfiguration(
        name: "new-writer", abstract: "Write new-schema notes, one commit each, until killed (a child of 'mixed').",
        isHidden: true)

    /// The options of `crashtest new-writer`.
    struct Arguments: ParsableArguments {
        let store = CommonOptions.store
        let seed = Option<UInt64>("seed", valueName: "s", help: "The seed of the writer's choices.", default: 0)
    }

    let store: String
    let seed: UInt64

    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        store = try arguments[\.store]
        seed = try arguments[\.seed]
    }

    func run() throws -> Int32 {
        try NewSchemaWriter.run(store: store, seed: seed)
    }
}

/// The arguments of the children that take only the store's directory.
struct StoreArguments: ParsableArguments {
    let store = CommonOptions.store
}

/// A child process of the crash test that takes only the store's directory (`--store`).
protocol StoreChildCommand: CrashTestCommand where Arguments == StoreArguments {
    /// The child for the store at `store`.
    init(store: String)
}

extension StoreChildCommand {
    /// Reads `--store`.
    init(_ arguments: ParsedArguments<StoreArguments>) throws(UsageError) {
        self.init(store: try arguments[\.store])
    }
}

/// Opens the crash test's store the way every process of `crashtest run` does, its commits waiting for the disk as
/// `durability` says.
private func openCrashStore(_ path: String, durability: Durability = .full) throws -> ModelContainer {
    try ModelContainer(for: crashModelTypes, configuration: CrashRun.configuration(path: path, durability: durability))
}
