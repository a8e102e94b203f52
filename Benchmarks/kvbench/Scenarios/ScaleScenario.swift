/// Scale: insert throughput and peak memory as the store grows, with time-ordered and with random task IDs.
///
/// Every measured run of every point (size, ID order, side) is a fresh child process, since the peak resident set
/// size is a process-wide high-water mark; see ``ScalePoint``. The subject, raw LMDB and SQLite children take turns,
/// in an order that rotates from run to run. Tasks are generated a chunk at a time between the timed regions, so a
/// process holds one chunk whatever the size, as a chunked import would. Latency is per chunk. Each side reports the
/// bytes its closed store keeps on disk, which the report prints per record.
struct ScaleScenario: Scenario {
    /// Runs the scenario.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult] {
        var results: [ScenarioResult] = []
        for count in context.sizes.scalePoints {
            for order in IDOrder.allCases {
                context.announce(
                    "scale: \(count) tasks with \(order.rawValue) IDs, one child process per run and side")
                var outcomes: [ScalePoint.Side: [ScalePoint.Outcome]] = [:]
                for repetition in 0..<context.options.repeats {
                    let sides: [ScalePoint.Side] = [.subject, .baseline, .sqlite]
                    for position in 0..<sides.count {
                        let side = sides[(position + repetition) % sides.count]
                        let point = ScalePoint(
                            count: count, order: order, side: side, durability: context.options.durability,
                            coding: context.options.coding,
                            chunkSize: context.sizes.chunkSize)
                        outcomes[side, default: []].append(try ChildProcess.measure(point))
                    }
                }
                func measurement(_ side: ScalePoint.Side) -> Measurement {
                    let runs = outcomes[side] ?? []
                    return Measurement(runs: runs.map(\.run), latencies: runs.flatMap(\.latencies), unit: "chunk")
                }
                results.append(
                    try context.result(
                        .scale, variant: order.label, records: count, subject: measurement(.subject),
                        baseline: measurement(.baseline), sqlite: measurement(.sqlite), idOrder: order))
            }
        }
        return results
    }
}
