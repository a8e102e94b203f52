import Foundation
import Testing

/// Random sequences of operations applied to a store and to a plain in-memory reference of the same semantics,
/// which must hold the same records after every step; the integrity check must pass every few steps.
///
/// Seeded and reproducible: a failure names its seed and step. `KVSTORE_MODEL_SEED=<seed>` runs that seed alone,
/// `KVSTORE_MODEL_STEPS=<n>` changes the number of steps per seed.
///
/// The seeds run one after the other: eight at once add allocator arenas to the process, whose growth
/// `CheckMemoryTests` (same process) would count as the integrity check's.
@Suite(.serialized) struct ModelBasedTests {
    /// The process's environment variables.
    static let environment = ProcessInfo.processInfo.environment
    /// The seeds to run: `KVSTORE_MODEL_SEED` alone, or 1 to 8.
    static let seeds: [UInt64] = environment["KVSTORE_MODEL_SEED"].flatMap { UInt64($0) }.map { [$0] } ?? Array(1...8)
    /// The steps per seed: `KVSTORE_MODEL_STEPS`, or 400.
    static let steps = environment["KVSTORE_MODEL_STEPS"].flatMap { Int($0) } ?? 400

    @Test(arguments: seeds) func storeAgreesWithTheReference(seed: UInt64) throws {
        let run = try ModelBasedRun(seed: seed)
        defer { try? run.container.close() }
        do {
            try run.run(steps: Self.steps)
        } catch let mismatch as ModelBasedMismatch {
            Issue.record(Comment(rawValue: mismatch.description))
            return
        }
        // A run must both succeed and refuse, for each reason a save can be refused.
        let outcomes = run.outcomes
        #expect(outcomes["success", default: 0] > Self.steps / 4, "seed \(seed): \(outcomes)")
        if Self.steps >= 200 {
            #expect(outcomes["uniqueViolation", default: 0] > 0, "seed \(seed): \(outcomes)")
            #expect(outcomes["missingReference", default: 0] > 0, "seed \(seed): \(outcomes)")
            let denied = outcomes["deleteDenied", default: 0] + outcomes["chunked deleteDenied", default: 0]
            #expect(denied > 0, "seed \(seed): \(outcomes)")
        }
    }
}
