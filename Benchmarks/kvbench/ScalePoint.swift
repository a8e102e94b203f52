import Foundation

/// One run of one point of the scale series, done in a child process: the arguments after `--child scale`.
///
/// The child does a warm-up run of at most 10,000 tasks, then one measured run of ``count`` tasks in a fresh
/// store, and prints a ``ScalePoint/Outcome``. The parent starts one child per measured run, rotating the order of
/// the subject, the raw LMDB baseline and SQLite, so that each peak resident set size is one run's own and a noisy
/// machine affects the sides alike. The subject's and SQLite's stores are read back after the timed regions, and
/// every side reports the bytes its closed store keeps on disk.
struct ScalePoint: Codable, Sendable {
    /// Which side a child measures.
    enum Side: String, Codable, Sendable {
        /// The subject of this build.
        case subject
        /// The raw C API.
        case baseline
        /// The SQLite C API.
        case sqlite
    }

    /// What a child reports: its measured run and the latency of each chunk in nanoseconds.
    struct Outcome: Codable, Sendable {
        /// The measured run.
        var run: Measurement.Run
        /// The latency of each chunk, in nanoseconds.
        var latencies: [UInt64]
    }

    /// The tasks to insert.
    var count: Int
    /// How task IDs are generated.
    var order: IDOrder
    /// The side to measure.
    var side: Side
    /// Whether commits wait for the disk.
    var durability: CommitSync
    /// How KVStore codes the models.
    var coding: RecordCoding
    /// The tasks per write transaction.
    var chunkSize: Int

    /// The size of the warm-up run, smaller than large points: it warms code and caches, not the disk.
    var warmUpCount: Int {
        Swift.min(count, 10_000)
    }

    /// Does the warm-up and the measured run in this process, each in a fresh store.
    func measure<Subject: ScenarioSubject>(_ subject: Subject.Type) throws -> Outcome {
        let workspace = try Workspace()
        _ = try Runner.runOnce(workload(Subject.self, count: warmUpCount, workspace: workspace))
        var (run, latencies) = try Runner.runOnce(workload(Subject.self, count: count, workspace: workspace))
        run.storeBytes = workspace.lastStoreBytes
        return Outcome(run: run, latencies: latencies)
    }

    private func workload<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        count: Int,
        workspace: Workspace
    ) -> Workload {
        let settings = StoreSettings(
            mapSize: Swift.max(1 << 30, count * 2_048), durability: durability, coding: coding)
        let chunks = Dataset.chunks(of: count, size: chunkSize)
        let side = side
        let order = order
        let name =
            switch side {
            case .subject: Subject.name
            case .baseline: RawLMDB.name
            case .sqlite: RawSQLite.name
            }
        return Workload(name: name, latencyUnit: "chunk", objectsPerRun: count, operationsPerRun: chunks.count) {
            recorder in
            // Projects too are made and stored a chunk at a time: only their IDs stay in memory.
            var generator = ChunkGenerator(order: order, projectCount: Swift.max(1, count / Dataset.tasksPerProject))
            let projectChunks = Dataset.chunks(of: generator.projectCount, size: chunkSize)
            /// Stores the projects, then the tasks a timed chunk at a time, then reads the store back: the work of
            /// the sides whose records are compared.
            func insertAndRead(
                projects: (ArraySlice<ProjectRecord>) throws -> Void, tasks: (ArraySlice<TaskRecord>) throws -> Void,
                contents: () throws -> RecordDigest
            ) throws -> Int {
                for chunk in projectChunks { try projects(generator.nextProjects(chunk.count)[...]) }
                for chunk in chunks {
                    let made = generator.next(chunk.count)
                    try recorder.timedOperation { try tasks(made[...]) }
                }
                try recorder.checkContents(contents)
                return count
            }
            switch side {
            case .subject:
                return try workspace.withSubject(Subject.self, settings: settings) { subject in
                    try insertAndRead(
                        projects: subject.insert(projects:), tasks: subject.importTasks, contents: subject.contents)
                }
            case .baseline:
                return try workspace.withBaseline(settings: settings) { raw in
                    for chunk in projectChunks {
                        let projects = try EncodedRecords(projects: generator.nextProjects(chunk.count)[...])
                        try raw.insert(projects, range: 0..<projects.count, into: raw.projects)
                    }
                    for chunk in chunks {
                        let bytes = try EncodedRecords(tasks: generator.next(chunk.count)[...])
                        try recorder.timedOperation { try raw.insert(bytes, range: 0..<bytes.count, into: raw.tasks) }
                    }
                    return count
                }
            case .sqlite:
                return try workspace.withSQLite(settings: settings) { sqlite in
                    try insertAndRead(
                        projects: sqlite.insert(projects:), tasks: sqlite.insert(tasks:), contents: sqlite.contents)
                }
            }
        }
    }
}
