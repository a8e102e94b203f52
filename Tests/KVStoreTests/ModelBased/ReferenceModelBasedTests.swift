import Foundation
import Testing

/// Random sequences of operations on struct models and reference models through one context, checked after every
/// step against plain in-memory references: what the context shows (values, one object per model, counts, predicates,
/// sorted pages, both sides of every relationship, `hasChanges`), and after each save what a fresh context shows and
/// the store's integrity.
///
/// Seeded and reproducible: a failure names its seed and step. `KVSTORE_REFMODEL_SEED=<seed>` runs that seed alone,
/// `KVSTORE_REFMODEL_STEPS=<n>` changes the number of steps per seed. The smallest forms of the failures it found are
/// kept in ``ReferenceModelRegressionTests``.
///
/// Each seed runs on a store of its own on disk, which the integrity check reads after every save.
///
/// The seeds run one after the other, as those of ``ModelBasedTests`` do (the integrity check's memory is measured in
/// the same process).
@Suite(.serialized) struct ReferenceModelBasedTests {
    /// The process's environment variables.
    static let environment = ProcessInfo.processInfo.environment
    /// The seeds to run: `KVSTORE_REFMODEL_SEED` alone, or 1 to 6.
    static let seeds: [UInt64] =
        environment["KVSTORE_REFMODEL_SEED"].flatMap { UInt64($0) }.map { [$0] } ?? Array(1...6)
    /// The steps per seed: `KVSTORE_REFMODEL_STEPS`, or 250.
    static let steps = environment["KVSTORE_REFMODEL_STEPS"].flatMap { Int($0) } ?? 250

    @Test(arguments: seeds) func contextAgreesWithTheReference(seed: UInt64) throws {
        let directory = StoreDirectory()
        let run = try ReferenceModelBasedRun(seed: seed, path: directory.path)
        defer { try? run.container.close() }
        do {
            try run.run(steps: Self.steps)
        } catch let mismatch as ModelBasedMismatch {
            Issue.record(Comment(rawValue: mismatch.description))
            return
        }
        // A run must save, refuse saves for each reason the struct changes give, roll back and start fresh contexts.
        let outcomes = run.outcomes
        #expect(outcomes["save", default: 0] > Self.steps / 40, "seed \(seed): \(outcomes)")
        if Self.steps >= 200 {
            #expect(outcomes["save refused: uniqueViolation", default: 0] > 0, "seed \(seed): \(outcomes)")
            #expect(outcomes["save refused: missingReference", default: 0] > 0, "seed \(seed): \(outcomes)")
            #expect(outcomes["rollback", default: 0] > 0, "seed \(seed): \(outcomes)")
            #expect(outcomes["delete from a fresh context", default: 0] > 0, "seed \(seed): \(outcomes)")
        }
    }
}
