extension InsertScenario {
    /// The class/struct comparison's insert: tasks inserted into a context, a save per chunk of the run's chunk size,
    /// into a store that holds their projects; each run starts from a fresh store. Latency is per chunk.
    ///
    /// The class side makes its objects in the project objects it fetched, as a program does, before each chunk's
    /// timed region; the struct side makes its structs there too.
    func modelKindRows(in context: ScenarioContext) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let count = sizes.modelKindInsertCount
        context.announce("insert: \(count) tasks as classes and as structs, a context save per \(sizes.chunkSize)")
        let dataset = try Dataset(projectCount: count / Dataset.tasksPerProject, seed: ScenarioContext.seed)
        let settings = context.settings(records: count)
        let chunks = Dataset.chunks(of: count, size: sizes.chunkSize)
        let workspace = context.workspace

        func work<Side: ModelKindSubject>(_: Side.Type) -> Workload {
            Workload(name: Side.name, latencyUnit: "chunk", objectsPerRun: count, operationsPerRun: chunks.count) {
                recorder in
                try ComparisonSide.with(
                    Side.self, in: workspace, settings: settings, filledWith: dataset, includingTasks: false,
                    chunkSize: sizes.chunkSize
                ) { side in
                    try side.subject.insertTasks(of: dataset, chunks: chunks, recorder: recorder)
                }
            }
        }
        let measured = try context.measure(work(ClassModelSubject.self), work(StructModelSubject.self))
        return [context.comparison(.insert, records: count, classes: measured[0], structs: measured[1])]
    }
}
