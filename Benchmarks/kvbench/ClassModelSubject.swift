import Foundation
import KVStore

/// The class side of the class/struct comparison: ``TaskObject`` and ``ProjectObject`` through a `ModelContext`, as a
/// program writes it with reference models: objects made with their project and inserted, fetched objects changed
/// in place and saved, objects deleted.
final class ClassModelSubject: ModelKindSubject {
    /// The side's name in reports.
    static let name = "classes"

    private let container: ModelContainer
    /// The context of ``register(_:)``.
    private var registeredContext: ModelContext?
    /// The objects ``register(_:)`` read, kept so that the context keeps them.
    private var registeredObjects: [UUID: TaskObject] = [:]

    /// Fills a new store in `directory` through the struct twins, whose records are the classes', and opens it with
    /// the classes.
    init(
        directory: String, settings: StoreSettings, filledWith dataset: Dataset, includingTasks: Bool, chunkSize: Int
    ) throws {
        container = try ComparisonStore.open(
            for: [TaskObject.self, ProjectObject.self], directory: directory, settings: settings,
            filledWith: dataset, includingTasks: includingTasks, chunkSize: chunkSize)
    }

    /// Closes the store.
    func close() throws {
        registeredContext = nil
        registeredObjects = [:]
        try container.close()
    }

    /// Inserts each chunk's tasks into one context and saves it. The tasks are made in the project objects the
    /// context fetched, their `project` set in their initializer as a program's `Task(title:project:)` sets it, which
    /// adds each task to its project's list of tasks held in memory.
    func insertTasks(of dataset: Dataset, chunks: [Range<Int>], recorder: RunRecorder) throws -> Int {
        let context = ModelContext(container)
        let projects = Dictionary(
            uniqueKeysWithValues: try context.fetch(FetchDescriptor<ProjectObject>()).map { ($0.id, $0) })
        for chunk in chunks {
            let tasks = dataset.tasks[chunk].map { TaskObject($0, project: $0.projectID.flatMap { projects[$0] }) }
            try recorder.timedOperation {
                for task in tasks { context.insert(task) }
                try context.save()
            }
        }
        return try container.read { txn in try txn.fetchCount(FetchDescriptor<TaskObject>()) }
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
                        FetchDescriptor<TaskObject>(predicate: #Predicate { $0.dueAt >= start && $0.dueAt < end }))
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
            let tasks = try recorder.timedOperation { try context.fetch(FetchDescriptor<TaskObject>()) }
            BlackHole.consume(titles: tasks.lazy.map(\.title))
            fetched += tasks.count
        }
        return fetched
    }

    /// Fetches the tasks due in `window`, changes every `stride`th object and saves.
    func updateTasks(dueIn window: DueWindow, every stride: Int, recorder: RunRecorder) throws -> Int {
        let context = ModelContext(container)
        let (start, end) = (window.start, window.end)
        let changed = try recorder.timedOperation {
            let tasks = try context.fetch(
                FetchDescriptor<TaskObject>(predicate: #Predicate { $0.dueAt >= start && $0.dueAt < end }))
            var changed: [TaskObject] = []
            for position in Swift.stride(from: 0, to: tasks.count, by: stride) {
                tasks[position].isDone.toggle()
                changed.append(tasks[position])
            }
            try context.save()
            return changed
        }
        return try storedMatches(changed)
    }

    /// Reads the objects with `ids` into a new context, which keeps them while this subject does.
    func register(_ ids: [UUID]) throws {
        let context = ModelContext(container)
        let objects = try context.fetch(FetchDescriptor<TaskObject>(predicate: #Predicate { ids.contains($0.id) }))
        guard objects.count == ids.count else {
            throw SubjectError(description: "Only \(objects.count) of the \(ids.count) tasks to register are stored")
        }
        registeredContext = context
        registeredObjects = Dictionary(uniqueKeysWithValues: objects.map { ($0.id, $0) })
    }

    /// Changes the registered objects with `ids` in place and saves their context.
    func saveChanges(to ids: [UUID], recorder: RunRecorder) throws -> Int {
        guard let context = registeredContext else { throw SubjectError(description: "No tasks are registered") }
        let changed = try recorder.timedOperation {
            var changed: [TaskObject] = []
            changed.reserveCapacity(ids.count)
            for id in ids {
                guard let task = registeredObjects[id] else {
                    throw SubjectError(description: "Task \(id) is not registered")
                }
                task.isDone.toggle()
                changed.append(task)
            }
            try context.save()
            return changed
        }
        return try storedMatches(changed)
    }

    /// Deletes the project objects with `ids`, fetched before the timed region as a program has the objects it
    /// deletes at hand, through a new context and saves; the store cascades to their tasks, which the context does
    /// not hold.
    func deleteProjects(ids: [UUID], recorder: RunRecorder) throws -> Int {
        let context = ModelContext(container)
        let projects = try context.fetch(
            FetchDescriptor<ProjectObject>(predicate: #Predicate { ids.contains($0.id) }))
        let before = try ComparisonStore.recordCount(in: container, TaskObject.self, ProjectObject.self)
        try recorder.timedOperation {
            for project in projects { context.delete(project) }
            try context.save()
        }
        return before - (try ComparisonStore.recordCount(in: container, TaskObject.self, ProjectObject.self))
    }

    /// The number of `tasks` whose stored done flag is theirs, read in one transaction as new objects outside any
    /// context.
    private func storedMatches(_ tasks: [TaskObject]) throws -> Int {
        let stored = try container.read { txn in try txn.models(for: tasks.map(\.id), as: TaskObject.self) }
        return zip(tasks, stored).count { task, stored in stored?.isDone == task.isDone }
    }
}
