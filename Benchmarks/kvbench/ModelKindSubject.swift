import Foundation
@_spi(Benchmarking) import KVStore

/// One side of the class/struct comparison: a program's work on its models through a `ModelContext`, with
/// `PersistentModel` classes (``ClassModelSubject``) or `Model` structs (``StructModelSubject``) whose records,
/// indexes and relationships are the same (``TaskObject`` and ``TaskValue``).
///
/// The two sides run the same work in the same run, runs interleaved, and the report prints the classes' throughput
/// over the structs'. Each operation takes the run's recorder: what a program has at hand before it starts (the
/// models it inserts, the objects it deletes, the objects a context holds) is made before the timed region;
/// everything the library does, fetches, saves and their change tracking included, is inside it.
protocol ModelKindSubject: AnyObject {
    /// The side's name in reports: "classes" or "structs".
    static var name: String { get }

    /// Opens a new store in `directory` holding `dataset`'s projects and, unless `includingTasks` is false, its
    /// tasks, written before anything is timed.
    ///
    /// - Parameters:
    ///   - directory: An existing, empty directory for the store's files.
    ///   - settings: The map size to start with, the durability of commits and the coding of the models.
    ///   - dataset: The projects and tasks to store.
    ///   - includingTasks: Whether to store the tasks too.
    ///   - chunkSize: The models per write transaction of the filling.
    init(
        directory: String, settings: StoreSettings, filledWith dataset: Dataset, includingTasks: Bool, chunkSize: Int
    ) throws

    /// Closes the store; the scenario removes its directory afterwards.
    func close() throws

    /// Inserts the tasks of each chunk into one context and saves it, a timed operation per chunk; the models of a
    /// chunk are made before it, in projects fetched before the first.
    ///
    /// - Returns: The number of tasks in the store afterwards, counted after the timed regions.
    func insertTasks(of dataset: Dataset, chunks: [Range<Int>], recorder: RunRecorder) throws -> Int

    /// Fetches the tasks due in each window through one context, a fetch and a timed operation per window.
    ///
    /// - Returns: The number of tasks fetched, over all windows.
    func fetchTasks(dueIn windows: [DueWindow], recorder: RunRecorder) throws -> Int

    /// Fetches every task `times` times, each through a new context made and let go outside the timed region, each
    /// fetch one timed operation.
    ///
    /// - Returns: The number of tasks fetched, all fetches together.
    func fetchAllTasks(times: Int, recorder: RunRecorder) throws -> Int

    /// Through a new context, fetches the tasks due in `window`, toggles the done flag of every `stride`th one and
    /// saves, as one timed operation.
    ///
    /// - Returns: The number of changed tasks whose stored flag is the new one, read after the timed region.
    func updateTasks(dueIn window: DueWindow, every stride: Int, recorder: RunRecorder) throws -> Int

    /// Reads the tasks with `ids` into a new context that keeps them, before anything is timed, for
    /// ``saveChanges(to:recorder:)``.
    func register(_ ids: [UUID]) throws

    /// Toggles the done flag of the registered tasks with `ids` and saves the context they are registered in, as one
    /// timed operation.
    ///
    /// - Returns: The number of changed tasks whose stored flag is the new one, read after the timed region.
    func saveChanges(to ids: [UUID], recorder: RunRecorder) throws -> Int

    /// Through a new context, deletes the projects with `ids` and saves, as one timed operation; their tasks cascade.
    ///
    /// - Returns: The number of records deleted, projects and tasks, counted outside the timed region.
    func deleteProjects(ids: [UUID], recorder: RunRecorder) throws -> Int

}

/// A half-open range of due dates, the indexed predicate of the comparison's fetches.
struct DueWindow: Sendable {
    /// The first due date in the window.
    var start: Date
    /// The first due date after the window.
    var end: Date

    /// Windows over `tasks`' due dates that hold about `size` tasks each, starting at `count` random tasks in
    /// due-date order; the number of tasks each holds, counted on `tasks`, is beside it.
    ///
    /// - Parameters:
    ///   - count: The number of windows.
    ///   - size: The tasks a window holds, at least (more when due dates tie at its end).
    ///   - tasks: The tasks, in any order.
    ///   - seed: The seed of the windows' starts.
    static func windows(
        _ count: Int, holding size: Int, over tasks: [TaskRecord], seed: UInt64
    ) -> [(window: DueWindow, tasks: Int)] {
        let dates = tasks.map(\.dueAt).sorted()
        guard dates.count > size else { return [] }
        return Dataset.sample(count, below: dates.count - size, seed: seed).map { first in
            let start = dates[first]
            // Start at the first task due then, and end after the last one due at the window's last date.
            let from = dates.partitioningIndex { $0 >= start }
            let end = dates[first + size - 1].addingTimeInterval(0.001)
            let to = dates.partitioningIndex { $0 >= end }
            return (DueWindow(start: start, end: end), to - from)
        }
    }
}

extension Array where Element: Comparable {
    /// The index of the first element for which `belongs` is true, in an array sorted so that it is false, then true.
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

/// A store of ``TaskValue`` and ``ProjectValue`` structs filled with a dataset: how both sides fill their stores,
/// the class side opening the same records with its classes afterwards.
enum ComparisonStore {
    /// The configuration of a store in `directory` with `settings`.
    static func configuration(directory: String, settings: StoreSettings) -> ModelConfiguration {
        var configuration = ModelConfiguration(
            path: directory, durability: settings.durability.storeDurability, initialMapSize: settings.mapSize)
        configuration.usesFieldCodable = settings.coding == .fields
        return configuration
    }

    /// A new store in `directory` holding `dataset`'s projects and, unless `includingTasks` is false, its tasks,
    /// written through the struct twins (whose records are the classes'), then opened for `models`.
    static func open(
        for models: [any StoredModel.Type], directory: String, settings: StoreSettings, filledWith dataset: Dataset,
        includingTasks: Bool, chunkSize: Int
    ) throws -> ModelContainer {
        let configuration = configuration(directory: directory, settings: settings)
        let filling = try ModelContainer(for: TaskValue.self, ProjectValue.self, configuration: configuration)
        do {
            try fill(filling, with: dataset, includingTasks: includingTasks, chunkSize: chunkSize)
        } catch {
            try? filling.close()
            throw error
        }
        try filling.close()
        return try ModelContainer(for: models, configuration: configuration)
    }

    /// Writes `dataset`'s projects and, unless `includingTasks` is false, its tasks to `container`, one write
    /// transaction per chunk.
    static func fill(_ container: ModelContainer, with dataset: Dataset, includingTasks: Bool, chunkSize: Int) throws {
        for chunk in Dataset.chunks(of: dataset.projects.count, size: chunkSize) {
            try container.write { txn in
                for project in dataset.projects[chunk] { try txn.insert(ProjectValue(project)) }
            }
        }
        guard includingTasks else { return }
        for chunk in Dataset.chunks(of: dataset.tasks.count, size: chunkSize) {
            try container.write { txn in
                for task in dataset.tasks[chunk] { try txn.insert(TaskValue(task)) }
            }
        }
    }

    /// The number of records of `task` and `project` in `container`, read without making models.
    static func recordCount<Task: StoredModel, Project: StoredModel>(
        in container: ModelContainer, _ task: Task.Type, _ project: Project.Type
    ) throws -> Int {
        try container.read { txn in
            try txn.fetchCount(FetchDescriptor<Task>()) + txn.fetchCount(FetchDescriptor<Project>())
        }
    }
}
