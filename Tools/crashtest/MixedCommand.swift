import CommandLineKit

/// `crashtest mixed`: old-schema writers beside migrations killed at random points (``MixedVersionRun``).
struct MixedCommand: CrashTestCommand {
    static let configuration = CommandConfiguration(
        name: "mixed",
        abstract: "Run old-schema writers while migrations to a new schema are killed at random points.",
        discussion: """
            Each iteration seeds a fresh store of schema 1.0.0, starts two writers of that schema, and starts and \
            kills migrations to 2.0.0 at random moments (with none killed, one runs to its end beside the writers). \
            Each writer must stop with a clear error, never a crash; then a new open finishes the migration, and \
            every save a writer saw commit must be there, migrated, and 'kvtool check' clean. The run stops at the first \
            problem.
            """)

    /// The options of `crashtest mixed`.
    struct Arguments: ParsableArguments {
        let iterations = CommonOptions.iterations(help: "Rounds to run, each on a fresh store.")
        let seed = CommonOptions.seed
        let verbose = CommonOptions.verbose
    }

    /// How many rounds to run.
    let iterations: Int
    /// The seed of the run's random choices.
    let seed: UInt64
    /// Print one line per round.
    let verbose: Bool

    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        iterations = try arguments[\.iterations]
        seed = CommonOptions.seed(try arguments[\.seed])
        verbose = arguments[\.verbose]
    }

    func run() -> Int32 {
        MixedVersionRun(iterations: iterations, seed: seed, verbose: verbose).run()
    }
}
