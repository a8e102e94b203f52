import Foundation
import KVStore
import KVToolCore
import TestSupport

/// The two versions of the mixed-version scenario's program: notes, then notes with a word count that a custom
/// stage fills, one record at a time, slowly enough for writers and kills to meet it half-way.
enum MixedV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Note.self]

    struct Note: Model, Equatable {
        var id = UUID.timeOrdered()
        var title: String
        var body: String
        static let entity = Entity<Note>(indexes: [.index(\.title)])
    }
}

enum MixedV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Note.self]

    struct Note: Model, Equatable {
        var id: UUID
        var title: String
        var body: String
        var words: Int
        static let entity = Entity<Note>(indexes: [.index(\.title), .index(\.words)])
    }
}

enum MixedPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [MixedV1.self, MixedV2.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: MixedV1.self, toVersion: MixedV2.self,
            migrations: [
                .transform(MixedV1.Note.self, to: MixedV2.Note.self) { old in
                    usleep(300)
                    return MixedV2.Note(
                        id: old.id, title: old.title, body: old.body, words: old.body.split(separator: " ").count)
                }
            ])
    ]
    static let migrationChunkSize = 20
}

/// `crashtest mixed`: old-schema writers keep saving while a migration to the new schema runs and is killed with
/// SIGKILL at random points; then the migration finishes, a new-schema writer is killed at a random moment, and every
/// save an old writer saw commit must be there, migrated, with what the new writer committed and `kvtool check`
/// clean.
///
/// The old writers stop with a clear error (``KVStoreError/schemaChanged`` once the migration ended,
/// ``KVStoreError/migrationInProgress`` once a killed migration left the store half-way), never a crash.
///
/// The store records its change history from the seeding commit on (one round in four pruning to a few entries), and
/// both schemas' writers record theirs: after each round the history must end at the position the acknowledged
/// commits add up to, each entry kept must be the commit it stands for, and its net effect must agree with the notes
/// (``MixedHistory``).
final class MixedVersionRun {
    private let iterations: Int
    private var random: SplitMix64
    private let verbose: Bool
    private let directory: String
    private var problems: [String] = []
    private var acknowledged = 0
    private var newWrites = 0
    private var newInFlightCommitted = 0
    private var historyEntries = 0
    private var prunedRounds = 0
    private var migratorKills = 0
    /// Rounds whose killed migrations all died before they marked the store.
    private var killedBeforeStarting = 0
    private var writerEndings: [String: Int] = [:]

    init(iterations: Int, seed: UInt64, verbose: Bool) {
        self.iterations = iterations
        random = SplitMix64(seed: seed)
        self.verbose = verbose
        directory =
            URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "crashtest-mixed-\(seed)-\(getpid())"
            ).path
        print("crashtest mixed: \(iterations) iterations, seed \(seed), in \(directory)")
    }

    /// The configuration of every process: writes wait up to 10 s for a migration under way.
    static func configuration(_ path: String) -> ModelConfiguration {
        var configuration = ModelConfiguration(path: path, durability: .full, initialMapSize: 1 << 20)
        configuration.migrationWaitTimeout = .seconds(10)
        return configuration
    }

    /// Runs the iterations and returns the exit status.
    func run() -> Int32 {
        let started = ContinuousClock.now
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for iteration in 1...max(iterations, 1) where problems.isEmpty {
                try iterate(iteration)
            }
        } catch {
            problems.append("The mixed-version test failed: \(error)")
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let endings = writerEndings.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        print(
            """
            Iterations:            \(iterations)
            Migrations killed:     \(migratorKills) (in \(killedBeforeStarting) rounds all before they started, and one more ran)
            Saves acknowledged:    \(acknowledged), all present after the migration
            Old writers ended by:  \(endings.joined(separator: ", "))
            New-schema commits:    \(newWrites) acknowledged, \(newInFlightCommitted) committed in flight at the kill
            History:               \(historyEntries) entries checked, \(prunedRounds) rounds pruning to a few
            Time:                  \(String(format: "%.1f", seconds)) s
            Problems:              \(problems.count)
            """)
        for problem in problems { print("PROBLEM: \(problem)") }
        if problems.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
        return problems.isEmpty ? 0 : 1
    }

    private func iterate(_ iteration: Int) throws {
        let store = directory + "/store-\(iteration)"
        let seeded = (0..<300).map { MixedV1.Note(title: "seed \($0 % 20)", body: "one two three") }
        // Mostly the whole history; one round in four prunes to a few entries while writers and migrations run.
        let prunes = random.next() % 4 == 0
        let retention =
            prunes ? HistoryRetention(maximumAge: nil, maximumCount: 2 + Int(random.next() % 30)) : .unlimited
        if prunes { prunedRounds += 1 }
        do {
            let container = try ModelContainer(for: MixedV1.self, configuration: Self.configuration(store))
            try container.enableHistory(retention: retention)
            try container.write { txn in for note in seeded { try txn.insert(note) } }
            try container.close()
        }
        let writers = try (0..<2).map { _ in try LineChild(["old-writer", "--store", store]) }
        for writer in writers { _ = writer.waitForLine { $0 == "ready" } }
        usleep(UInt32(random.next() % 50_000))
        // None to three migrations killed at a random moment; with none, one runs to its end beside the writers.
        let kills = Int(random.next() % 4)
        for _ in 0..<kills {
            let migrator = try LineChild(["migrate", "--store", store])
            _ = migrator.waitForLine { $0 == "ready" }
            usleep(UInt32(20_000 + random.next() % 200_000))
            migrator.kill()
            migratorKills += 1
        }
        // Migrations killed before any marked the store leave it at the old schema, and the old writers would save
        // on to their millionth save: when they do not stop within two seconds, one migration runs to its end.
        var migrates = kills == 0
        if kills > 0, !writers.allSatisfy({ $0.ends(within: .seconds(2)) }) {
            killedBeforeStarting += 1
            migrates = true
        }
        if migrates {
            let migrator = try LineChild(["migrate", "--store", store])
            let ending = migrator.waitForExit()
            guard ending == "exit 0", migrator.lines.last == "migrated" else {
                problems.append("iteration \(iteration): the migration ended with \(ending): \(migrator.lines)")
                return
            }
        }
        var endings: [String] = []
        for writer in writers {
            let ending = writer.waitForExit()
            let last = writer.lines.last ?? ""
            let kind = last.hasPrefix("error ") ? String(last.dropFirst(6).prefix { $0 != " " }) : ending
            writerEndings[kind, default: 0] += 1
            endings.append(kind)
            guard ending == "exit 3", kind == "schemaChanged" || kind == "migrationInProgress" else {
                problems.append("iteration \(iteration): an old writer ended with \(ending), last line '\(last)'")
                return
            }
        }
        let saved = Set(writers.flatMap(\.acknowledged)).union(seeded.map(\.id))
        acknowledged += saved.count - seeded.count
        let historyText = prunes ? "history keeps \(retention.maximumCount ?? 0)" : "history keeps all"
        guard let operations = try runNewWriter(iteration, store: store) else { return }
        let committed = try checkRound(
            "iteration \(iteration) (\(historyText))", store: store, seeded: seeded.map(\.id),
            oldSaves: writers.map(\.acknowledged), newOperations: operations)
        if verbose {
            print(
                "iteration \(iteration): \(kills) migrations killed, \(saved.count - seeded.count) saves acknowledged, "
                    + "writers ended by \(endings.joined(separator: " and ")), \(committed) new-schema commits, "
                    + historyText)
        }
        try? FileManager.default.removeItem(atPath: store)
    }

    /// Checks the round's store once its writers are gone: the notes, the history, and `kvtool check`; returns how
    /// many commits the new-schema writer made.
    private func checkRound(
        _ context: String, store: String, seeded: [UUID], oldSaves: [[UUID]],
        newOperations operations: [NewSchemaWriter.Operation]
    ) throws -> Int {
        let container = try ModelContainer(
            for: MixedV2.self, migrationPlan: MixedPlan.self, configuration: Self.configuration(store))
        let stored = try ModelContext(container).fetch(FetchDescriptor<MixedV2.Note>())
        let notes = Dictionary(stored.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var committed = operations.filter(\.acknowledged)
        newWrites += committed.count
        if let last = operations.last, !last.acknowledged, last.committed(in: notes) {
            committed.append(last)
            newInFlightCommitted += 1
        }
        checkNotes(context, notes: notes, saved: Set(oldSaves.joined()).union(seeded), newOperations: committed)
        let history = MixedHistory(seeded: seeded, oldSaves: oldSaves, newOperations: committed)
        if let snapshot = try HistorySnapshot.read(from: container, path: store) {
            historyEntries += snapshot.entries.count
            problems += history.problems(in: snapshot, stored: Set(notes.keys)).map { "\(context): \($0)" }
        } else {
            problems.append("\(context): the store records no history after the migration")
        }
        try container.close()
        let checked = try CrashRun.integrityErrors(at: store)
        if !checked.isEmpty {
            problems.append("\(context): kvtool check: \(checked.joined(separator: "; "))")
        }
        return committed.count
    }

    /// Starts the new-schema writer, lets it write for up to 40 ms once it is ready, kills it, and returns the
    /// operations its lines tell; `nil` after a problem.
    private func runNewWriter(_ iteration: Int, store: String) throws -> [NewSchemaWriter.Operation]? {
        let writer = try LineChild(["new-writer", "--store", store, "--seed", String(random.next())])
        guard writer.waitForLine(where: { $0 == "ready" }) else {
            problems.append(
                "iteration \(iteration): the new-schema writer ended with \(writer.waitForExit()) before it was "
                    + "ready: \(writer.lines)")
            return nil
        }
        usleep(UInt32(random.next() % 40_000))
        writer.kill()
        let ending = writer.waitForExit()
        guard ending == "signal \(SIGKILL)" else {
            problems.append(
                "iteration \(iteration): the new-schema writer ended with \(ending) before the kill: "
                    + "\(writer.lines.suffix(3))")
            return nil
        }
        switch NewSchemaWriter.operations(in: writer.lines) {
        case .success(let operations): return operations
        case .failure(let error):
            problems.append("iteration \(iteration): \(error)")
            return nil
        }
    }

    /// Checks the notes after the round: every save an old-schema writer saw commit is there, migrated, but for
    /// those the new-schema writer deleted, and every commit of that writer shows.
    private func checkNotes(
        _ context: String, notes: [UUID: MixedV2.Note], saved: Set<UUID>,
        newOperations: [NewSchemaWriter.Operation]
    ) {
        var present = saved
        var deleted: Set<UUID> = []
        var titles: [UUID: String] = [:]
        for operation in newOperations {
            switch operation.kind {
            case .insert: present.insert(operation.id)
            case .update: titles[operation.id] = operation.title
            case .delete:
                present.remove(operation.id)
                deleted.insert(operation.id)
                titles[operation.id] = nil
            }
        }
        let missing = present.subtracting(notes.keys)
        if !missing.isEmpty {
            let example = missing.first.map { "\($0)" } ?? ""
            problems.append(
                "\(context): \(missing.count) acknowledged saves are missing, such as \(example)")
        }
        let undeleted = deleted.filter { notes[$0] != nil }
        if !undeleted.isEmpty {
            problems.append(
                "\(context): \(undeleted.count) notes the new-schema writer saw deleted are there, such as "
                    + "\(undeleted.first.map { "\($0)" } ?? "")")
        }
        if let (id, title) = titles.first(where: { notes[$0.key]?.title != $0.value }) {
            problems.append(
                "\(context): the note \(id) is titled '\(notes[id]?.title ?? "?")', not '\(title)' as the "
                    + "new-schema writer saw it updated")
        }
        if notes.values.contains(where: { $0.words != 3 }) {
            problems.append("\(context): a migrated note has a wrong word count")
        }
    }

    /// The old-schema writer child: saves notes one save each, printing each acknowledged ID, until a save fails.
    static func runOldWriter(store: String) throws -> Int32 {
        let container = try ModelContainer(for: MixedV1.self, configuration: configuration(store))
        LineChild.report("ready")
        do {
            for index in 0..<1_000_000 {
                let note = MixedV1.Note(title: "late \(index % 20)", body: "one two three")
                try container.write { txn in try txn.insert(note) }
                LineChild.report("saved \(note.id)")
                usleep(200)
            }
        } catch let error as KVStoreError {
            LineChild.report("error \(error.kind) \(error.message)")
            return 3
        }
        return 0
    }

    /// The migrating child.
    static func runMigration(store: String) throws -> Int32 {
        LineChild.report("ready")
        let container = try ModelContainer(
            for: MixedV2.self, migrationPlan: MixedPlan.self, configuration: configuration(store))
        try container.close()
        LineChild.report("migrated")
        return 0
    }
}
