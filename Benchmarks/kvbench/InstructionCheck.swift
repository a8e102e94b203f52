import CLMDB
import CommandLineKit
import Foundation
import KVStore

#if canImport(Glibc)
    import Glibc
#endif

/// `make bench-check`: the instructions each operation of a small fixed workload costs, counted by callgrind, against
/// a baseline committed in the repository. Wall time on a shared virtual machine moves by ±10% from run to run; the
/// instruction counts of a fixed workload, run from the same place with the same environment, repeat exactly (within
/// about 1% from another checkout, whose binary differs in its embedded paths), so a growth of more than 5% is a
/// change of the code, not noise.
///
/// The parent (`kvbench --instructions <baseline.json> [--update]`, outside the option parser like ``ChildProcess``)
/// runs each ``Workload`` in a child kvbench under `valgrind --tool=callgrind`, which counts only inside
/// ``measured(_:)`` (`--toggle-collect`): neither the setup of a workload (its dataset, its filled store) nor a first
/// pass of it, which does the runtime's one-time work, is counted. It then prints instructions per operation (the
/// median of three runs) beside the baseline's and fails (status 1) when one grew by more than ``tolerance``. The
/// counts depend on the compiler, the C library and LMDB, so a baseline made with other versions is not compared: the
/// check says so and passes. `--update` writes the baseline instead; it is updated only on purpose, with the change
/// that moved the counts.
enum InstructionCheck {
    /// The hidden first argument of the parent.
    static let flag = "--instructions"
    /// The hidden first argument of a child that runs one workload.
    static let workloadFlag = "--instruction-workload"
    /// The largest growth of instructions per operation that passes.
    static let tolerance = 0.05

    /// What the counts depend on, recorded with the baseline.
    struct Versions: Codable, Equatable {
        var toolchain: String
        var glibc: String
        var lmdb: String

        static var current: Versions {
            let machine = Machine.current()
            return Versions(
                toolchain: machine.swiftVersion, glibc: libcVersion, lmdb: machine.lmdbVersion)
        }

        /// The C library's version, `glibc 2.36`.
        private static var libcVersion: String {
            var buffer = [CChar](repeating: 0, count: 64)
            let length = confstr(Int32(_CS_GNU_LIBC_VERSION), &buffer, buffer.count)
            guard length > 0, length <= buffer.count else { return "unknown" }
            return String(decoding: buffer.prefix(length - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The committed baseline: instructions per operation of each workload, and the versions that counted them.
    struct Baseline: Codable {
        var versions: Versions
        var instructionsPerOperation: [String: Double]
    }

    /// One fixed piece of work: a store prepared outside the count, and operations counted in it.
    struct Workload: Sendable {
        /// The name in the table and in the baseline.
        var name: String
        /// How many operations ``run`` does.
        var operations: Int
        /// Prepares the store (not counted), then calls its argument with the counted work.
        var run: @Sendable (_ counted: (() throws -> Void) throws -> Void) throws -> Void
    }

    /// 200 projects and their 2,000 tasks, from the scenarios' seed.
    private static func dataset() throws -> Dataset {
        try Dataset(projectCount: 200, seed: ScenarioContext.seed)
    }

    /// Opens a fresh store through the KVStore subject, filled with `dataset` (tasks included unless not
    /// `includingTasks`), and calls `body` with it; the store is removed afterwards.
    private static func withStore(
        _ dataset: Dataset, includingTasks: Bool = true, _ body: (StoreSubject) throws -> Void
    ) throws {
        let workspace = try Workspace()
        let directory = try workspace.makeDirectory("instructions")
        let subject = try StoreSubject(
            directory: directory,
            settings: StoreSettings(mapSize: 64 << 20, durability: .noSync, coding: .fields))
        defer { try? subject.close() }
        try dataset.fill(subject, chunkSize: 1_000, includingTasks: includingTasks)
        try body(subject)
    }

    /// Fills a fresh store with `dataset`'s projects (and its tasks when `includingTasks`) through the class/struct
    /// comparison's struct twins, opens it for `models` (``TaskObject`` and ``ProjectObject``, or ``TaskValue`` and
    /// ``ProjectValue``) and calls `body` with the container; the store is removed with the workspace.
    private static func withComparisonStore(
        _ dataset: Dataset, _ models: [any StoredModel.Type], includingTasks: Bool = false,
        _ body: (ModelContainer) throws -> Void
    ) throws {
        let workspace = try Workspace()
        let container = try ComparisonStore.open(
            for: models, directory: try workspace.makeDirectory("instructions"),
            settings: StoreSettings(mapSize: 64 << 20, durability: .noSync, coding: .fields), filledWith: dataset,
            includingTasks: includingTasks, chunkSize: 1_000)
        defer { try? container.close() }
        try body(container)
    }

    /// Opens a fresh store through the query-power scenario's subject, filled with 2,000 orders of 20 customers from
    /// the scenarios' seed, and calls `body` with the dataset and the subject; the store is removed afterwards.
    private static func withQueryPowerStore(_ body: (QueryPowerDataset, QueryPowerSubject) throws -> Void) throws {
        let dataset = QueryPowerDataset(orderCount: 2_000, seed: ScenarioContext.seed)
        let workspace = try Workspace()
        let subject = try QueryPowerSubject(
            directory: try workspace.makeDirectory("instructions"),
            settings: StoreSettings(mapSize: 64 << 20, durability: .noSync, coding: .fields), filledWith: dataset,
            chunkSize: 1_000)
        defer { try? subject.close() }
        try body(dataset, subject)
    }

    /// The workloads, in the order of the table.
    static let workloads: [Workload] = [
        Workload(name: "insert", operations: 2_000) { counted in
            let dataset = try dataset()
            try withStore(dataset, includingTasks: false) { subject in
                try counted {
                    for chunk in Dataset.chunks(of: dataset.tasks.count, size: 1_000) {
                        try subject.insert(tasks: dataset.tasks[chunk])
                    }
                }
            }
        },
        // The class/struct comparison's insert: tasks made before each chunk (not counted), inserted into one context
        // and saved a chunk at a time, the classes in the project objects the context fetched.
        Workload(name: "insert (classes)", operations: 2_000) { counted in
            let dataset = try dataset()
            try withComparisonStore(dataset, [TaskObject.self, ProjectObject.self]) { container in
                let context = ModelContext(container)
                let projects = Dictionary(
                    uniqueKeysWithValues: try context.fetch(FetchDescriptor<ProjectObject>()).map { ($0.id, $0) })
                for chunk in Dataset.chunks(of: dataset.tasks.count, size: 1_000) {
                    let tasks = dataset.tasks[chunk].map {
                        TaskObject($0, project: $0.projectID.flatMap { projects[$0] })
                    }
                    try counted {
                        for task in tasks { context.insert(task) }
                        try context.save()
                    }
                }
            }
        },
        Workload(name: "insert (structs)", operations: 2_000) { counted in
            let dataset = try dataset()
            try withComparisonStore(dataset, [TaskValue.self, ProjectValue.self]) { container in
                let context = ModelContext(container)
                for chunk in Dataset.chunks(of: dataset.tasks.count, size: 1_000) {
                    let tasks = dataset.tasks[chunk].map(TaskValue.init)
                    try counted {
                        for task in tasks { context.insert(task) }
                        try context.save()
                    }
                }
            }
        },
        // The class/struct comparison's fetch of every task, through a context made and let go outside the count.
        Workload(name: "fetch all (classes)", operations: 2_000) { counted in
            try withComparisonStore(try dataset(), [TaskObject.self, ProjectObject.self], includingTasks: true) {
                container in
                let context = ModelContext(container)
                var tasks: [TaskObject] = []
                try counted { tasks = try context.fetch(FetchDescriptor<TaskObject>()) }
                BlackHole.consume(titles: tasks.lazy.map(\.title))
            }
        },
        Workload(name: "fetch all (structs)", operations: 2_000) { counted in
            try withComparisonStore(try dataset(), [TaskValue.self, ProjectValue.self], includingTasks: true) {
                container in
                let context = ModelContext(container)
                var tasks: [TaskValue] = []
                try counted { tasks = try context.fetch(FetchDescriptor<TaskValue>()) }
                BlackHole.consume(titles: tasks.lazy.map(\.title))
            }
        },
        Workload(name: "fetch (batch)", operations: 2_000) { counted in
            let dataset = try dataset()
            let ids = Dataset.sample(2_000, below: dataset.tasks.count, seed: 1).map { dataset.tasks[$0].id }
            try withStore(dataset) { subject in
                try counted { BlackHole.consume(UInt64(try subject.fetchTasks(ids: ids).count)) }
            }
        },
        Workload(name: "fetch (one txn each)", operations: 500) { counted in
            let dataset = try dataset()
            let ids = Dataset.sample(500, below: dataset.tasks.count, seed: 2).map { dataset.tasks[$0].id }
            try withStore(dataset) { subject in
                try counted {
                    for id in ids { BlackHole.consume(try subject.fetchTask(id: id) == nil ? 0 : 1) }
                }
            }
        },
        Workload(name: "query (index)", operations: 200) { counted in
            let dataset = try dataset()
            try withStore(dataset) { subject in
                try counted {
                    for project in dataset.projects {
                        BlackHole.consume(UInt64(try subject.tasks(withProjectID: project.id, plan: .index).count))
                    }
                }
            }
        },
        Workload(name: "query (full scan)", operations: 5) { counted in
            let dataset = try dataset()
            try withStore(dataset) { subject in
                try counted {
                    for project in dataset.projects.prefix(5) {
                        BlackHole.consume(UInt64(try subject.tasks(withProjectID: project.id, plan: .fullScan).count))
                    }
                }
            }
        },
        Workload(name: "query (count)", operations: 200) { counted in
            let dataset = try dataset()
            try withStore(dataset) { subject in
                try counted {
                    for project in dataset.projects {
                        BlackHole.consume(UInt64(try subject.countTasks(withProjectID: project.id)))
                    }
                }
            }
        },
        // The query-power scenario's compound range: a customer's orders in a window of a fifth of the span, about
        // 20 of the customer's 100 in this store of 2,000.
        Workload(name: "query (compound range)", operations: 200) { counted in
            try withQueryPowerStore { dataset, subject in
                let queries = dataset.rangeQueries(200, seed: ScenarioContext.seed &+ 5).map(\.query)
                try counted {
                    for query in queries {
                        let orders = try subject.orders(of: query.customer, placedFrom: query.start, before: query.end)
                        BlackHole.consume(UInt64(orders.count))
                    }
                }
            }
        },
        // The query-power scenario's range count: the orders above a random threshold, about half of the 2,000,
        // counted from the smaller side of the `total` index.
        Workload(name: "query (range count)", operations: 200) { counted in
            try withQueryPowerStore { dataset, subject in
                let thresholds = dataset.countQueries(200, seed: ScenarioContext.seed &+ 6).map(\.threshold)
                try counted {
                    for threshold in thresholds {
                        BlackHole.consume(UInt64(try subject.countOrders(totalAbove: threshold)))
                    }
                }
            }
        },
        // The query-power scenario's filtered sum: the totals of the orders of one status (about 500 of 2,000), each
        // record found through the status index and read for its total alone.
        Workload(name: "query (sum where)", operations: 20) { counted in
            try withQueryPowerStore { _, subject in
                try counted {
                    for _ in 0..<20 {
                        BlackHole.consume(UInt64(try subject.sumOfTotals(status: QueryPowerDataset.summedStatus)))
                    }
                }
            }
        },
        Workload(name: "update", operations: 500) { counted in
            let dataset = try dataset()
            let changes = Dataset.sample(500, below: dataset.tasks.count, seed: 3).enumerated().map { position, task in
                TaskChange(
                    id: dataset.tasks[task].id,
                    newProjectID: position % 4 == 0 ? dataset.projects[position % dataset.projects.count].id : nil)
            }
            try withStore(dataset) { subject in
                try counted { try subject.update(changes[...]) }
            }
        },
        Workload(name: "cascade-delete", operations: 50) { counted in
            let dataset = try dataset()
            let ids = Dataset.sample(50, below: dataset.projects.count, seed: 4).map { dataset.projects[$0].id }
            try withStore(dataset) { subject in
                try counted { BlackHole.consume(UInt64(try subject.deleteProjects(ids: ids[...]))) }
            }
        },
    ]

    /// The work callgrind counts: everything from the entry of this function to its return, callees included.
    @inline(never)
    static func measured(_ body: () throws -> Void) rethrows {
        try body()
    }

    /// The symbol pattern of ``measured(_:)`` for `--toggle-collect`.
    private static let measuredSymbol = "*InstructionCheckO8measured*"

    // MARK: - The child

    /// Runs the workload named by `arguments`' first element, in a child under callgrind; returns the exit status.
    static func child(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first, let workload = workloads.first(where: { $0.name == name }) else {
            printError("kvbench: no instruction workload named \(arguments.first ?? "(none)")")
            return ExitCode.usage.rawValue
        }
        do {
            // A first pass, on a store of its own, is not counted: the runtime's one-time work (type metadata made,
            // conformances found, about 500,000 instructions each the first time) would otherwise weigh on the few
            // operations of the counted pass as it does not on a program's thousands.
            try workload.run { body in try body() }
            try workload.run { body in try measured(body) }
            return ExitCode.success.rawValue
        } catch {
            printError("kvbench: the instruction workload \(name) failed: \(error)")
            return ExitCode.failure.rawValue
        }
    }

    // MARK: - The parent

    /// Counts every workload under callgrind and compares the counts with the baseline at `arguments[0]`, or writes
    /// it with `--update`; returns the exit status: 0 when no workload grew past the tolerance (or the baseline's
    /// versions differ), 1 when one did or a count failed, 64 for a usage mistake.
    static func main(_ arguments: [String]) -> Int32 {
        guard let path = arguments.first, arguments.count <= 2, arguments.count == 1 || arguments[1] == "--update"
        else {
            printError("Usage: kvbench --instructions <baseline.json> [--update]")
            return ExitCode.usage.rawValue
        }
        let update = arguments.count == 2
        #if DEBUG
            printError("kvbench: warning: this is a debug build; the baseline counts a release build")
        #endif
        let versions = Versions.current
        var baseline: Baseline?
        if !update {
            do {
                baseline = try JSONDecoder().decode(Baseline.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            } catch {
                printError("kvbench: cannot read the baseline \(path): \(error.localizedDescription)")
                return ExitCode.failure.rawValue
            }
            if let recorded = baseline?.versions, recorded != versions {
                print(
                    "bench-check skipped: the baseline was counted with \(describe(recorded)), this machine has "
                        + "\(describe(versions)); update it on purpose with 'make bench-check-update'")
                return ExitCode.success.rawValue
            }
        }
        var counts: [String: Double] = [:]
        var failed = false
        print("workload                operations  instructions/op      baseline   change")
        for workload in workloads {
            let instructions: UInt64
            do {
                // The median of three counts: most workloads count the same every time, but a few move by a
                // percent or two between processes (addresses that differ, hashed), which one count would pass on.
                let counts = try (0..<3).map { _ in try count(workload) }.sorted()
                instructions = counts[1]
            } catch {
                printError("kvbench: \(error)")
                return ExitCode.failure.rawValue
            }
            let perOperation = Double(instructions) / Double(workload.operations)
            counts[workload.name] = perOperation
            var line =
                workload.name.padding(toLength: 22, withPad: " ", startingAt: 0)
                + String(format: "%12d %16.0f", workload.operations, perOperation)
            if let recorded = baseline?.instructionsPerOperation[workload.name] {
                let change = perOperation / recorded - 1
                line += String(format: " %13.0f  %+6.1f%%", recorded, change * 100)
                if change > tolerance {
                    line += "  more than \(Int(tolerance * 100))%: a regression"
                    failed = true
                }
            } else if !update {
                line += "      (not in the baseline)"
            }
            print(line)
        }
        if update {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            do {
                var data = try encoder.encode(Baseline(versions: versions, instructionsPerOperation: counts))
                data.append(0x0A)
                try data.write(to: URL(fileURLWithPath: path))
            } catch {
                printError("kvbench: cannot write the baseline \(path): \(error.localizedDescription)")
                return ExitCode.failure.rawValue
            }
            print("wrote \(path) (\(describe(versions)))")
            return ExitCode.success.rawValue
        }
        print(failed ? "bench-check failed" : "bench-check passed (\(describe(versions)))")
        return failed ? ExitCode.failure.rawValue : ExitCode.success.rawValue
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    private static func describe(_ versions: Versions) -> String {
        "Swift \(versions.toolchain), \(versions.glibc), \(versions.lmdb.split(separator: ":").first ?? "")"
    }

    /// A count that failed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The instructions callgrind counted inside ``measured(_:)`` for `workload`, in a child kvbench.
    ///
    /// - Throws: ``Failure`` when valgrind cannot start, the child fails, or its output holds no count.
    static func count(_ workload: Workload) throws -> UInt64 {
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("kvbench-callgrind-\(getpid())-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        // The child starts from the same place with the same environment wherever the checkout is and whoever runs
        // it: the sizes of the environment and of the program's path move the process's memory layout, and the
        // full scan's count moved by up to 7% with them (alignment-dependent copies and comparisons).
        let executable = URL(fileURLWithPath: ChildProcess.executablePath())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.currentDirectoryURL = executable.deletingLastPathComponent()
        process.arguments = [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=\(measuredSymbol)",
            "--callgrind-out-file=\(output)", "./" + executable.lastPathComponent, workloadFlag, workload.name,
        ]
        process.environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": "/tmp",
            // The same hash seeds in every run: dictionaries then probe alike, and the counts repeat.
            "SWIFT_DETERMINISTIC_HASHING": "1",
        ]
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot start valgrind (apt-get install valgrind): \(error)")
        }
        let messages = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw Failure(
                description: "the workload \(workload.name) failed under valgrind (status "
                    + "\(process.terminationStatus)):\n\(messages)")
        }
        guard let text = try? String(contentsOfFile: output, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: {
                $0.hasPrefix("totals: ") || $0.hasPrefix("summary: ")
            }),
            let instructions = UInt64(line.split(separator: " ")[1]), instructions > 0
        else {
            throw Failure(
                description: "callgrind counted nothing inside \(measuredSymbol) for \(workload.name): was "
                    + "InstructionCheck.measured renamed?")
        }
        return instructions
    }
}
