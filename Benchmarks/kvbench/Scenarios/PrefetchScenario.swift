import Foundation

/// Relationship prefetch: batches of random projects whose tasks are read through the `projectID` index, one read
/// transaction per batch.
///
/// The baseline walks the index with `MDB_SET_KEY` and `MDB_GET_MULTIPLE`/`MDB_NEXT_MULTIPLE` and gets each task.
/// SQLite steps the prepared `SELECT ... WHERE projectID = ?` per project, through its index, between `BEGIN` and
/// `COMMIT`, and decodes each task; its tasks and the subject's must be the same. The store is filled once per side.
/// Latency is per batch of projects.
struct PrefetchScenario: Scenario {
    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let projectCount = sizes.prefetchProjects
        let expected = projectCount * Dataset.tasksPerProject * sizes.prefetchBatches
        context.announce(
            "prefetch: \(sizes.prefetchBatches) batches of the tasks of \(projectCount) random projects from "
                + "\(sizes.taskCount) tasks")
        let dataset = try Dataset(projectCount: sizes.projectCount, seed: ScenarioContext.seed)
        let batches = (0..<sizes.prefetchBatches).map { batch in
            Dataset.sample(
                projectCount, below: dataset.projects.count, seed: ScenarioContext.seed &+ 200 &+ UInt64(batch)
            )
            .map { dataset.projects[$0].id }
        }
        let keys = batches.map(flatKeys)
        let settings = context.settings(records: dataset.tasks.count)

        return try context.workspace.withSubject(Subject.self, settings: settings) { subject in
            try context.workspace.withBaseline(settings: settings) { raw in
                try context.workspace.withSQLite(settings: settings) { sqlite in
                    try dataset.fill(subject, chunkSize: sizes.chunkSize)
                    try dataset.fill(raw, chunkSize: sizes.chunkSize)
                    try dataset.fill(sqlite, chunkSize: sizes.chunkSize)
                    let subjectWork = Workload(
                        name: Subject.name, latencyUnit: "batch", objectsPerRun: expected,
                        operationsPerRun: batches.count
                    ) { recorder in
                        try recorder.timed {
                            var found = 0
                            for projectIDs in batches {
                                let groups = try recorder.operation { try subject.tasks(ofProjects: projectIDs) }
                                recorder.add(tasks: groups.joined())
                                found += groups.reduce(0) { $0 + $1.count }
                            }
                            return found
                        }
                    }
                    let baseline = Workload(
                        name: RawLMDB.name, latencyUnit: "batch", objectsPerRun: expected, operationsPerRun: keys.count
                    ) { recorder in
                        try recorder.timed {
                            var found = 0
                            for batch in keys {
                                let result = try recorder.operation { try raw.tasksOfProjects(keys: batch) }
                                BlackHole.consume(result.checksum)
                                found += result.found
                            }
                            return found
                        }
                    }
                    let sqliteWork = Workload(
                        name: RawSQLite.name, latencyUnit: "batch", objectsPerRun: expected,
                        operationsPerRun: keys.count
                    ) { recorder in
                        try recorder.timed {
                            for batch in keys {
                                recorder.add(try recorder.operation { try sqlite.tasksOfProjects(keys: batch) })
                            }
                            return recorder.digest.records
                        }
                    }
                    let measured = try context.measure(subjectWork, baseline, sqliteWork)
                    return [
                        try context.result(
                            .prefetch, records: dataset.tasks.count, subject: measured[0], baseline: measured[1],
                            sqlite: measured[2])
                    ]
                }
            }
        }
    }
}
