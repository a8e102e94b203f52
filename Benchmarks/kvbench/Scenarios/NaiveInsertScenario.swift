/// Naive insert: one write transaction per task, to show what not batching costs.
///
/// Compare its throughput with the chunked insert's: the difference is the price of a commit per record, which
/// `--sync` makes much larger. The baseline commits once per task too, and so does SQLite (the prepared `INSERT`
/// alone, in autocommit mode). Latency is per task (one transaction). After the timed region, the subject's and
/// SQLite's stores are read back and must hold the same records.
struct NaiveInsertScenario: Scenario {
    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let count = sizes.naiveInsertCount
        context.announce("naive-insert: \(count) tasks, one write transaction each")
        let dataset = try Dataset(projectCount: count / Dataset.tasksPerProject, seed: ScenarioContext.seed)
        let settings = context.settings(records: count)
        let workspace = context.workspace

        func subjectWork(_ settings: StoreSettings, name: String) -> Workload {
            Workload(name: name, latencyUnit: "object", objectsPerRun: count, operationsPerRun: count) { recorder in
                try workspace.withSubject(Subject.self, settings: settings) { subject in
                    try dataset.fill(subject, chunkSize: sizes.chunkSize, includingTasks: false)
                    try recorder.timed {
                        for position in 0..<count {
                            try recorder.operation { try subject.insert(tasks: dataset.tasks[position..<position + 1]) }
                        }
                    }
                    try recorder.checkContents { try subject.contents() }
                    return count
                }
            }
        }
        let baseline = Workload(
            name: RawLMDB.name, latencyUnit: "object", objectsPerRun: count, operationsPerRun: count
        ) { recorder in
            try workspace.withBaseline(settings: settings) { raw in
                try dataset.fill(raw, chunkSize: sizes.chunkSize, includingTasks: false)
                try recorder.timed {
                    for position in 0..<count {
                        try recorder.operation {
                            try raw.insert(dataset.taskBytes, range: position..<position + 1, into: raw.tasks)
                        }
                    }
                }
                return count
            }
        }
        let sqlite = Workload(
            name: RawSQLite.name, latencyUnit: "object", objectsPerRun: count, operationsPerRun: count
        ) { recorder in
            try workspace.withSQLite(settings: settings) { sqlite in
                try dataset.fill(sqlite, chunkSize: sizes.chunkSize, includingTasks: false)
                try recorder.timed {
                    for position in 0..<count {
                        try recorder.operation { try sqlite.insert(tasks: dataset.tasks[position..<position + 1]) }
                    }
                }
                try recorder.checkContents { try sqlite.contents() }
                return count
            }
        }
        let measured = try context.measure(subjectWork(settings, name: Subject.name), baseline, sqlite)
        return [
            try context.result(
                .naiveInsert, records: count, subject: measured[0], baseline: measured[1], sqlite: measured[2])
        ]
            + (try context.historyComparison(
                .naiveInsert, of: Subject.self, records: count, settings: settings, work: subjectWork))
    }
}
