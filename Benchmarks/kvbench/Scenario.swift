import Foundation

/// A named piece of work kvbench measures, with the subject on one side and the raw C API on the other; most also
/// measure the same work through the SQLite C API (``RawSQLite``).
///
/// A scenario prepares its data outside the timed regions, opens a fresh store per side (a fresh one per run when
/// the work changes the store), and returns one ``ScenarioResult`` per row of the report.
protocol Scenario {
    /// Runs the scenario for `subject` and returns its rows.
    ///
    /// - Parameters:
    ///   - subject: The library side to measure.
    ///   - context: The options, sizes and temporary directory of the run.
    func run<Subject: ScenarioSubject>(
        _ subject: Subject.Type,
        in context: ScenarioContext
    ) throws -> [ScenarioResult]
}

/// The scenarios, by the name `--scenario` takes.
enum ScenarioKind: String, CaseIterable, Codable, Sendable {
    /// Chunked insert of N tasks, 10,000 per write transaction.
    case insert
    /// One write transaction per task.
    case naiveInsert = "naive-insert"
    /// A batch of IDs in one read transaction, and the same IDs one transaction each.
    case fetch
    /// The tasks of many projects through the relationship index.
    case prefetch
    /// A predicate on the indexed attribute, through the index and by a full scan.
    case query
    /// Compound-index ranges, an OR across two indexes, a count, sums and a fetch across a relationship, on 100k
    /// orders, each through the plan that fits it and, for some, by decoding every order as before.
    case queryPower = "query-power"
    /// Read-modify-write of many tasks, some of which move to another project.
    case update
    /// Deleting projects with their tasks.
    case cascadeDelete = "cascade-delete"
    /// Insert throughput and peak memory from 10k to 1M records, time-ordered and random IDs.
    case scale
    /// The insert and update workloads on a primary whose history a publisher sends to a JetStream stream on
    /// loopback (one node, then a cluster of three) while a replica follows it.
    case replication

    /// The scenario's implementation.
    var scenario: any Scenario {
        switch self {
        case .insert: InsertScenario()
        case .naiveInsert: NaiveInsertScenario()
        case .fetch: FetchScenario()
        case .prefetch: PrefetchScenario()
        case .query: QueryScenario()
        case .queryPower: QueryPowerScenario()
        case .update: UpdateScenario()
        case .cascadeDelete: CascadeDeleteScenario()
        case .scale: ScaleScenario()
        case .replication: ReplicationScenario()
        }
    }
}

/// What every scenario of one kvbench run shares.
struct ScenarioContext {
    /// The command line's options.
    let options: Options
    /// The dataset sizes for ``Options/size``.
    let sizes: ScenarioSizes
    /// Where stores are created.
    let workspace: Workspace

    /// The seed of all generated data.
    static let seed: UInt64 = 0x6B76_6265_6E63_6801

    /// The settings of a store that will hold about `records` records: a map that holds them with room to spare,
    /// since the raw baseline's map cannot grow, and the run's durability.
    func settings(records: Int) -> StoreSettings {
        StoreSettings(
            mapSize: Swift.max(1 << 30, records * 2_048), durability: options.durability, coding: options.coding)
    }

    /// Measures workloads with the run's repeat count; see ``Runner/measure(_:repeats:)``.
    func measure(_ workloads: Workload...) throws -> [Measurement] {
        try Runner.measure(workloads, repeats: options.repeats)
    }

    /// Tells on standard error what is about to run, so that a long run shows progress.
    func announce(_ message: String) {
        FileHandle.standardError.write(Data("kvbench: \(message)\n".utf8))
    }

    /// A row of the report comparing `subject` with `baseline`.
    func result(
        _ kind: ScenarioKind,
        variant: String? = nil,
        records: Int,
        subject: Measurement,
        baseline: Measurement,
        idOrder: IDOrder = .timeOrdered
    ) -> ScenarioResult {
        ScenarioResult(
            scenario: kind.rawValue, variant: variant, records: records, durability: options.durability,
            idOrder: idOrder, baselineKind: .rawC, subject: subject, baseline: baseline)
    }

    /// A row of the report comparing `subject` with `baseline` and with `sqlite`, the same work through the SQLite C
    /// API, after checking that the subject and SQLite processed the same number of objects and read or stored the
    /// same records (their ``Measurement/digest``s).
    ///
    /// - Throws: ``CrossCheckError`` when they did not.
    func result(
        _ kind: ScenarioKind,
        variant: String? = nil,
        records: Int,
        subject: Measurement,
        baseline: Measurement,
        sqlite: Measurement,
        idOrder: IDOrder = .timeOrdered
    ) throws -> ScenarioResult {
        var row = result(
            kind, variant: variant, records: records, subject: subject, baseline: baseline, idOrder: idOrder)
        let subjectObjects = subject.runs.first?.objects ?? 0
        let sqliteObjects = sqlite.runs.first?.objects ?? 0
        guard subjectObjects == sqliteObjects, subject.digest == sqlite.digest else {
            func described(_ objects: Int, _ digest: RecordDigest?) -> String {
                let records = digest.map { "\($0.records) decoded records with checksum \($0.checksum)" } ?? "no digest"
                return "\(objects) objects, \(records)"
            }
            throw CrossCheckError(
                description: "\(row.label): \(Subjects.current.name) and \(RawSQLite.name) disagree: "
                    + "\(Subjects.current.name) \(described(subjectObjects, subject.digest)); "
                    + "\(RawSQLite.name) \(described(sqliteObjects, sqlite.digest)). One side read or stored other "
                    + "records than the other: the two sides' workloads of this scenario no longer do the same work.")
        }
        row.sqlite = sqlite
        return row
    }

    /// The row of the history comparison, for a subject that records history: the subject's work with the store's
    /// change history on beside the same work with it off (`work` makes the subject's workload for settings and a
    /// name), runs interleaved; no row for another subject.
    func historyComparison<Subject: ScenarioSubject>(
        _ kind: ScenarioKind,
        of subject: Subject.Type,
        records: Int,
        settings: StoreSettings,
        work: (StoreSettings, String) -> Workload
    ) throws -> [ScenarioResult] {
        guard Subject.recordsHistory else { return [] }
        var recording = settings
        recording.recordsHistory = true
        let measured = try measure(work(recording, "history on"), work(settings, "history off"))
        return [
            ScenarioResult(
                scenario: kind.rawValue, variant: "history", records: records, durability: options.durability,
                idOrder: .timeOrdered, baselineKind: .historyOff, subject: measured[0], baseline: measured[1])
        ]
    }

    /// A row of the class/struct comparison: `classes` measured with `PersistentModel` classes beside `structs`,
    /// the same work with struct models.
    func comparison(
        _ kind: ScenarioKind,
        variant: String? = nil,
        records: Int,
        classes: Measurement,
        structs: Measurement
    ) -> ScenarioResult {
        ScenarioResult(
            scenario: kind.rawValue, variant: variant.map { "classes, \($0)" } ?? "classes", records: records,
            durability: options.durability, idOrder: .timeOrdered, baselineKind: .structModels, subject: classes,
            baseline: structs)
    }
}

/// What a row's baseline is.
enum BaselineKind: String, Codable, Sendable {
    /// The same storage work through the raw LMDB C API.
    case rawC = "raw C API"
    /// The same work with `Model` structs through a `ModelContext`, the subject's being `PersistentModel` classes.
    case structModels = "struct models"
    /// The same work with the store's change history off, the subject's having it on.
    case historyOff = "history off"
    /// The same work with history on and nothing replicated, the subject's measured until a replica applied it.
    case unreplicated = "not replicated"
}

/// One row of the report: a subject's measurement beside the baseline's.
struct ScenarioResult: Encodable, Sendable {
    /// The scenario's name, as `--scenario` takes it.
    var scenario: String
    /// Which variant of the scenario, such as "batch" or "full scan", if it has several.
    var variant: String?
    /// The size of the scenario: the records inserted, or the records in the store that is read.
    var records: Int
    /// Whether commits waited for the disk.
    var durability: CommitSync
    /// How task IDs were generated.
    var idOrder: IDOrder
    /// What the baseline is: the raw C API, or struct models for a row of the class/struct comparison.
    var baselineKind: BaselineKind
    /// The subject's measurement.
    var subject: Measurement
    /// The baseline's measurement.
    var baseline: Measurement
    /// The same work through the SQLite C API, for the rows measured against it.
    var sqlite: Measurement?

    /// The subject's throughput divided by the baseline's: above 1 the subject is faster than raw C, or for a row of
    /// the class/struct comparison, classes are faster than structs.
    var ratio: Double {
        baseline.objectsPerSecond > 0 ? subject.objectsPerSecond / baseline.objectsPerSecond : 0
    }

    /// The subject's objects per CPU second divided by the baseline's: the ratio of the work each side's processor
    /// does, which waiting (for the disk, another thread, a server) does not move as it moves the wall-time ratio.
    var cpuRatio: Double {
        Self.cpuRatio(of: subject, to: baseline)
    }

    /// `measurement`'s objects per CPU second divided by `other`'s; 0 when either took no measurable CPU time.
    private static func cpuRatio(of measurement: Measurement, to other: Measurement) -> Double {
        let objects = Double(measurement.runs.first?.objects ?? 0)
        let otherObjects = Double(other.runs.first?.objects ?? 0)
        guard measurement.cpuSeconds > 0, other.cpuSeconds > 0, otherObjects > 0 else { return 0 }
        return (objects / measurement.cpuSeconds) / (otherObjects / other.cpuSeconds)
    }

    /// The subject's throughput divided by SQLite's, for the rows measured against it: above 1 the subject is
    /// faster than SQLite.
    var sqliteRatio: Double? {
        sqlite.map { $0.objectsPerSecond > 0 ? subject.objectsPerSecond / $0.objectsPerSecond : 0 }
    }

    /// The subject's objects per CPU second divided by SQLite's, for the rows measured against it.
    var sqliteCPURatio: Double? {
        sqlite.map { Self.cpuRatio(of: subject, to: $0) }
    }

    /// The scenario and variant, as the report shows them.
    var label: String {
        variant.map { "\(scenario) (\($0))" } ?? scenario
    }

    private enum CodingKeys: String, CodingKey {
        case scenario, variant, records, durability, idOrder, baselineKind, subject, baseline, ratio, cpuRatio, sqlite
        case sqliteRatio, sqliteCPURatio
    }

    /// Encodes the row with its ratio.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scenario, forKey: .scenario)
        try container.encodeIfPresent(variant, forKey: .variant)
        try container.encode(records, forKey: .records)
        try container.encode(durability, forKey: .durability)
        try container.encode(idOrder, forKey: .idOrder)
        try container.encode(baselineKind, forKey: .baselineKind)
        try container.encode(subject, forKey: .subject)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(cpuRatio, forKey: .cpuRatio)
        try container.encodeIfPresent(sqlite, forKey: .sqlite)
        try container.encodeIfPresent(sqliteRatio, forKey: .sqliteRatio)
        try container.encodeIfPresent(sqliteCPURatio, forKey: .sqliteCPURatio)
    }
}

/// The error of a row whose KVStore and SQLite sides did not read or store the same records.
struct CrossCheckError: Error, CustomStringConvertible {
    /// What differed.
    var description: String
}
