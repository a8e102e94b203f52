import Foundation

/// An actor that owns a ``ModelContext`` for background work, like SwiftData's `ModelActor`.
///
/// Its work runs on a serial queue of its own, off the cooperative thread pool, so a save that waits for LMDB's
/// write lock never holds up other tasks. Models are values: what it returns crosses to any actor.
///
/// ```swift
/// let importer = ModelActor(modelContainer: container)
/// let saved = try await importer.perform { context in
///     try context.insert(contentsOf: rows.map { Task(title: $0) })
/// }
/// ```
public actor ModelActor {
    /// The container the actor's context works on.
    public nonisolated let modelContainer: ModelContainer

    /// The actor's context, usable only on the actor.
    public let modelContext: ModelContext

    private nonisolated let executor: QueueExecutor

    /// The actor runs on its own serial queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        unsafe executor.asUnownedSerialExecutor()
    }

    /// Creates an actor with a fresh context on `modelContainer`.
    public init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        self.modelContext = ModelContext(modelContainer)
        self.executor = QueueExecutor(label: "KVStore.ModelActor")
    }

    /// Runs `body` on the actor with its context.
    ///
    /// - Parameter body: The work to do; it runs synchronously on the actor's queue.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func perform<R: Sendable>(_ body: @Sendable (ModelContext) throws -> R) throws -> R {
        try body(modelContext)
    }
}

/// A serial executor on a dispatch queue of its own. Dispatch gives a blocked serial queue a thread of its own
/// rather than one of the cooperative pool's, which is what lets blocking work run here.
///
/// One of the module's few places with unsafe code (ARCHITECTURE.md lists them): Swift's executor API passes the
/// executor unowned. Invariant: the executor outlives every job it runs, because a job on the actor keeps the actor
/// alive and the actor holds its executor.
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = unsafe asUnownedSerialExecutor()
        queue.async { unsafe job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        unsafe UnownedSerialExecutor(ordinary: self)
    }
}
