import Foundation
import Synchronization

/// What the runs of one workload measured: throughput, latency, CPU time and memory.
struct Measurement: Codable, Sendable {
    /// One measured run.
    struct Run: Codable, Sendable {
        /// The objects the run processed.
        var objects: Int
        /// The wall time of the run's timed regions.
        var seconds: Double
        /// The CPU time (user and system) of the run's timed regions.
        var cpuSeconds: Double
        /// The peak resident set size while the run's timed regions ran, in bytes.
        var peakRSSBytes: Int
        /// The largest anonymous resident memory (heap and stacks, not the store's mapped file) seen after the
        /// run's timed regions, in bytes: what the process itself holds, which a chunked insert must keep bounded.
        var peakAnonymousBytes: Int
        /// What the run read, or what its store held after its writes, as decoded records, for the workloads that
        /// record it (the KVStore subject's and SQLite's); `nil` for the others.
        var digest: RecordDigest?
        /// The bytes the run's store kept on disk once closed (see `Workspace.storeBytes(in:)`), for the workloads
        /// that report it (the scale series'); `nil` for the others.
        var storeBytes: Int?

        /// The run's throughput.
        var objectsPerSecond: Double {
            seconds > 0 ? Double(objects) / seconds : 0
        }
    }

    /// The measured runs, warm-up excluded.
    var runs: [Run]
    /// The median throughput over the runs, in objects per second.
    var objectsPerSecond: Double
    /// The median CPU time of a run, in seconds.
    var cpuSeconds: Double
    /// The highest peak resident set size of the runs, in bytes.
    var peakRSSBytes: Int
    /// The highest anonymous resident memory of the runs, in bytes.
    var peakAnonymousBytes: Int
    /// The latency of one operation (a chunk, a batch, a query or a single object) over all runs.
    var latency: Latency
    /// The digest of the decoded records every run read or left in its store (``Runner`` requires the runs to
    /// agree), or `nil` when the workload records none.
    var digest: RecordDigest?
    /// The largest store the runs kept on disk, in bytes, or `nil` when they report none.
    var storeBytes: Int?

    /// Summarizes runs and the operation latencies they recorded.
    ///
    /// - Parameters:
    ///   - runs: The measured runs.
    ///   - latencies: Every operation's duration in nanoseconds, from all runs.
    ///   - unit: What one operation is, such as "chunk" or "query".
    init(runs: [Run], latencies: [UInt64], unit: String) {
        self.runs = runs
        objectsPerSecond = median(runs.map(\.objectsPerSecond))
        cpuSeconds = median(runs.map(\.cpuSeconds))
        peakRSSBytes = runs.map(\.peakRSSBytes).max() ?? 0
        peakAnonymousBytes = runs.map(\.peakAnonymousBytes).max() ?? 0
        latency = Latency(nanoseconds: latencies, unit: unit)
        digest = runs.first?.digest
        storeBytes = runs.compactMap(\.storeBytes).max()
    }
}

/// Percentiles of operation latencies, in microseconds.
struct Latency: Codable, Sendable {
    /// What one operation is: "chunk", "batch", "query" or "object".
    var unit: String
    /// The unit of the percentiles, for readers of the JSON report.
    var timeUnit = "microseconds"
    /// The number of operations measured.
    var samples: Int
    /// The median.
    var p50: Double
    /// The 90th percentile.
    var p90: Double
    /// The 99th percentile.
    var p99: Double
    /// The longest operation.
    var max: Double

    /// Computes nearest-rank percentiles of durations in nanoseconds.
    init(nanoseconds: [UInt64], unit: String) {
        let sorted = nanoseconds.sorted()
        func percentile(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((fraction * Double(sorted.count)).rounded(.up))
            return Double(sorted[Swift.max(0, Swift.min(sorted.count, rank) - 1)]) / 1_000
        }
        self.unit = unit
        samples = sorted.count
        p50 = percentile(0.50)
        p90 = percentile(0.90)
        p99 = percentile(0.99)
        max = Double(sorted.last ?? 0) / 1_000
    }
}

/// Times the regions of one run that count, and the operations inside them.
///
/// A workload prepares its data and store untimed, then wraps the measured work in ``timed(_:)``; inside it, each
/// operation (a chunk, a batch, a query...) goes through ``operation(_:)`` to record its latency.
final class RunRecorder {
    /// The wall time of the timed regions so far.
    private(set) var nanoseconds: UInt64 = 0
    /// The CPU time of the timed regions so far.
    private(set) var cpuSeconds = 0.0
    /// The duration of each operation so far, in nanoseconds.
    private(set) var latencies: [UInt64] = []
    /// The largest anonymous resident memory sampled after a timed region, in bytes.
    private(set) var peakAnonymousBytes = 0
    private var peakWasReset = false
    /// When anonymous memory was last sampled; sampling reads `/proc`, so it happens at most once a millisecond.
    private var lastSample: UInt64 = 0
    /// The decoded records the run read, or its store held after its writes; see ``add(tasks:)`` and
    /// ``checkContents(_:)``.
    private(set) var digest = RecordDigest()
    /// Whether the workload recorded a ``digest``.
    private(set) var hasDigest = false
    /// The peak resident set size when the workload ended its timed work to read its store back, if it did.
    private(set) var peakRSSBeforeCheck: Int?

    /// Creates a recorder with room for `expectedOperations` latencies.
    init(expectedOperations: Int) {
        latencies.reserveCapacity(expectedOperations)
    }

    /// Runs `body` as a timed region: its wall and CPU time count towards the run.
    ///
    /// The first timed region of a run resets the process's peak resident set size, so that the peak reflects the
    /// measured work rather than the preparation.
    @inline(__always)
    func timed<R>(_ body: () throws -> R) rethrows -> R {
        if !peakWasReset {
            ResourceUsage.resetPeakRSS()
            peakWasReset = true
        }
        let cpuStart = ResourceUsage.cpuSeconds()
        let start = Clock.nanoseconds()
        defer {
            let end = Clock.nanoseconds()
            nanoseconds += end - start
            cpuSeconds += ResourceUsage.cpuSeconds() - cpuStart
            // Outside the timed region: reading /proc takes tens of microseconds.
            if end - lastSample > 1_000_000 { sampleAnonymousMemory() }
        }
        return try body()
    }

    /// Records the process's anonymous resident memory if it is the largest seen in this run.
    func sampleAnonymousMemory() {
        peakAnonymousBytes = max(peakAnonymousBytes, ResourceUsage.anonymousRSSBytes())
        lastSample = Clock.nanoseconds()
    }

    /// Runs `body` as one operation and records its latency; call it inside ``timed(_:)``.
    @inline(__always)
    func operation<R>(_ body: () throws -> R) rethrows -> R {
        let start = Clock.nanoseconds()
        defer { latencies.append(Clock.nanoseconds() - start) }
        return try body()
    }

    /// Folds decoded tasks the run read into its ``digest``; call it where the run has them, inside its timed region
    /// on every side that records a digest alike.
    @inline(__always)
    func add<Tasks: Sequence<TaskRecord>>(tasks: Tasks) {
        digest.add(tasks: tasks)
        hasDigest = true
    }

    /// Folds the digest of records the run read into its ``digest``.
    @inline(__always)
    func add(_ records: RecordDigest) {
        digest.add(records)
        hasDigest = true
    }

    /// Reads back what the run's writes left in its store, after its timed regions, and records it as the run's
    /// ``digest``: the peak memory of the run is taken first, so that the reading does not count in it.
    ///
    /// - Parameter contents: Reads every record of the store and returns their digest.
    func checkContents(_ contents: () throws -> RecordDigest) rethrows {
        peakRSSBeforeCheck = ResourceUsage.peakRSSBytes()
        sampleAnonymousMemory()
        digest = try contents()
        hasDigest = true
    }

    /// Records the latency of an operation timed elsewhere (a commit's lag until a replica applied it).
    func record(latency nanoseconds: UInt64) {
        latencies.append(nanoseconds)
    }

    /// Runs `body` as a timed region made of one operation.
    @inline(__always)
    func timedOperation<R>(_ body: () throws -> R) rethrows -> R {
        try timed { try operation(body) }
    }
}

/// The monotonic clock.
enum Clock {
    /// Nanoseconds of `CLOCK_MONOTONIC`.
    @inline(__always)
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}

/// The sink every result goes through, so that the optimizer cannot drop the work that produced it.
enum BlackHole {
    private static let sink = Atomic<UInt64>(0)

    /// Consumes a checksum of what was read.
    @inline(never)
    static func consume(_ checksum: UInt64) {
        sink.wrappingAdd(checksum, ordering: .relaxed)
    }

    /// Consumes a checksum of titles, for models other than ``TaskRecord``.
    @inline(never)
    static func consume<Titles: Sequence<String>>(titles: Titles) {
        var checksum: UInt64 = 0
        for title in titles {
            checksum = checksum &* 31 &+ UInt64(title.utf8.count)
        }
        consume(checksum)
    }

    /// Everything consumed so far, printed in the JSON report so that it is observable.
    static var total: UInt64 {
        sink.load(ordering: .relaxed)
    }
}

/// The median of `values`, or 0 when there are none.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
