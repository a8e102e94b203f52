import Foundation

extension UpdateScenario {
    /// How many updates a run of an update row makes: one takes a few milliseconds, which the machine's noise moves by
    /// a tenth from run to run; five make a run long enough for its median to settle.
    static let updatesPerRun = 5

    /// The class/struct comparison's updates and saves, on the comparison's store.
    ///
    /// Update: through a new context, fetch the tasks of a due-date window holding a tenth of them, toggle the
    /// done flag of every one or of every tenth, and save; throughput counts the tasks changed. Save: a context holds
    /// N registered tasks, read before anything is timed, and each run changes 1% of the store's tasks (k) and
    /// saves; N is the whole store, then k alone, so that the two rows show what the N - k unchanged objects cost a
    /// save. The struct side changes the same k structs with `modify` and saves. The store is filled once per side;
    /// runs toggle the same flags back and forth. An update row's run makes ``updatesPerRun`` updates, each through a
    /// new context. Latency is per update or save.
    func modelKindRows(in context: ScenarioContext) throws -> [ScenarioResult] {
        let sizes = context.sizes
        let dataset = try Dataset(projectCount: sizes.modelKindProjectCount, seed: ScenarioContext.seed)
        guard
            let (window, windowed) = DueWindow.windows(
                1, holding: dataset.tasks.count / 10, over: dataset.tasks, seed: ScenarioContext.seed &+ 120
            ).first
        else { return [] }
        let changed = Dataset.sample(
            Swift.max(1, dataset.tasks.count / 100), below: dataset.tasks.count, seed: ScenarioContext.seed &+ 121
        ).map { dataset.tasks[$0].id }
        context.announce(
            "update: \(windowed) tasks of a due-date window, all or every tenth changed, and saves of "
                + "\(changed.count) changed among \(dataset.tasks.count) and \(changed.count) registered, as classes "
                + "and as structs")
        let settings = context.settings(records: dataset.tasks.count)
        let workspace = context.workspace

        return try ComparisonSide.with(
            ClassModelSubject.self, in: workspace, settings: settings, filledWith: dataset, chunkSize: sizes.chunkSize
        ) { classes in
            try ComparisonSide.with(
                StructModelSubject.self, in: workspace, settings: settings, filledWith: dataset,
                chunkSize: sizes.chunkSize
            ) { structs in
                func updateWork<Side: ModelKindSubject>(_ side: ComparisonSide<Side>, every stride: Int) -> Workload {
                    Workload(
                        name: Side.name, latencyUnit: "save",
                        objectsPerRun: (windowed + stride - 1) / stride * Self.updatesPerRun,
                        operationsPerRun: Self.updatesPerRun
                    ) { recorder in
                        var changed = 0
                        for _ in 0..<Self.updatesPerRun {
                            changed += try side.subject.updateTasks(dueIn: window, every: stride, recorder: recorder)
                        }
                        return changed
                    }
                }
                func saveWork<Side: ModelKindSubject>(_ side: ComparisonSide<Side>) -> Workload {
                    Workload(name: Side.name, latencyUnit: "save", objectsPerRun: changed.count, operationsPerRun: 1) {
                        recorder in
                        try side.subject.saveChanges(to: changed, recorder: recorder)
                    }
                }
                var rows: [ScenarioResult] = []
                for (stride, variant) in [(1, "all changed"), (10, "10% changed")] {
                    let measured = try context.measure(
                        updateWork(classes, every: stride), updateWork(structs, every: stride))
                    rows.append(
                        context.comparison(
                            .update, variant: variant, records: dataset.tasks.count,
                            classes: measured[0], structs: measured[1]))
                }
                for registered in [dataset.tasks.map(\.id), changed] {
                    try classes.subject.register(registered)
                    try structs.subject.register(registered)
                    let measured = try context.measure(saveWork(classes), saveWork(structs))
                    rows.append(
                        context.comparison(
                            .update, variant: "save \(grouped(changed.count)) of \(grouped(registered.count)) held",
                            records: dataset.tasks.count, classes: measured[0], structs: measured[1]))
                }
                return rows
            }
        }
    }
}
