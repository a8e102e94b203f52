import CommandLineKit
import KVStore

/// `crashtest run`: starts writer processes, kills each at a random moment, and checks the store after each kill
/// (``CrashRun``).
struct RunCommand: CrashTestCommand {
    static let configuration = CommandConfiguration(
        name: "run",
        abstract: "Start writers, kill each at a random moment, and check the store after each kill.",
        discussion: """
            Each iteration starts a writer process that runs random transactions on a durable store, logging each \
            before it commits, and kills it with SIGKILL at a random moment; then the store is checked as 'kvtool \
            check' does and compared with the log: every acknowledged transaction must be there, and the one in \
            flight wholly present or wholly absent. The iterations continue on one store, reopened after every kill, \
            unless --fresh-every is given.
            The run stops at the first problem, and keeps the store and its log for a replay with --seed.
            """)

    /// The options of `crashtest run`.
    struct Arguments: ParsableArguments {
        let iterations = CommonOptions.iterations(help: "Writers to start and kill.")
        let seed = CommonOptions.seed
        let directory = Option<String?>(
            "directory", valueName: "path",
            help: "Where to keep the store and its log, which are removed when no problem was found.",
            defaultDescription: "a new temporary directory", parser: .nonEmpty(expecting: "a directory"))
        let freshEvery = Option<Int>(
            "fresh-every", valueName: "k", help: "Start a new store every k iterations; 0 keeps one store for the run.",
            default: 0, parser: .integer(in: 0...))
        let maximumDelay = Option<Int>(
            "max-delay-ms", valueName: "ms", help: "The longest wait between a writer's start of work and its kill.",
            default: 250, parser: .integer(in: 0...))
        let readerEvery = Option<Int>(
            "reader-every", valueName: "r",
            help: "Kill a process inside a read transaction every r iterations; 0 never.",
            default: 10, parser: .integer(in: 0...))
        let durability = CommonOptions.durability
        let verbose = CommonOptions.verbose
    }

    /// How many writers to start and kill.
    let iterations: Int
    /// The seed of the run's random choices.
    let seed: UInt64
    /// Where to keep the store and its log; a new temporary directory when `nil`.
    let directory: String?
    /// Start a new store every this many iterations; 0 keeps one store for the whole run.
    let freshEvery: Int
    /// The longest wait, in milliseconds, between a writer's ready line and its kill.
    let maximumDelay: Int
    /// Run the stale-reader scenario every this many iterations; 0 never.
    let readerEvery: Int
    /// How long each commit of the writers waits for the disk.
    let durability: Durability
    /// Print one line per iteration.
    let verbose: Bool

    init(_ arguments: ParsedArguments<Arguments>) throws(UsageError) {
        iterations = try arguments[\.iterations]
        seed = CommonOptions.seed(try arguments[\.seed])
        directory = try arguments[\.directory]
        freshEvery = try arguments[\.freshEvery]
        maximumDelay = try arguments[\.maximumDelay]
        readerEvery = try arguments[\.readerEvery]
        durability = try arguments[\.durability]
        verbose = arguments[\.verbose]
    }

    func run() -> Int32 {
        CrashRun(options: self).run()
    }
}
