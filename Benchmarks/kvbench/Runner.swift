/// One side of a comparison: how to do one run of a scenario's work.
struct Workload {
    /// Who does the work, such as "LMDB binding" or "raw C API".
    var name: String
    /// What one recorded operation is: "chunk", "batch", "query" or "object".
    var latencyUnit: String
    /// The number of objects every run must process; a run that does otherwise is an error, because then the
    /// sides did not do the work they claim.
    var objectsPerRun: Int
    /// The number of operations a run records, to reserve room for their latencies.
    var operationsPerRun: Int
    /// Does one run: prepares untimed, wraps the measured work in the recorder's timed regions, and returns the
    /// number of objects processed.
    var run: (RunRecorder) throws -> Int
}

/// Runs workloads side by side: one warm-up run each, then the measured runs interleaved, so that a machine that
/// slows down or speeds up during the scenario affects every side alike.
enum Runner {
    /// The error of a workload that processed another number of objects than its scenario asked for, or whose runs
    /// read or stored different records.
    struct CountMismatch: Error, CustomStringConvertible {
        /// What was wrong.
        var description: String
    }

    /// Measures `workloads`.
    ///
    /// Run `r` takes the workloads in their order when `r` is even and in reverse order when it is odd.
    ///
    /// - Parameters:
    ///   - workloads: The sides to measure; the first is the subject by convention.
    ///   - repeats: The number of measured runs of each workload.
    ///   - warmUps: The warm-up runs, when they should be smaller than the workloads themselves.
    /// - Returns: One measurement per workload, in the order of `workloads`.
    /// - Throws: What a workload throws, or ``CountMismatch`` when a run processed another number of objects than
    ///   its workload's ``Workload/objectsPerRun`` or the runs of a workload recorded different digests.
    static func measure(_ workloads: [Workload], repeats: Int, warmUps: [Workload]? = nil) throws -> [Measurement] {
        for workload in warmUps ?? workloads {
            _ = try runOnce(workload)
        }
        var runs = [[Measurement.Run]](repeating: [], count: workloads.count)
        var latencies = [[UInt64]](repeating: [], count: workloads.count)
        for repetition in 0..<repeats {
            let order = repetition % 2 == 0 ? Array(workloads.indices) : workloads.indices.reversed()
            for index in order {
                let (run, recorded) = try runOnce(workloads[index])
                runs[index].append(run)
                latencies[index].append(contentsOf: recorded)
            }
        }
        for (workload, runs) in zip(workloads, runs) {
            if let first = runs.first?.digest, let other = runs.first(where: { $0.digest != first }) {
                throw CountMismatch(
                    description: "\(workload.name) read or stored other records in one run than in another: "
                        + "\(first.records) records with checksum \(first.checksum), then "
                        + "\(other.digest?.records ?? 0) with checksum \(other.digest?.checksum ?? 0)")
            }
        }
        return workloads.indices.map { index in
            Measurement(runs: runs[index], latencies: latencies[index], unit: workloads[index].latencyUnit)
        }
    }

    /// Does one run of `workload` and returns what it measured, with the latency of each of its operations in
    /// nanoseconds.
    ///
    /// - Throws: What the workload throws, or ``CountMismatch`` when it processed another number of objects than
    ///   ``Workload/objectsPerRun``.
    static func runOnce(_ workload: Workload) throws -> (Measurement.Run, [UInt64]) {
        let recorder = RunRecorder(expectedOperations: workload.operationsPerRun)
        let objects = try workload.run(recorder)
        let peak: Int
        if let beforeCheck = recorder.peakRSSBeforeCheck {
            peak = beforeCheck
        } else {
            peak = ResourceUsage.peakRSSBytes()
            recorder.sampleAnonymousMemory()
        }
        if recorder.hasDigest { BlackHole.consume(recorder.digest.checksum) }
        guard objects == workload.objectsPerRun else {
            throw CountMismatch(
                description: "\(workload.name) processed \(objects) objects instead of \(workload.objectsPerRun)")
        }
        let run = Measurement.Run(
            objects: objects, seconds: Double(recorder.nanoseconds) / 1e9, cpuSeconds: recorder.cpuSeconds,
            peakRSSBytes: peak, peakAnonymousBytes: recorder.peakAnonymousBytes,
            digest: recorder.hasDigest ? recorder.digest : nil)
        return (run, recorder.latencies)
    }
}
