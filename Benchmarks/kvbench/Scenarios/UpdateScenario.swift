import Foundation
import TestSupport

/// Read-modify-write of random tasks, 1,000 per write transaction: each task is read, its done flag toggled and
/// its due date moved, and every tenth one moves to another project, which moves its index entry.
///
/// The baseline gets each record, puts the changed bytes (prepared before the timed region with the same
/// ``TaskChange/apply(to:)``), and deletes and puts the index entry of moved tasks. SQLite runs a prepared `UPDATE`
/// that is ``TaskChange/apply(to:)`` in SQL once per task (one that sets `projectID` for the moved tasks), a
/// transaction per chunk. Each run starts from a
/// freshly filled store. Latency is per chunk. After the timed region, the subject's and SQLite's stores are read
/// back and must hold the same records.
///
/// The class/struct comparison's updates and saves follow, in a table of their own; see ``modelKindRows(in:)``.
struct UpdateScenario: Scenario {
    /// The tasks changed per write transaction.
    static let chunkSize = 1_000

    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let count = sizes.updateCount
        context.announce("update: \(count) of \(sizes.taskCount) tasks, every tenth moving to another project")
        let dataset = try Dataset(projectCount: sizes.projectCount, seed: ScenarioContext.seed)
        var random = SplitMix64(seed: ScenarioContext.seed &+ 40)
        var changes: [TaskChange] = []
        var changed: [TaskRecord] = []
        for (position, taskIndex) in Dataset.sample(count, below: dataset.tasks.count, seed: ScenarioContext.seed &+ 41)
            .enumerated()
        {
            var task = dataset.tasks[taskIndex]
            var change = TaskChange(id: task.id, newProjectID: nil)
            if position % 10 == 0 {
                var project = Int(random.next() % UInt64(dataset.projects.count))
                if dataset.projects[project].id == task.projectID {
                    project = (project + 1) % dataset.projects.count
                }
                change.newProjectID = dataset.projects[project].id
            }
            change.apply(to: &task)
            changes.append(change)
            changed.append(task)
        }
        let changedBytes = try EncodedRecords(tasks: changed[...])
        let chunks = Dataset.chunks(of: count, size: Self.chunkSize)
        let settings = context.settings(records: dataset.tasks.count)
        let workspace = context.workspace

        func subjectWork(_ settings: StoreSettings, name: String) -> Workload {
            Workload(name: name, latencyUnit: "chunk", objectsPerRun: count, operationsPerRun: chunks.count) {
                recorder in
                try workspace.withSubject(Subject.self, settings: settings) { subject in
                    try dataset.fill(subject, chunkSize: sizes.chunkSize)
                    for chunk in chunks {
                        try recorder.timedOperation { try subject.update(changes[chunk]) }
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
                try dataset.fill(raw, chunkSize: sizes.chunkSize)
                var updated = 0
                for chunk in chunks {
                    updated += try recorder.timedOperation { try raw.update(changedBytes, range: chunk) }
                }
                return updated
            }
        }
        let sqlite = Workload(
            name: RawSQLite.name, latencyUnit: "chunk", objectsPerRun: count, operationsPerRun: chunks.count
        ) { recorder in
            try workspace.withSQLite(settings: settings) { sqlite in
                try dataset.fill(sqlite, chunkSize: sizes.chunkSize)
                var updated = 0
                for chunk in chunks {
                    updated += try recorder.timedOperation { try sqlite.update(changes[chunk]) }
                }
                try recorder.checkContents { try sqlite.contents() }
                return updated
            }
        }
        let measured = try context.measure(subjectWork(settings, name: Subject.name), baseline, sqlite)
        return [
            try context.result(
                .update, records: dataset.tasks.count, subject: measured[0], baseline: measured[1],
                sqlite: measured[2])
        ]
            + (try context.historyComparison(
                .update, of: Subject.self, records: dataset.tasks.count, settings: settings, work: subjectWork))
            + (try modelKindRows(in: context))
    }
}
