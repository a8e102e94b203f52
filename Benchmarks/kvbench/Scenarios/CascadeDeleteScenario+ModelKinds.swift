extension CascadeDeleteScenario {
    /// The class/struct comparison's cascade delete, on the comparison's store: through a new context per run, 5% of
    /// the projects, picked at random, deleted and saved, their ten tasks each deleted by the `.cascade` rule. The
    /// class side deletes project objects it fetched before the timed region, as a program has at hand the objects it
    /// deletes, and holds none of their tasks; the struct side deletes by ID.
    ///
    /// Throughput counts records deleted (projects and tasks); latency is per save. The runs share a store per side
    /// and delete different projects; once every project was used, the store is filled again (untimed).
    func modelKindRows(in context: ScenarioContext) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let dataset = try Dataset(projectCount: sizes.modelKindProjectCount, seed: ScenarioContext.seed)
        let count = Swift.max(1, dataset.projects.count / 20)
        let expected = count * (1 + Dataset.tasksPerProject)
        let order = Dataset.sample(
            dataset.projects.count, below: dataset.projects.count, seed: ScenarioContext.seed &+ 130)
        let batches = stride(from: 0, through: order.count - count, by: count).map { start in
            order[start..<start + count].map { dataset.projects[$0].id }
        }
        guard !batches.isEmpty else { return [] }
        context.announce(
            "cascade-delete: \(count) projects with \(count * Dataset.tasksPerProject) tasks from "
                + "\(dataset.tasks.count) tasks, as classes and as structs")
        let settings = context.settings(records: dataset.tasks.count)
        let workspace = context.workspace

        return try ComparisonSide.with(
            ClassModelSubject.self, in: workspace, settings: settings, filledWith: dataset, chunkSize: sizes.chunkSize
        ) { classes in
            try ComparisonSide.with(
                StructModelSubject.self, in: workspace, settings: settings, filledWith: dataset,
                chunkSize: sizes.chunkSize
            ) { structs in
                func work<Side: ModelKindSubject>(_ side: ComparisonSide<Side>) -> Workload {
                    var runs = 0
                    return Workload(
                        name: Side.name, latencyUnit: "save", objectsPerRun: expected, operationsPerRun: 1
                    ) { recorder in
                        if runs > 0 && runs % batches.count == 0 { try side.renew() }
                        defer { runs += 1 }
                        return try side.subject.deleteProjects(ids: batches[runs % batches.count], recorder: recorder)
                    }
                }
                let measured = try context.measure(work(classes), work(structs))
                return [
                    context.comparison(
                        .cascadeDelete, records: dataset.tasks.count, classes: measured[0], structs: measured[1])
                ]
            }
        }
    }
}
