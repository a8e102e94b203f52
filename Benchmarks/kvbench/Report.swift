import CSQLite
import Foundation

/// Everything one kvbench run found: the machine, the settings and one row per scenario variant.
///
/// ``table`` is what the terminal shows; the JSON document (``writeJSON(to:)``) holds every number, the baseline's
/// latencies, CPU time and memory included.
struct Report: Encodable {
    /// The settings of a run.
    struct Settings: Encodable {
        /// The size class.
        var size: SizeClass
        /// The measured runs per scenario, after one warm-up.
        var repeats: Int
        /// Whether commits waited for the disk.
        var durability: CommitSync
        /// How KVStore coded the models.
        var coding: RecordCoding
        /// The scenarios run.
        var scenarios: [ScenarioKind]
        /// The subject measured against the baseline.
        var subject: String
        /// The baseline.
        var baseline: String
        /// The second baseline of most raw C rows, with its version.
        var sqlite = "\(RawSQLite.name) \(String(cString: sqlite3_libversion()))"
        /// The seed of the generated data.
        var seed: UInt64
        /// The sizes of every scenario.
        var sizes: ScenarioSizes
        /// The average size of an encoded task record, in bytes.
        var averageTaskBytes: Double
    }

    /// The machine.
    var machine: Machine
    /// The settings.
    var settings: Settings
    /// One row per scenario variant.
    var results: [ScenarioResult]
    /// The wall time of the whole run, preparation included, in seconds.
    var wallSeconds: Double
    /// What the black hole consumed, printed so that no read can be optimized away.
    var blackHole: UInt64

    /// The machine and settings, as printed above the table.
    var header: String {
        let mode =
            switch settings.durability {
            case .noSync: "nosync (MDB_NOSYNC: commits do not wait for the disk; CPU work)"
            case .syncData: "syncdata (MDB_NOMETASYNC: every commit waits for its data, not its metadata)"
            case .sync: "sync (every commit waits for the disk)"
            }
        return """
            \(machine.summary)
            settings: size \(settings.size.rawValue), \(settings.repeats) measured runs after 1 warm-up, \
            chunks of \(settings.sizes.chunkSize) tasks, durability \(mode)
            subject:  \(settings.subject), models coded through \(settings.coding == .fields ? "FieldCodable" : "Codable"); \
            baseline: \(settings.baseline), same run, runs interleaved, and for most rows \(settings.sqlite); \
            task records of \(String(format: "%.0f", settings.averageTaskBytes)) bytes on average
            """
    }

    /// The results as aligned tables: the rows measured against raw C, then those of the class/struct comparison.
    var table: String {
        let rawRows = results.filter { $0.baselineKind == .rawC }
        let modelKindRows = results.filter { $0.baselineKind == .structModels }
        let historyRows = results.filter { $0.baselineKind == .historyOff }
        let replicationRows = results.filter { $0.baselineKind == .unreplicated }
        var text = ""
        if !rawRows.isEmpty || (modelKindRows.isEmpty && historyRows.isEmpty && replicationRows.isEmpty) {
            text += Self.table(
                rawRows, subject: "subject", baseline: "baseline", ratio: "ratio", baselineShort: "base",
                showsSQLite: rawRows.contains { $0.sqlite != nil })
            text += """

                N: records inserted, or in the store. obj/run: objects each subject run processes. obj/s: objects per \
                second, median of the runs.
                ratio: subject / baseline throughput (above 1: faster than raw C). CPU ratio: the same with CPU time \
                instead of wall time (objects per CPU second of each side), which waiting does not move.
                SQLite obj/s: the same work through the SQLite C API (WAL, prepared statements, WITHOUT ROWID tables, \
                the indexes KVStore's models declare, foreign keys (ON DELETE CASCADE for tasks), synchronous \
                \(settings.durability.sqliteSynchronous)), in the same run, its records and the subject's checked \
                equal. vs SQLite: subject / SQLite throughput (above 1: faster than SQLite); - where not measured.
                Latency (percentiles per operation), CPU s (median per run), RSS MB (peak resident set, which \
                includes the store's mapped pages) and anon MB (largest anonymous memory seen after each timed \
                region: the heap, without the mapped file) are the subject's; base columns are the baseline's.
                """
        }
        let sizedRows = rawRows.filter { $0.subject.storeBytes != nil }
        if !sizedRows.isEmpty {
            text += "\n\nThe stores on disk after the scale series' inserts, once closed:\n\n"
            text += Self.storeSizeTable(sizedRows)
            text += """

                B/record: the bytes of the store's files (LMDB's data.mdb, whose size is every page written, free \
                pages included; SQLite's database file, its log checkpointed at close) over the tasks in it, its \
                projects (a tenth as many) and indexes included. The raw LMDB baseline stores the same keys, records \
                and index entries as KVStore, without its catalog or its checks of references.
                """
        }
        if !modelKindRows.isEmpty {
            if !text.isEmpty { text += "\n\n" }
            text += """
                PersistentModel classes against Model structs: the same work through a ModelContext on the same \
                records and indexes, in the same run, runs interleaved.


                """
            text += Self.table(
                modelKindRows, subject: "class", baseline: "struct", ratio: "class/struct", baselineShort: "struct")
            text += """

                class/struct: the classes' throughput / the structs' (1.0: as fast as structs; 0.5: half as fast). \
                The other columns read as above, for the classes; struct columns are the structs'.
                """
        }
        if !historyRows.isEmpty {
            if !text.isEmpty { text += "\n\n" }
            text += """
                The store's change history on against off: the same work through the subject, in the same run, runs \
                interleaved; with history on, every commit also writes its history entry (IDs, kinds, tombstones) \
                and prunes by the default retention.


                """
            text += Self.table(
                historyRows, subject: "on", baseline: "off", ratio: "on/off", baselineShort: "off")
            text += """

                on/off: throughput with history / without (1.0: history costs nothing; 0.9: it adds about 11% to the \
                time). The other columns read as above, for history on; off columns are history off's.
                """
        }
        if !replicationRows.isEmpty {
            if !text.isEmpty { text += "\n\n" }
            text += """
                Replication on loopback: commits on a primary with history on, its publisher sending them to a \
                JetStream stream (1 node, or 3 with 3 stream replicas) and a replica store applying them, all on this \
                machine; against the same commits with nothing replicated. Insert and update commit \
                \(ReplicationScenario.commitSize) tasks at a time as fast as the primary can; the paced insert \
                commits 100 tasks every 5 ms. At most \(ReplicationScenario.maximumRepeats) measured runs of each \
                side.


                """
            text += Self.table(
                replicationRows, subject: "replicated", baseline: "local", ratio: "repl/local",
                baselineShort: "local")
            text += """

                replicated obj/s: tasks per second from the first commit until the replica applied the last. \
                repl/local: that throughput / the primary's alone. Latencies are each commit's lag, from its commit \
                to the moment the replica showed it: for the paced insert, a commit's way through publisher, stream \
                and replica; for the others, mostly the queue of commits made faster than they replicate.
                """
        }
        return text
    }

    /// `results` as an aligned table whose subject and baseline columns have the given names.
    private static func table(
        _ results: [ScenarioResult], subject subjectName: String, baseline baselineName: String,
        ratio ratioName: String, baselineShort: String, showsSQLite: Bool = false
    ) -> String {
        var headings = [
            "scenario", "N", "obj/run", "mode", "\(subjectName) obj/s", "\(baselineName) obj/s", ratioName, "CPU ratio",
        ]
        if showsSQLite { headings += ["SQLite obj/s", "vs SQLite"] }
        headings += [
            "latency per", "p50", "p90", "p99", "CPU s", "RSS MB", "\(baselineShort) RSS MB", "anon MB",
            "\(baselineShort) anon MB",
        ]
        let leftAligned: Set<Int> = [0, 3, showsSQLite ? 10 : 8]
        var rows = [headings]
        for result in results {
            let subject = result.subject
            var row = [
                result.label, grouped(result.records), grouped(subject.runs.first?.objects ?? 0),
                result.durability.rawValue,
                grouped(Int(subject.objectsPerSecond.rounded())),
                grouped(Int(result.baseline.objectsPerSecond.rounded())), ratio(result.ratio), ratio(result.cpuRatio),
            ]
            if showsSQLite {
                row += [
                    result.sqlite.map { grouped(Int($0.objectsPerSecond.rounded())) } ?? "-",
                    result.sqliteRatio.map(ratio) ?? "-",
                ]
            }
            row += [
                subject.latency.unit, duration(subject.latency.p50), duration(subject.latency.p90),
                duration(subject.latency.p99), String(format: "%.3f", subject.cpuSeconds),
                megabytes(subject.peakRSSBytes), megabytes(result.baseline.peakRSSBytes),
                megabytes(subject.peakAnonymousBytes), megabytes(result.baseline.peakAnonymousBytes),
            ]
            rows.append(row)
        }
        return aligned(rows, leftAligned: leftAligned)
    }

    /// `rows` (the headings first) as lines of columns padded to their widest cell, two spaces apart, the columns
    /// in `leftAligned` on the left and the others on the right, with a rule under the headings.
    private static func aligned(_ rows: [[String]], leftAligned: Set<Int>) -> String {
        var widths = [Int](repeating: 0, count: rows.first?.count ?? 0)
        for row in rows {
            for (column, cell) in row.enumerated() {
                widths[column] = max(widths[column], cell.count)
            }
        }
        var lines = rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return leftAligned.contains(column) ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        lines.insert(String(repeating: "-", count: lines[0].count), at: 1)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The bytes per record of the stores of `results`, each side's and KVStore's over SQLite's.
    private static func storeSizeTable(_ results: [ScenarioResult]) -> String {
        func perRecord(_ measurement: Measurement?, _ records: Int) -> String {
            guard let bytes = measurement?.storeBytes, records > 0 else { return "-" }
            return String(format: "%.0f", Double(bytes) / Double(records))
        }
        func megabytes(_ measurement: Measurement?) -> String {
            measurement?.storeBytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-"
        }
        let headings = [
            "scenario", "N", "subject MB", "subject B/record", "base B/record", "SQLite MB", "SQLite B/record",
            "subject/SQLite",
        ]
        var rows = [headings]
        for result in results {
            let sizes = (result.subject.storeBytes, result.sqlite?.storeBytes)
            var versus = "-"
            if let subject = sizes.0, let sqlite = sizes.1, sqlite > 0 {
                versus = String(format: "%.2f", Double(subject) / Double(sqlite))
            }
            rows.append([
                result.label, grouped(result.records), megabytes(result.subject),
                perRecord(result.subject, result.records), perRecord(result.baseline, result.records),
                megabytes(result.sqlite), perRecord(result.sqlite, result.records), versus,
            ])
        }
        return aligned(rows, leftAligned: [0])
    }

    /// Writes the report as pretty-printed JSON.
    func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}

/// `1234567` as `1,234,567`.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (position, digit) in digits.enumerated() {
        if position > 0 && (digits.count - position) % 3 == 0 { result += "," }
        result.append(digit)
    }
    return value < 0 ? "-" + result : result
}

/// A duration in microseconds, in the unit that suits it.
private func duration(_ microseconds: Double) -> String {
    switch microseconds {
    case ..<10: String(format: "%.2f µs", microseconds)
    case ..<1_000: String(format: "%.1f µs", microseconds)
    case ..<1_000_000: String(format: "%.2f ms", microseconds / 1_000)
    default: String(format: "%.2f s", microseconds / 1_000_000)
    }
}

/// A ratio with two decimals, or two significant digits when it is small.
private func ratio(_ value: Double) -> String {
    value >= 0.1 ? String(format: "%.2f", value) : String(format: "%.2g", value)
}

private func megabytes(_ bytes: Int) -> String {
    String(format: "%.1f", Double(bytes) / 1_048_576)
}
