extension FetchScenario {
    /// The tasks a due-date window of the indexed fetch holds, about.
    static let windowSize = 10
    /// How many times a run fetches every task: one fetch takes a few milliseconds, which the machine's noise moves
    /// by a tenth from run to run; five make a run long enough for its median to settle.
    static let fetchesOfAll = 5

    /// The class/struct comparison's fetches, from the comparison's store: due-date windows of about ten tasks
    /// through the `dueAt` index, all through one context per run (the objects of earlier fetches stay in it, as in
    /// a program that reads and does not save); and every task, ``fetchesOfAll`` times per run, each through a new
    /// context. Latency is per fetch.
    ///
    /// The store is filled once per side and read by every run.
    func modelKindRows(in context: ScenarioContext) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let dataset = try Dataset(projectCount: sizes.modelKindProjectCount, seed: ScenarioContext.seed)
        let windows = DueWindow.windows(
            sizes.modelKindWindowFetches, holding: Self.windowSize, over: dataset.tasks,
            seed: ScenarioContext.seed &+ 110)
        let windowed = windows.reduce(0) { $0 + $1.tasks }
        context.announce(
            "fetch: \(windows.count) due-date windows of about \(Self.windowSize) tasks, and all \(dataset.tasks.count) "
                + "tasks, as classes and as structs")
        let settings = context.settings(records: dataset.tasks.count)
        let workspace = context.workspace

        return try ComparisonSide.with(
            ClassModelSubject.self, in: workspace, settings: settings, filledWith: dataset, chunkSize: sizes.chunkSize
        ) { classes in
            try ComparisonSide.with(
                StructModelSubject.self, in: workspace, settings: settings, filledWith: dataset,
                chunkSize: sizes.chunkSize
            ) { structs in
                func windowWork<Side: ModelKindSubject>(_ side: ComparisonSide<Side>) -> Workload {
                    Workload(
                        name: Side.name, latencyUnit: "fetch", objectsPerRun: windowed,
                        operationsPerRun: windows.count
                    ) { recorder in
                        try side.subject.fetchTasks(dueIn: windows.map(\.window), recorder: recorder)
                    }
                }
                func allWork<Side: ModelKindSubject>(_ side: ComparisonSide<Side>) -> Workload {
                    Workload(
                        name: Side.name, latencyUnit: "fetch", objectsPerRun: dataset.tasks.count * Self.fetchesOfAll,
                        operationsPerRun: Self.fetchesOfAll
                    ) { recorder in
                        try side.subject.fetchAllTasks(times: Self.fetchesOfAll, recorder: recorder)
                    }
                }
                let window = try context.measure(windowWork(classes), windowWork(structs))
                let all = try context.measure(allWork(classes), allWork(structs))
                return [
                    context.comparison(
                        .fetch, variant: "index", records: dataset.tasks.count, classes: window[0],
                        structs: window[1]),
                    context.comparison(
                        .fetch, variant: "all", records: dataset.tasks.count, classes: all[0], structs: all[1]),
                ]
            }
        }
    }
}
