import Foundation
import TestSupport

/// The projects and tasks of one scenario, generated before anything is timed, with the bytes the baseline stores.
///
/// Every project has ``tasksPerProject`` tasks. Tasks are generated in creation order (so time-ordered IDs
/// increase along the array) and dealt to projects in a seeded random order, so a project's tasks are spread over
/// the record table as in a store that grew over time.
struct Dataset {
    /// The number of tasks of each project.
    static let tasksPerProject = 10

    /// The projects, in creation order.
    let projects: [ProjectRecord]
    /// The tasks, in creation order.
    let tasks: [TaskRecord]
    /// The tasks encoded for the baseline, in the same order.
    let taskBytes: EncodedRecords
    /// The projects encoded for the baseline, in the same order.
    let projectBytes: EncodedRecords
    /// The indices in ``tasks`` of the tasks of each project: project `p` owns the entries
    /// `p * tasksPerProject ..< (p + 1) * tasksPerProject`.
    private let taskIndicesByProject: [Int32]

    /// Generates `projectCount` projects with ten tasks each.
    ///
    /// - Parameters:
    ///   - projectCount: The number of projects.
    ///   - order: How task IDs are generated.
    ///   - seed: The seed; equal seeds give equal datasets.
    init(projectCount: Int, order: IDOrder = .timeOrdered, seed: UInt64) throws {
        var factory = RecordFactory(order: order, seed: seed)
        var projects: [ProjectRecord] = []
        projects.reserveCapacity(projectCount)
        for _ in 0..<projectCount {
            projects.append(factory.makeProject())
        }
        // Deal ten slots per project in random order: task i goes to project owners[i].
        var owners: [Int32] = []
        owners.reserveCapacity(projectCount * Self.tasksPerProject)
        for project in 0..<projectCount {
            owners.append(contentsOf: repeatElement(Int32(project), count: Self.tasksPerProject))
        }
        var shuffler = SplitMix64(seed: seed &+ 3)
        owners.shuffle(using: &shuffler)
        var tasks: [TaskRecord] = []
        tasks.reserveCapacity(owners.count)
        var byProject = [Int32](repeating: 0, count: owners.count)
        var filled = [Int](repeating: 0, count: projectCount)
        for (index, owner) in owners.enumerated() {
            let project = Int(owner)
            tasks.append(factory.makeTask(projectID: projects[project].id))
            byProject[project * Self.tasksPerProject + filled[project]] = Int32(index)
            filled[project] += 1
        }
        self.projects = projects
        self.tasks = tasks
        self.taskIndicesByProject = byProject
        self.taskBytes = try EncodedRecords(tasks: tasks[...])
        self.projectBytes = try EncodedRecords(projects: projects[...])
    }

    /// The indices in ``tasks`` of the tasks of project number `project`.
    func taskIndices(ofProject project: Int) -> ArraySlice<Int32> {
        taskIndicesByProject[project * Self.tasksPerProject..<(project + 1) * Self.tasksPerProject]
    }

    /// `count` distinct numbers in `0..<bound`, in a seeded random order: the caller's order of a batch.
    ///
    /// - Parameters:
    ///   - count: How many numbers; at most `bound`.
    ///   - bound: The end of the range.
    ///   - seed: The seed.
    static func sample(_ count: Int, below bound: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed)
        var numbers = Array(0..<bound)
        let wanted = min(count, bound)
        // A partial Fisher-Yates shuffle: the first `wanted` numbers are a uniform sample in random order.
        for position in 0..<wanted {
            let other = position + Int(random.next() % UInt64(bound - position))
            numbers.swapAt(position, other)
        }
        return Array(numbers.prefix(wanted))
    }

    /// Inserts the projects, and then the tasks unless `includingTasks` is false, through a subject, one write
    /// transaction per chunk: how a scenario fills its store before the timed work.
    func fill(_ subject: some ScenarioSubject, chunkSize: Int, includingTasks: Bool = true) throws {
        for chunk in Self.chunks(of: projects.count, size: chunkSize) {
            try subject.insert(projects: projects[chunk])
        }
        guard includingTasks else { return }
        for chunk in Self.chunks(of: tasks.count, size: chunkSize) {
            try subject.insert(tasks: tasks[chunk])
        }
    }

    /// Puts the projects, and then the tasks unless `includingTasks` is false, through the C API, one write
    /// transaction per chunk.
    func fill(_ raw: RawLMDB, chunkSize: Int, includingTasks: Bool = true) throws {
        for chunk in Self.chunks(of: projects.count, size: chunkSize) {
            try raw.insert(projectBytes, range: chunk, into: raw.projects)
        }
        guard includingTasks else { return }
        for chunk in Self.chunks(of: tasks.count, size: chunkSize) {
            try raw.insert(taskBytes, range: chunk, into: raw.tasks)
        }
    }

    /// Inserts the projects, and then the tasks unless `includingTasks` is false, through the SQLite C API, one
    /// write transaction per chunk.
    func fill(_ sqlite: RawSQLite, chunkSize: Int, includingTasks: Bool = true) throws {
        for chunk in Self.chunks(of: projects.count, size: chunkSize) {
            try sqlite.insert(projects: projects[chunk])
        }
        guard includingTasks else { return }
        for chunk in Self.chunks(of: tasks.count, size: chunkSize) {
            try sqlite.insert(tasks: tasks[chunk])
        }
    }

    /// The ranges that cut `count` items into chunks of `size`, the last one possibly shorter.
    static func chunks(of count: Int, size: Int) -> [Range<Int>] {
        stride(from: 0, to: count, by: size).map { $0..<Swift.min($0 + size, count) }
    }
}
