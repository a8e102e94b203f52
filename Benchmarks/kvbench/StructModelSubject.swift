import Foundation
import KVStore

/// The struct side of the class/struct comparison: ``TaskValue`` and ``ProjectValue`` through a `ModelContext`, as
/// a program writes it with struct models: `insert` and `save`, `fetch`, `modify` and `delete` by ID.
final class StructModelSubject: ModelKindSubject {
    /// The side's name in reports.
    static let name = "structs"

    private let container: ModelContainer
    /// The context of ``register(_:)``.
    private var registeredContext: ModelContext?
    /// The tasks ``register(_:)`` read, as changed since.
    private var registeredTasks: [UUID: TaskValue] = [:]

    /// Opens a new store in `directory` and fills it.
    init(
        directory: String, settings: StoreSettings, filledWith dataset: Dataset, includingTasks: Bool, chunkSize: Int
    ) throws {
        container = try ModelContainer(
            for: TaskValue.self, ProjectValue.self,
            configuration: ComparisonStore.configuration(directory: directory, settings: settings))
        do {
            try ComparisonStore.fill(container, with: dataset, includingTasks: includingTasks, chunkSize: chunkSize)
        } catch {
            try? container.close()
            throw error
        }
    }

    /// Closes the store.
    func close() throws {
        registeredContext = nil
        registeredTasks = [:]
        try container.close()
    }

    /// Inserts each chunk's tasks into one context and saves it.
    func insertTasks(of dataset: Dataset, chunks: [Range<Int>], recorder: RunRecorder) throws -> Int {
        let context = ModelContext(container)
        for chunk in chunks {
            let tasks = dataset.tasks[chunk].map(TaskValue.init)
            try recorder.timedOperation {
                for task in tasks { context.insert(task) }
                try context.save()
            }
        }
        return try container.read { txn in try txn.fetchCount(FetchDescriptor<TaskValue>()) }
    }

    /// Fetches the tasks due in each window through one context.
    func fetchTasks(dueIn windows: [DueWindow], recorder: RunRecorder) throws -> Int {
        let context = ModelContext(container)
        return try recorder.timed {
            var found = 0
            for window in windows {
                let (start, end) = (window.start, window.end)
                let tasks = try recorder.operation {
                    try context.fetch(
                        FetchDescriptor<TaskValue>(predicate: #Predicate { $0.dueAt >= start && $0.dueAt < end }))
                }
                BlackHole.consume(titles: tasks.lazy.map(\.title))
                found += tasks.count
            }
            return found
        }
    }

    /// Fetches every task `times` times, each through a new context.
    func fetchAllTasks(times: Int, recorder: RunRecorder) throws -> Int {
        var fetched = 0
        for _ in 0..<times {
            let context = ModelContext(container)
            let tasks = try recorder.timedOperation { try context.fetch(FetchDescriptor<TaskValue>()) }
            BlackHole.consume(titles: tasks.lazy.map(\.title))
            fetched += tasks.count
        }
        return fetched
    }

    /// Fetches the tasks due in `window`, changes every `stride`th one with `modify` and saves.
    func updateTasks(dueIn window: DueWindow, every stride: Int, recorder: RunRecorder) throws -> Int {
        let context = ModelContext(container)
        let (start, end) = (window.start, window.end)
        let changed = try recorder.timedOperation {
            var tasks = try context.fetch(
                FetchDescriptor<TaskValue>(predicate: #Predicate { $0.dueAt >= start && $0.dueAt < end }))
            var changed: [TaskValue] = []
            for position in Swift.stride(from: 0, to: tasks.count, by: stride) {
                try context.modify(&tasks[position]) { $0.isDone.toggle() }
                changed.append(tasks[position])
            }
            try context.save()
            return changed
        }
        return try storedMatches(changed)
    }

    /// Reads the tasks with `ids` into a new context.
    func register(_ ids: [UUID]) throws {
        let context = ModelContext(container)
        var tasks: [UUID: TaskValue] = [:]
        tasks.reserveCapacity(ids.count)
        for case .some(let task) in try context.models(for: ids, as: TaskValue.self) { tasks[task.id] = task }
        guard tasks.count == ids.count else {
            throw SubjectError(description: "Only \(tasks.count) of the \(ids.count) tasks to register are stored")
        }
        registeredContext = context
        registeredTasks = tasks
    }

    /// Changes the registered tasks with `ids` with `modify` and saves.
    func saveChanges(to ids: [UUID], recorder: RunRecorder) throws -> Int {
        guard let context = registeredContext else { throw SubjectError(description: "No tasks are registered") }
        let changed = try recorder.timedOperation {
            var changed: [TaskValue] = []
            changed.reserveCapacity(ids.count)
            for id in ids {
                guard var task = registeredTasks[id] else {
                    throw SubjectError(description: "Task \(id) is not registered")
                }
                try context.modify(&task) { $0.isDone.toggle() }
                registeredTasks[id] = task
                changed.append(task)
            }
            try context.save()
            return changed
        }
        return try storedMatches(changed)
    }

    /// Deletes the projects with `ids` by ID through a new context and saves; the store cascades to their tasks.
    func deleteProjects(ids: [UUID], recorder: RunRecorder) throws -> Int {
        let context = ModelContext(container)
        let before = try ComparisonStore.recordCount(in: container, TaskValue.self, ProjectValue.self)
        try recorder.timedOperation {
            for id in ids { context.delete(ProjectValue.self, id: id) }
            try context.save()
        }
        return before - (try ComparisonStore.recordCount(in: container, TaskValue.self, ProjectValue.self))
    }

    /// The number of `tasks` whose stored done flag is theirs, read in one transaction.
    private func storedMatches(_ tasks: [TaskValue]) throws -> Int {
        let stored = try container.read { txn in try txn.models(for: tasks.map(\.id), as: TaskValue.self) }
        return zip(tasks, stored).count { task, stored in stored?.isDone == task.isDone }
    }
}
