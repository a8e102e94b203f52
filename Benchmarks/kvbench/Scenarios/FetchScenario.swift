import Foundation

/// Fetch by ID: batches of random IDs, each in one read transaction; the same IDs one read transaction each (the
/// N+1 pattern); the same two through queries on the ID (`ids.contains($0.id)`, `$0.id == id`), as SwiftData code
/// writes them; and the baseline's raw gets, a batch per read transaction for the batches and one read transaction
/// per get for the one-at-a-time reads, so that each side pays the transactions the other pays. SQLite steps the
/// prepared `SELECT ... WHERE id = ?` once per ID, between `BEGIN` and `COMMIT` for a batch and alone (one read
/// transaction each) for the one-at-a-time reads and `id ==`; for `ids.contains`, it runs one
/// `SELECT ... WHERE id IN (?, ...)` of the batch's IDs.
///
/// The subject returns decoded tasks in the caller's order; the baseline gets the raw bytes in the caller's order;
/// SQLite decodes each row into a task. The subject's and SQLite's tasks must be the same (``RecordDigest``).
/// The store is filled once per side and read by every run. Latency is per batch, or per task for the N+1 variant.
///
/// The class/struct comparison's fetches follow, in a table of their own; see ``modelKindRows(in:)``.
struct FetchScenario: Scenario {
    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let count = sizes.fetchCount
        let objects = count * sizes.fetchBatches
        context.announce(
            "fetch: \(sizes.fetchBatches) batches of \(count) random IDs from \(sizes.taskCount) tasks")
        let dataset = try Dataset(projectCount: sizes.projectCount, seed: ScenarioContext.seed)
        let batches = (0..<sizes.fetchBatches).map { batch in
            Dataset.sample(count, below: dataset.tasks.count, seed: ScenarioContext.seed &+ 100 &+ UInt64(batch))
                .map { dataset.tasks[$0].id }
        }
        let keys = batches.map(flatKeys)
        let settings = context.settings(records: dataset.tasks.count)

        let rows = try context.workspace.withSubject(Subject.self, settings: settings) { subject in
            try context.workspace.withBaseline(settings: settings) { raw in
                try context.workspace.withSQLite(settings: settings) { sqlite in
                    try dataset.fill(subject, chunkSize: sizes.chunkSize)
                    try dataset.fill(raw, chunkSize: sizes.chunkSize)
                    try dataset.fill(sqlite, chunkSize: sizes.chunkSize)
                    try sqlite.idListStatement(count: count)
                    let batch = Self.batchWorkload(Subject.name, batches: batches, objects: objects) { ids in
                        try subject.fetchTasks(ids: ids)
                    }
                    let oneByOne = Self.oneAtATimeWorkload(Subject.name, batches: batches, objects: objects) { id in
                        try subject.fetchTask(id: id)
                    }
                    let baseline = Workload(
                        name: RawLMDB.name, latencyUnit: "batch", objectsPerRun: objects, operationsPerRun: keys.count
                    ) { recorder in
                        try recorder.timed {
                            var found = 0
                            for batch in keys {
                                let result = try recorder.operation { try raw.getTasks(keys: batch) }
                                BlackHole.consume(result.checksum)
                                found += result.found
                            }
                            return found
                        }
                    }
                    let baselineOneByOne = Workload(
                        name: RawLMDB.name, latencyUnit: "object", objectsPerRun: objects, operationsPerRun: objects
                    ) { recorder in
                        try recorder.timed {
                            var found = 0
                            for batch in keys {
                                try batch.withUnsafeBytes { batch in
                                    guard let base = batch.baseAddress else { return }
                                    for position in 0..<batch.count / 16 {
                                        let result = try recorder.operation {
                                            try raw.getTask(key: base + position &* 16)
                                        }
                                        BlackHole.consume(result.checksum)
                                        found += result.found
                                    }
                                }
                            }
                            return found
                        }
                    }
                    let queryBatch = Self.batchWorkload(Subject.name, batches: batches, objects: objects) { ids in
                        try subject.queryTasks(ids: ids).map(Optional.some)
                    }
                    let queryOne = Self.oneAtATimeWorkload(Subject.name, batches: batches, objects: objects) { id in
                        try subject.queryTask(id: id)
                    }
                    let sqliteBatch = Workload(
                        name: RawSQLite.name, latencyUnit: "batch", objectsPerRun: objects, operationsPerRun: keys.count
                    ) { recorder in
                        try recorder.timed {
                            for batch in keys {
                                recorder.add(try recorder.operation { try sqlite.getTasks(keys: batch) })
                            }
                            return recorder.digest.records
                        }
                    }
                    let sqliteOneByOne = Workload(
                        name: RawSQLite.name, latencyUnit: "object", objectsPerRun: objects, operationsPerRun: objects
                    ) { recorder in
                        try recorder.timed {
                            for batch in keys {
                                try batch.withUnsafeBytes { batch in
                                    guard let base = batch.baseAddress else { return }
                                    for position in 0..<batch.count / 16 {
                                        recorder.add(
                                            try recorder.operation { try sqlite.getTask(key: base + position &* 16) })
                                    }
                                }
                            }
                            return recorder.digest.records
                        }
                    }
                    let sqliteQueryBatch = Workload(
                        name: "\(RawSQLite.name) (id in)", latencyUnit: "batch", objectsPerRun: objects,
                        operationsPerRun: keys.count
                    ) { recorder in
                        try recorder.timed {
                            for batch in keys {
                                recorder.add(try recorder.operation { try sqlite.queryTasks(keys: batch) })
                            }
                            return recorder.digest.records
                        }
                    }
                    let measured = try context.measure(
                        batch, oneByOne, baseline, queryBatch, queryOne, baselineOneByOne, sqliteBatch, sqliteOneByOne,
                        sqliteQueryBatch)
                    return [
                        try context.result(
                            .fetch, variant: "batch", records: dataset.tasks.count, subject: measured[0],
                            baseline: measured[2], sqlite: measured[6]),
                        try context.result(
                            .fetch, variant: "one txn each", records: dataset.tasks.count, subject: measured[1],
                            baseline: measured[5], sqlite: measured[7]),
                        try context.result(
                            .fetch, variant: "query id in", records: dataset.tasks.count, subject: measured[3],
                            baseline: measured[2], sqlite: measured[8]),
                        try context.result(
                            .fetch, variant: "query id ==", records: dataset.tasks.count, subject: measured[4],
                            baseline: measured[5], sqlite: measured[7]),
                    ]
                }
            }
        }
        return rows + (try modelKindRows(in: context))
    }

    /// Each batch of IDs read by one call of `fetch` in a read transaction of its own; latency per batch.
    private static func batchWorkload(
        _ name: String, batches: [[UUID]], objects: Int, _ fetch: @escaping ([UUID]) throws -> [TaskRecord?]
    ) -> Workload {
        Workload(name: name, latencyUnit: "batch", objectsPerRun: objects, operationsPerRun: batches.count) {
            recorder in
            try recorder.timed {
                var found = 0
                for ids in batches {
                    let tasks = try recorder.operation { try fetch(ids) }
                    recorder.add(tasks: tasks.lazy.compactMap { $0 })
                    found += tasks.count { $0 != nil }
                }
                return found
            }
        }
    }

    /// Every ID of the batches read by one call of `fetch` in a read transaction of its own (the N+1 pattern);
    /// latency per ID.
    private static func oneAtATimeWorkload(
        _ name: String, batches: [[UUID]], objects: Int, _ fetch: @escaping (UUID) throws -> TaskRecord?
    ) -> Workload {
        Workload(name: name, latencyUnit: "object", objectsPerRun: objects, operationsPerRun: objects) { recorder in
            try recorder.timed {
                var found = 0
                for ids in batches {
                    var tasks: [TaskRecord] = []
                    tasks.reserveCapacity(ids.count)
                    for id in ids {
                        if let task = try recorder.operation({ try fetch(id) }) { tasks.append(task) }
                    }
                    recorder.add(tasks: tasks)
                    found += tasks.count
                }
                return found
            }
        }
    }
}
