import Foundation
import KVStore
import KVToolCore
import TestSupport

/// The parent of a crash test: starts writers, kills them at random moments, and checks the store after each kill.
///
/// Each iteration continues on the same store, so it grows, shrinks (the writer keeps it under
/// ``Writer/maximumTasks`` tasks) and is reopened after every kill, and damage that builds up over many crashes
/// would show; `--fresh-every K` starts a new store every K iterations instead. In every other block of five
/// iterations the parent keeps the store open while the writers run and die, so that a writer killed inside its
/// write transaction leaves LMDB's lock file as it was (a dead owner of the writer mutex, its reader slots) for the
/// next writer to recover from; in the other blocks the parent closes it, and the next opener starts afresh.
///
/// Every writer switches the store's change history on before its first transaction, most keeping all of it, some
/// pruning to a few entries or the last tenth of a second (``Writer/historyRetention(seed:)``); after each kill the
/// history is checked against the log too (``RunHistory``).
final class CrashRun {
    /// The configuration every process opens the store with: commits at `durability` (a killed process loses
    /// nothing at any level), and a small map that has to grow.
    static func configuration(path: String, durability: Durability = .full) -> ModelConfiguration {
        ModelConfiguration(path: path, durability: durability, initialMapSize: 1 << 20)
    }

    /// What `crashtest run` was asked to do.
    let options: RunCommand
    private var random: SplitMix64
    private let directory: String
    /// The current store's directory.
    private(set) var storePath = ""
    private var logPath = ""
    private var generation = 0

    /// The state the log says the store holds.
    private var expected = StoreState()
    /// The change history the log says the store holds.
    private let history = RunHistory()
    private var logOffset = 0
    private var lastSequence = 0
    /// The parent's container, while it keeps the store open across iterations.
    private var heldContainer: ModelContainer?

    private var iterationsRun = 0
    private var kills = 0
    private var killsBeforeReady = 0
    private var killsWhileHeld = 0
    private var verified = 0
    private var inFlightPresent = 0
    private var inFlightAbsent = 0
    private var expectedFailures = 0
    /// How many processes were killed inside a read transaction.
    var readerKills = 0
    /// How many of their slots were seen stale before the store was reopened.
    var staleSlotsSeen = 0
    /// The problems found; the run stops at the first.
    var problems: [String] = []

    /// A run with the options of `crashtest run`.
    init(options: RunCommand) {
        self.options = options
        random = SplitMix64(seed: options.seed)
        directory =
            options.directory
            ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "crashtest-\(options.seed)-\(getpid())"
            ).path
    }

    /// Runs the iterations, prints the report, and returns the exit status: 0 when no problem was found.
    func run() -> Int32 {
        print(
            "crashtest: \(options.iterations) iterations, seed \(options.seed), durability \(options.durability), in "
                + directory)
        let started = ContinuousClock.now
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for iteration in 1...max(options.iterations, 1) where problems.isEmpty {
                try iterate(iteration)
                iterationsRun = iteration
            }
            try closeHeldContainer()
        } catch {
            problems.append("The crash test failed: \(error)")
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print(
            """
            Iterations:             \(iterationsRun) of \(options.iterations)
            Writers killed:         \(kills) (\(killsBeforeReady) before they were ready, \(killsWhileHeld) while \
            the parent held the store open)
            Transactions verified:  \(verified) acknowledged, \(expectedFailures) refused as they must be
            In-flight at the kill:  \(inFlightPresent) wholly present, \(inFlightAbsent) wholly absent
            History entries:        \(history.entriesChecked) checked against their transactions, \
            \(history.entriesPrunedUnseen) pruned before a check, at most \(history.mostKept) kept
            Readers killed:         \(readerKills) (\(staleSlotsSeen) stale slots seen, all cleared on reopen)
            Time:                   \(String(format: "%.1f", seconds)) s
            Problems:               \(problems.count)
            """)
        for problem in problems { print("PROBLEM: \(problem)") }
        if problems.isEmpty {
            if options.directory == nil {
                try? FileManager.default.removeItem(atPath: directory)
            } else {
                try? FileManager.default.removeItem(atPath: storePath)
                try? FileManager.default.removeItem(atPath: logPath)
            }
            return 0
        }
        print("The store and its log are kept in \(directory); replay with --seed \(options.seed).")
        return 1
    }

    private func iterate(_ iteration: Int) throws {
        if iteration == 1 || (options.freshEvery > 0 && (iteration - 1) % options.freshEvery == 0) {
            try startFreshStore()
        }
        let holds = (iteration - 1) / 5 % 2 == 1
        if holds, heldContainer == nil {
            heldContainer = try ModelContainer(
                for: crashModelTypes, configuration: Self.configuration(path: storePath, durability: options.durability)
            )
        } else if !holds {
            try closeHeldContainer()
        }
        let seed = SplitMix64.derive(options.seed, iteration)
        let beforeReady = Int.random(in: 0..<10, using: &random) == 0
        let delay = Int.random(in: 0...options.maximumDelay, using: &random)
        let writer = try Child([
            "writer", "--store", storePath, "--log", logPath, "--seed", String(seed), "--last-sequence",
            String(lastSequence), "--durability", options.durability.description,
        ])
        let context = "iteration \(iteration) (writer seed \(seed), history \(Writer.historyRetentionText(seed: seed)))"
        if beforeReady {
            usleep(UInt32(delay) * 100)
            killsBeforeReady += 1
        } else {
            guard writer.waitUntilReady() else {
                writer.kill()
                problems.append("\(context): the writer ended before it was ready, \(writer.ending)")
                return
            }
            usleep(UInt32(delay) * 1000)
        }
        writer.kill()
        kills += 1
        if holds { killsWhileHeld += 1 }
        guard writer.ending == "killed" else {
            problems.append("\(context): the writer ended by itself before the kill, \(writer.ending)")
            return
        }
        let before = verified
        try verify(context)
        if options.verbose {
            print(
                "\(context): killed after \(beforeReady ? "0.\(delay / 10)" : String(delay)) ms, "
                    + "\(verified - before) transactions verified, \(expected.count) records")
        }
        if options.readerEvery > 0, iteration % options.readerEvery == 0, problems.isEmpty {
            try closeHeldContainer()
            try killReader(context)
        }
    }

    private func startFreshStore() throws {
        try closeHeldContainer()
        if !storePath.isEmpty {
            try FileManager.default.removeItem(atPath: storePath)
            try FileManager.default.removeItem(atPath: logPath)
        }
        generation += 1
        storePath = directory + "/store-\(generation)"
        logPath = directory + "/log-\(generation).jsonl"
        expected = StoreState()
        history.reset()
        logOffset = 0
        lastSequence = 0
    }

    private func closeHeldContainer() throws {
        try heldContainer?.close()
        heldContainer = nil
    }

    // MARK: - Verification

    /// Reads the log's new lines, runs the integrity check, and compares the store with the expected state.
    private func verify(_ context: String) throws {
        let (lines, end) = try ExpectationLog.lines(at: logPath, from: logOffset)
        try ExpectationLog.truncate(path: logPath, to: end)
        logOffset = end
        var pending: LogLine?
        for line in lines {
            switch line.kind {
            case .intent:
                guard pending == nil, line.sequence == lastSequence + 1, line.delta != nil else {
                    problems.append("\(context): the log has an unexpected intent for transaction \(line.sequence)")
                    return
                }
                pending = line
            case .commit, .failed:
                guard let intent = pending, intent.sequence == line.sequence,
                    (line.kind == .failed) == (intent.mustFail == true)
                else {
                    problems.append("\(context): the log has an unexpected \(line.kind) of \(line.sequence)")
                    return
                }
                if line.kind == .commit, let delta = intent.delta {
                    history.committed(intent, delta: delta, before: expected)
                    expected.apply(delta)
                    verified += 1
                } else {
                    expectedFailures += 1
                }
                lastSequence = line.sequence
                pending = nil
            case .present, .absent:
                problems.append("\(context): the writer wrote a line only the parent writes")
                return
            }
        }

        // A writer killed before it created the store (a loaded machine can be that slow to start one) leaves no
        // data file, and cannot have committed anything.
        if heldContainer == nil && !FileManager.default.fileExists(atPath: storePath + "/data.mdb") {
            if lastSequence > 0 {
                problems.append("\(context): the data file is gone after \(lastSequence) acknowledged transactions")
            }
            return
        }
        // A writer killed while it created the store can leave an LMDB environment without the catalog, which
        // `kvtool check` refuses as no store: nothing was committed, and the next open makes it a store. So when
        // nothing can have been, the parent opens it first: that open must succeed.
        if heldContainer == nil && lastSequence == 0 && pending == nil {
            try ModelContainer(
                for: crashModelTypes, configuration: Self.configuration(path: storePath, durability: options.durability)
            ).close()
        }

        // A writer killed inside its commit, after it wrote the meta page but before it published the new
        // transaction ID in the lock file, leaves a commit that processes which keep the store open do not see yet.
        // The next writer to take the writer lock recovers it from its dead owner, adopts the newest meta page, and
        // the transaction appears. An empty write takes the lock, so what is read next is what every later reader
        // sees. (A process that opens the store alone resets the lock file from the meta pages anyway.)
        try heldContainer?.write { _ in }

        let output = StringSink()
        let errors = StringSink()
        let status = KVTool.run(arguments: ["check", storePath], console: Console(output: output, errors: errors))
        guard status == 0 else {
            problems.append("\(context): kvtool check failed with status \(status):\n\(output.text)\(errors.text)")
            return
        }

        let container =
            try heldContainer
            ?? ModelContainer(
                for: crashModelTypes, configuration: Self.configuration(path: storePath, durability: options.durability)
            )
        defer { if heldContainer == nil { try? container.close() } }
        let actual = try StoreState.read(from: container)
        guard let intent = pending, let delta = intent.delta else {
            if actual != expected {
                problems.append(
                    "\(context): the store differs from the log's \(lastSequence) transactions:\n    "
                        + expected.differences(from: actual))
                return
            }
            problems += try history.check(context, container: container, path: storePath, state: actual)
            return
        }
        let after = expected.applying(delta)
        let found: LogLine.Kind
        if actual == expected {
            found = .absent
            inFlightAbsent += 1
        } else if actual == after, intent.mustFail != true {
            found = .present
            history.committed(intent, delta: delta, before: expected)
            expected = after
            inFlightPresent += 1
        } else {
            problems.append(
                "\(context): the store holds part of the in-flight transaction \(intent.sequence) "
                    + "(\(intent.operation ?? "?")), or something else.\n  Compared with the state before it:\n    "
                    + expected.differences(from: actual) + "\n  Compared with the state after it:\n    "
                    + after.differences(from: actual))
            return
        }
        lastSequence = intent.sequence
        try ExpectationLog(appendingTo: logPath).append(LogLine(kind: found, sequence: intent.sequence))
        logOffset = try Self.fileSize(logPath)
        problems += try history.check(context, container: container, path: storePath, state: actual)
    }

    /// The errors kvtool's integrity check finds in the store at `path`, run in-process.
    static func integrityErrors(at path: String) throws -> [String] {
        let output = StringSink()
        let errors = StringSink()
        let status = KVTool.run(arguments: ["check", path], console: Console(output: output, errors: errors))
        return status == 0 ? [] : ["status \(status): \(output.text)\(errors.text)"]
    }

    private static func fileSize(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }
}
