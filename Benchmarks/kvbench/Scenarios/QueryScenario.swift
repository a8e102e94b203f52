import Foundation

/// Predicate query on the indexed attribute, `projectID == value`, one read transaction per query: answered
/// through the index, and the same query forced to a full scan that decodes every task and tests it; and the count
/// of the same queries.
///
/// The baseline of the index row is the raw index lookup of the same queries, of the full-scan row a raw cursor scan
/// of the task table that checks each record's checksum and tests its `projectID` bytes in place, of the count row the
/// raw count of the index key's duplicates. SQLite runs the prepared `SELECT ... WHERE projectID = ?` alone (a read transaction
/// each) through its index, the same forced to scan the table for the full scan (which tests the column of every
/// row), and `SELECT count(*)` for the count; its tasks or counts and the subject's must be the same. The full-scan
/// run asks fewer queries, each of which reads the whole table; throughput counts the tasks returned, or counted.
/// Latency is per query.
struct QueryScenario: Scenario {
    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        let sizes = context.sizes
        context.announce(
            "query: \(sizes.indexedQueries) indexed and \(sizes.fullScanQueries) full-scan queries on "
                + "\(sizes.taskCount) tasks")
        let dataset = try Dataset(projectCount: sizes.projectCount, seed: ScenarioContext.seed)
        let projectIDs = Dataset.sample(
            sizes.indexedQueries, below: dataset.projects.count, seed: ScenarioContext.seed &+ 30
        ).map { dataset.projects[$0].id }
        let scanned = Array(projectIDs.prefix(sizes.fullScanQueries))
        let keys = flatKeys(projectIDs)
        let settings = context.settings(records: dataset.tasks.count)

        return try context.workspace.withSubject(Subject.self, settings: settings) { subject in
            try context.workspace.withBaseline(settings: settings) { raw in
                try context.workspace.withSQLite(settings: settings) { sqlite in
                    try dataset.fill(subject, chunkSize: sizes.chunkSize)
                    try dataset.fill(raw, chunkSize: sizes.chunkSize)
                    try dataset.fill(sqlite, chunkSize: sizes.chunkSize)
                    func subjectWork(_ plan: QueryPlan, _ queries: [UUID]) -> Workload {
                        Workload(
                            name: "\(Subject.name) (\(plan.rawValue))", latencyUnit: "query",
                            objectsPerRun: queries.count * Dataset.tasksPerProject, operationsPerRun: queries.count
                        ) { recorder in
                            try recorder.timed {
                                var found = 0
                                for projectID in queries {
                                    let tasks = try recorder.operation {
                                        try subject.tasks(withProjectID: projectID, plan: plan)
                                    }
                                    recorder.add(tasks: tasks)
                                    found += tasks.count
                                }
                                return found
                            }
                        }
                    }
                    let baseline = Workload(
                        name: RawLMDB.name, latencyUnit: "query",
                        objectsPerRun: projectIDs.count * Dataset.tasksPerProject, operationsPerRun: projectIDs.count
                    ) { recorder in
                        try recorder.timed {
                            var found = 0
                            try Self.forEachKey(in: keys) { key in
                                let result = try recorder.operation { try raw.tasksOfProject(key: key) }
                                BlackHole.consume(result.checksum)
                                found += result.found
                            }
                            return found
                        }
                    }
                    let scannedKeys = flatKeys(scanned)
                    let baselineScan = Workload(
                        name: "\(RawLMDB.name) (\(QueryPlan.fullScan.rawValue))", latencyUnit: "query",
                        objectsPerRun: scanned.count * Dataset.tasksPerProject, operationsPerRun: scanned.count
                    ) { recorder in
                        try recorder.timed {
                            var found = 0
                            try Self.forEachKey(in: scannedKeys) { key in
                                let result = try recorder.operation { try raw.tasksOfProjectByScan(key: key) }
                                BlackHole.consume(result.checksum)
                                found += result.found
                            }
                            return found
                        }
                    }
                    let subjectCount = Workload(
                        name: "\(Subject.name) (count)", latencyUnit: "query",
                        objectsPerRun: projectIDs.count * Dataset.tasksPerProject, operationsPerRun: projectIDs.count
                    ) { recorder in
                        try recorder.timed {
                            var counted = 0
                            for projectID in projectIDs {
                                counted += try recorder.operation { try subject.countTasks(withProjectID: projectID) }
                            }
                            return counted
                        }
                    }
                    let baselineCount = Workload(
                        name: "\(RawLMDB.name) (count)", latencyUnit: "query",
                        objectsPerRun: projectIDs.count * Dataset.tasksPerProject, operationsPerRun: projectIDs.count
                    ) { recorder in
                        try recorder.timed {
                            var counted = 0
                            try Self.forEachKey(in: keys) { key in
                                counted += try recorder.operation { try raw.countTasksOfProject(key: key) }
                            }
                            return counted
                        }
                    }
                    func sqliteWork(_ plan: QueryPlan, _ queries: [UInt8]) -> Workload {
                        Workload(
                            name: "\(RawSQLite.name) (\(plan.rawValue))", latencyUnit: "query",
                            objectsPerRun: queries.count / 16 * Dataset.tasksPerProject,
                            operationsPerRun: queries.count / 16
                        ) { recorder in
                            try recorder.timed {
                                try Self.forEachKey(in: queries) { key in
                                    recorder.add(
                                        try recorder.operation { try sqlite.tasksOfProject(key: key, plan: plan) })
                                }
                                return recorder.digest.records
                            }
                        }
                    }
                    let sqliteCount = Workload(
                        name: "\(RawSQLite.name) (count)", latencyUnit: "query",
                        objectsPerRun: projectIDs.count * Dataset.tasksPerProject, operationsPerRun: projectIDs.count
                    ) { recorder in
                        try recorder.timed {
                            var counted = 0
                            try Self.forEachKey(in: keys) { key in
                                counted += try recorder.operation { try sqlite.countTasksOfProject(key: key) }
                            }
                            return counted
                        }
                    }
                    let measured = try context.measure(
                        subjectWork(.index, projectIDs), subjectWork(.fullScan, scanned), baseline, baselineScan,
                        subjectCount, baselineCount, sqliteWork(.index, keys), sqliteWork(.fullScan, scannedKeys),
                        sqliteCount)
                    return [
                        try context.result(
                            .query, variant: QueryPlan.index.rawValue, records: dataset.tasks.count,
                            subject: measured[0], baseline: measured[2], sqlite: measured[6]),
                        try context.result(
                            .query, variant: QueryPlan.fullScan.rawValue, records: dataset.tasks.count,
                            subject: measured[1], baseline: measured[3], sqlite: measured[7]),
                        try context.result(
                            .query, variant: "count", records: dataset.tasks.count, subject: measured[4],
                            baseline: measured[5], sqlite: measured[8]),
                    ]
                }
            }
        }
    }

    /// Calls `body` with the address of each 16-byte key of `keys`, in order.
    private static func forEachKey(in keys: [UInt8], _ body: (UnsafeRawPointer) throws -> Void) rethrows {
        try keys.withUnsafeBytes { keys in
            guard let base = keys.baseAddress else { return }
            for offset in stride(from: 0, to: keys.count, by: 16) { try body(base.advanced(by: offset)) }
        }
    }
}
