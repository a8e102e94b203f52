/// Chunked insert: N tasks with their index entries, 10,000 per write transaction, into a store that holds their
/// projects already.
///
/// The baseline puts the same keys, record bytes and index entries through the C API with the same chunking; SQLite
/// inserts the same tasks with the prepared `INSERT`, a transaction per chunk. Each run starts from a fresh store;
/// the projects are inserted before the timed region. Latency is per chunk. After the timed region, the subject's
/// and SQLite's stores are read back and must hold the same records.
///
/// The class/struct comparison's insert follows, in a table of its own; see ``modelKindRows(in:)``.
struct InsertScenario: Scenario {
    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let count = sizes.insertCount
        context.announce("insert: \(count) tasks in chunks of \(sizes.chunkSize)")
        let dataset = try Dataset(projectCount: count / Dataset.tasksPerProject, seed: ScenarioContext.seed)
        let settings = context.settings(records: count)
        let chunks = Dataset.chunks(of: count, size: sizes.chunkSize)
        let workspace = context.workspace

        func subjectWork(_ settings: StoreSettings, name: String) -> Workload {
            Workload(name: name, latencyUnit: "chunk", objectsPerRun: count, operationsPerRun: chunks.count) {
                recorder in
                try workspace.withSubject(Subject.self, settings: settings) { subject in
                    try dataset.fill(subject, chunkSize: sizes.chunkSize, includingTasks: false)
                    for chunk in chunks {
                        try recorder.timedOperation { try subject.insert(tasks: dataset.tasks[chunk]) }
                    }
                    try recorder.checkContents { try subject.contents() }
                    return count
                }
            }
        }
        let baseline = Workload(
            name: RawLMDB.name, latencyUnit: "chunk", objectsPerRun: count, operationsPerRun: chunks.count
        ) { recorder in
            try workspace.withBaseline(settings: settings) { raw in
                try dataset.fill(raw, chunkSize: sizes.chunkSize, includingTasks: false)
                for chunk in chunks {
                    try recorder.timedOperation { try raw.insert(dataset.taskBytes, range: chunk, into: raw.tasks) }
                }
                return count
            }
        }
        let sqlite = Workload(
            name: RawSQLite.name, latencyUnit: "chunk", objectsPerRun: count, operationsPerRun: chunks.count
        ) { recorder in
            try workspace.withSQLite(settings: settings) { sqlite in
                try dataset.fill(sqlite, chunkSize: sizes.chunkSize, includingTasks: false)
                for chunk in chunks {
                    try recorder.timedOperation { try sqlite.insert(tasks: dataset.tasks[chunk]) }
                }
                try recorder.checkContents { try sqlite.contents() }
                return count
            }
        }
        let measured = try context.measure(subjectWork(settings, name: Subject.name), baseline, sqlite)
        return [
            try context.result(
                .insert, records: count, subject: measured[0], baseline: measured[1], sqlite: measured[2])
        ]
            + (try context.historyComparison(
                .insert, of: Subject.self, records: count, settings: settings, work: subjectWork))
            + (try modelKindRows(in: context))
    }
}
