import Foundation

/// Cascade delete: random projects with their ten tasks each and the tasks' index entries, 50 projects per write
/// transaction.
///
/// The baseline reads the same task IDs from the index and deletes the same records and index entries with
/// `mdb_del`. SQLite deletes the projects with the prepared `DELETE`, and its foreign key's `ON DELETE CASCADE`
/// their tasks. Each run starts from a freshly filled store. Throughput counts records deleted (projects and tasks);
/// latency is per chunk of 50 projects. After the timed region, the subject's and SQLite's stores are read back and
/// must hold the same records.
///
/// The class/struct comparison's cascade delete follows, in a table of its own; see ``modelKindRows(in:)``.
struct CascadeDeleteScenario: Scenario {
    /// The projects deleted per write transaction.
    static let chunkSize = 50

    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let count = sizes.cascadeProjects
        let expected = count * (1 + Dataset.tasksPerProject)
        context.announce(
            "cascade-delete: \(count) projects with \(count * Dataset.tasksPerProject) tasks from "
                + "\(sizes.taskCount) tasks")
        let dataset = try Dataset(projectCount: sizes.projectCount, seed: ScenarioContext.seed)
        let projectIDs = Dataset.sample(count, below: dataset.projects.count, seed: ScenarioContext.seed &+ 50).map {
            dataset.projects[$0].id
        }
        let chunks = Dataset.chunks(of: count, size: Self.chunkSize)
        let chunkKeys = chunks.map { flatKeys(projectIDs[$0]) }
        let settings = context.settings(records: dataset.tasks.count)
        let workspace = context.workspace

        func subjectWork(_ settings: StoreSettings, name: String) -> Workload {
            Workload(name: name, latencyUnit: "chunk", objectsPerRun: expected, operationsPerRun: chunks.count) {
                recorder in
                try workspace.withSubject(Subject.self, settings: settings) { subject in
                    try dataset.fill(subject, chunkSize: sizes.chunkSize)
                    var deleted = 0
                    for chunk in chunks {
                        deleted += try recorder.timedOperation { try subject.deleteProjects(ids: projectIDs[chunk]) }
                    }
                    try recorder.checkContents { try subject.contents() }
                    return deleted
                }
            }
        }
        let baseline = Workload(
            name: RawLMDB.name, latencyUnit: "chunk", objectsPerRun: expected, operationsPerRun: chunks.count
        ) { recorder in
            try workspace.withBaseline(settings: settings) { raw in
                try dataset.fill(raw, chunkSize: sizes.chunkSize)
                var deleted = 0
                for keys in chunkKeys {
                    deleted += try recorder.timedOperation { try raw.deleteProjects(keys: keys) }
                }
                return deleted
            }
        }
        let sqlite = Workload(
            name: RawSQLite.name, latencyUnit: "chunk", objectsPerRun: expected, operationsPerRun: chunks.count
        ) { recorder in
            try workspace.withSQLite(settings: settings) { sqlite in
                try dataset.fill(sqlite, chunkSize: sizes.chunkSize)
                var deleted = 0
                for keys in chunkKeys {
                    deleted += try recorder.timedOperation { try sqlite.deleteProjects(keys: keys) }
                }
                try recorder.checkContents { try sqlite.contents() }
                return deleted
            }
        }
        let measured = try context.measure(subjectWork(settings, name: Subject.name), baseline, sqlite)
        return [
            try context.result(
                .cascadeDelete, records: dataset.tasks.count, subject: measured[0], baseline: measured[1],
                sqlite: measured[2])
        ]
            + (try context.historyComparison(
                .cascadeDelete, of: Subject.self, records: dataset.tasks.count, settings: settings, work: subjectWork))
            + (try modelKindRows(in: context))
    }
}
