import Foundation
import KVStore
import TestSupport

/// The child that writes: random transactions through the public API, each logged before it starts and after it
/// commits, until it is killed.
///
/// The writer keeps its own copy of the store's state and computes each transaction's delta from it, delete rules
/// included (a project's tasks for a cascade, the unassigned tasks for a nullify), so the log says exactly what the
/// store must hold.
final class Writer {
    private let container: ModelContainer
    private let context: ModelContext
    private let log: ExpectationLog
    private var state: StoreState
    private var sequence: Int
    private var random: SplitMix64

    /// The largest number of tasks the writer lets the store reach; past it, it only updates and deletes.
    static let maximumTasks = 1_500
    /// The largest number of projects.
    static let maximumProjects = 40
    /// The largest number of people.
    static let maximumPeople = 12

    /// The history retention the writer of `seed` switches on, which the parent reads back from the seed: mostly
    /// everything, but one writer in four prunes to a few entries and one in eight to the last tenth of a second, so
    /// that writers are killed while they prune.
    static func historyRetention(seed: UInt64) -> HistoryRetention {
        switch seed % 8 {
        case 0, 1: HistoryRetention(maximumAge: nil, maximumCount: 1 + Int(seed / 8 % 20))
        case 2: HistoryRetention(maximumAge: 0.1, maximumCount: nil)
        default: .unlimited
        }
    }

    /// The retention of ``historyRetention(seed:)`` for reports: `keeps everything`, `keeps 3 entries`.
    static func historyRetentionText(seed: UInt64) -> String {
        let retention = historyRetention(seed: seed)
        let parts =
            [retention.maximumCount.map { "\($0) entries" }, retention.maximumAge.map { "\($0) s" }].compactMap { $0 }
        return parts.isEmpty ? "keeps everything" : "keeps " + parts.joined(separator: " and ")
    }

    /// A writer on an open store, whose log has `lastSequence` transactions so far.
    init(container: ModelContainer, log: ExpectationLog, lastSequence: Int, seed: UInt64) throws {
        self.container = container
        context = ModelContext(container)
        self.log = log
        state = try StoreState.read(from: container)
        sequence = lastSequence
        random = SplitMix64(seed: seed)
    }

    /// Runs random transactions until `deadline` (the parent kills the writer long before).
    func run(until deadline: ContinuousClock.Instant) throws {
        while ContinuousClock.now < deadline { try step() }
    }

    /// Runs one random operation: one transaction, or several for the chunked ones.
    func step() throws {
        let tasks = state.tasks.count
        let choices: [(weight: Int, operation: () throws -> Void)] = [
            (state.projects.count < Self.maximumProjects ? 2 : 0, insertProjects),
            (state.people.count < Self.maximumPeople ? 1 : 0, insertPeople),
            (tasks < Self.maximumTasks && !state.projects.isEmpty ? 4 : 0, insertTasksInChunks),
            (tasks > 0 ? 4 : 0, updateTasks),
            (tasks > 0 ? 2 : 0, deleteOneTask),
            (state.projects.count > 3 ? (tasks > Self.maximumTasks / 2 ? 3 : 1) : 0, deleteProjectWithCascade),
            (state.people.count > 2 ? 1 : 0, deletePersonWithNullify),
            (tasks > 10 ? 2 : 0, deleteTasksByIDsInChunks),
            (tasks > Self.maximumTasks / 2 ? 1 : 0, deleteTasksByPredicate),
            (state.projects.isEmpty ? 0 : 2, mixedWrite),
            (state.projects.isEmpty ? 0 : 1, violateUniqueName),
            (1, deleteHistoryByHand),
        ]
        var pick = Int.random(in: 0..<choices.reduce(0) { $0 + $1.weight }, using: &random)
        for choice in choices {
            if pick < choice.weight { return try choice.operation() }
            pick -= choice.weight
        }
    }

    // MARK: - Operations

    private func insertProjects() throws {
        let projects = (0..<Int.random(in: 1...3, using: &random)).map { index in
            Project(name: "project \(sequence + 1).\(index)")
        }
        try transaction("insert \(projects.count) projects", Delta(projects: projects)) {
            for project in projects { context.insert(project) }
            try context.save()
        }
    }

    private func insertPeople() throws {
        let people = (0..<Int.random(in: 1...2, using: &random)).map { Person(name: "person \(sequence + 1).\($0)") }
        try transaction("insert \(people.count) people", Delta(people: people)) {
            try container.write { txn in
                for person in people { try txn.insert(person) }
            }
        }
    }

    private func insertTasksInChunks() throws {
        let count = Int.random(in: 10...150, using: &random)
        let chunkSize = Int.random(in: 5...50, using: &random)
        let tasks = (0..<count).map { newTask(title: "task \(sequence + 1).\($0)") }
        let chunks = stride(from: 0, to: count, by: chunkSize).map {
            Delta(tasks: Array(tasks[$0..<min($0 + chunkSize, count)]))
        }
        try chunkedTransactions("insert \(count) tasks in chunks of \(chunkSize)", chunks) { progress in
            try context.insert(contentsOf: tasks, chunkSize: chunkSize, progress: progress)
        }
    }

    private func updateTasks() throws {
        var delta = Delta()
        for var task in randomTasks(Int.random(in: 1...8, using: &random)) {
            task.revision += 1
            task.title = "task \(task.id.uuidString.prefix(8)) rev \(task.revision)"
            task.priority = Int.random(in: 0...9, using: &random)
            if Int.random(in: 0..<3, using: &random) == 0 { task.projectID = randomProjectID() }
            if Int.random(in: 0..<3, using: &random) == 0 { task.assigneeID = randomPersonID() }
            delta.tasks.append(task)
        }
        if Int.random(in: 0..<3, using: &random) == 0, var project = randomElement(state.projects) {
            project.revision += 1
            project.name = "project \(sequence + 1) renamed"
            delta.projects.append(project)
        }
        try transaction("update \(delta.tasks.count) tasks, \(delta.projects.count) projects", delta) {
            for task in delta.tasks { context.insert(task) }
            for project in delta.projects { context.insert(project) }
            try context.save()
        }
    }

    private func deleteOneTask() throws {
        guard let task = randomTasks(1).first else { return }
        try transaction("delete a task", Delta(deletedTasks: [task.id])) {
            context.delete(task)
            try context.save()
        }
    }

    private func deleteProjectWithCascade() throws {
        guard let project = randomElement(state.projects) else { return }
        let tasks = state.tasks.values.filter { $0.projectID == project.id }.map(\.id)
        try transaction(
            "delete a project, cascading to \(tasks.count) tasks",
            Delta(deletedProjects: [project.id], deletedTasks: tasks)
        ) {
            context.delete(project)
            try context.save()
        }
    }

    private func deletePersonWithNullify() throws {
        guard let person = randomElement(state.people) else { return }
        let unassigned = state.tasks.values.filter { $0.assigneeID == person.id }.map { task in
            var task = task
            task.assigneeID = nil
            return task
        }
        try transaction(
            "delete a person, nullifying \(unassigned.count) tasks",
            Delta(tasks: unassigned, deletedPeople: [person.id])
        ) {
            try container.write { txn in _ = try txn.delete(Person.self, id: person.id) }
        }
    }

    private func deleteTasksByIDsInChunks() throws {
        let ids = randomTasks(Int.random(in: 2...40, using: &random)).map(\.id)
        let chunkSize = Int.random(in: 1...15, using: &random)
        let chunks = stride(from: 0, to: ids.count, by: chunkSize).map {
            Delta(deletedTasks: Array(ids[$0..<min($0 + chunkSize, ids.count)]))
        }
        try chunkedTransactions("delete \(ids.count) tasks in chunks of \(chunkSize)", chunks) { progress in
            try context.delete(Task.self, ids: ids, chunkSize: chunkSize, progress: progress)
        }
    }

    private func deleteTasksByPredicate() throws {
        let priority = Int.random(in: 0...9, using: &random)
        let ids = state.tasks.values.filter { $0.priority == priority }.map(\.id)
        // One chunk: the predicate's matches are deleted in one transaction (and a second one finds none).
        try transaction("delete \(ids.count) tasks of priority \(priority)", Delta(deletedTasks: ids)) {
            try context.delete(Task.self, where: #Predicate { $0.priority == priority }, chunkSize: 1_000_000)
        }
    }

    /// Inserts, updates and deletes of three entities in one explicit write transaction.
    private func mixedWrite() throws {
        var delta = Delta()
        let project = Project(name: "project \(sequence + 1) mixed")
        delta.projects.append(project)
        for index in 0..<Int.random(in: 1...5, using: &random) {
            var task = newTask(title: "task \(sequence + 1).\(index) mixed")
            task.projectID = project.id
            delta.tasks.append(task)
        }
        delta.deletedTasks = randomTasks(Int.random(in: 0...3, using: &random)).map(\.id)
        if var person = randomElement(state.people) {
            person.name = "person renamed in \(sequence + 1)"
            delta.people.append(person)
        }
        try transaction("mixed write of \(delta.size) records", delta) {
            try container.write { txn in
                try txn.insert(project)
                for task in delta.tasks { try txn.insert(task) }
                for id in delta.deletedTasks { _ = try txn.delete(Task.self, id: id) }
                for person in delta.people { try txn.insert(person) }
            }
        }
    }

    /// A save that must throw: a new project takes an existing project's name, with tasks of its own.
    private func violateUniqueName() throws {
        guard let existing = randomElement(state.projects) else { return }
        let project = Project(name: existing.name)
        var task = newTask(title: "task of a duplicate project")
        task.projectID = project.id
        let delta = Delta(projects: [project], tasks: [task])
        try transaction("insert a project with a taken name", delta, mustFail: true) {
            context.insert(project)
            context.insert(task)
            try context.save()
        }
    }

    /// Deletes the history but for its last 1 to 20 entries, with `deleteHistory(before:)`: a commit that changes no
    /// model, and so is not logged.
    private func deleteHistoryByHand() throws {
        let last = try container.lastHistoryToken()
        let kept = UInt64.random(in: 1...20, using: &random)
        guard last.position > kept else { return }
        try container.deleteHistory(before: HistoryToken(storeID: last.storeID, position: last.position - kept + 1))
    }

    // MARK: - Logging around transactions

    /// Logs the intent, runs `body` (one transaction), logs its commit and applies its delta.
    private func transaction(
        _ operation: String,
        _ delta: Delta,
        mustFail: Bool = false,
        _ body: () throws -> Void
    ) throws {
        sequence += 1
        try log.append(
            LogLine(
                kind: .intent, sequence: sequence, operation: operation, mustFail: mustFail ? true : nil,
                delta: delta))
        guard mustFail else {
            try body()
            try log.append(LogLine(kind: .commit, sequence: sequence))
            state.apply(delta)
            return
        }
        do {
            try body()
        } catch KVStoreError.uniqueViolation {
            context.rollback()
            try log.append(LogLine(kind: .failed, sequence: sequence))
            return
        }
        throw CrashTestError("Transaction \(sequence) (\(operation)) should have thrown a unique violation")
    }

    /// Runs a chunked operation whose chunks are `chunks`, one transaction each: each chunk's intent is logged
    /// before it starts (the first before `body`, the others from the progress callback of the one before), and
    /// its commit once the progress callback says it committed.
    private func chunkedTransactions(
        _ operation: String,
        _ chunks: [Delta],
        _ body: (_ progress: @escaping (Int) -> Void) throws -> Void
    ) throws {
        guard !chunks.isEmpty else { return }
        var next = 0
        var done = 0
        func logIntent() throws {
            sequence += 1
            try log.append(
                LogLine(
                    kind: .intent, sequence: sequence, operation: "\(operation), chunk \(next + 1) of \(chunks.count)",
                    delta: chunks[next]))
        }
        try logIntent()
        var failure: (any Error)?
        try body { [self] committed in
            guard failure == nil else { return }
            do {
                done += chunks[next].size
                guard committed == done else {
                    throw CrashTestError(
                        "\(operation): progress said \(committed) after chunk \(next + 1), not \(done)")
                }
                try log.append(LogLine(kind: .commit, sequence: sequence))
                state.apply(chunks[next])
                next += 1
                if next < chunks.count { try logIntent() }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        guard next == chunks.count else {
            throw CrashTestError("\(operation): \(next) of \(chunks.count) chunks reported")
        }
    }

    // MARK: - Random picks

    private func newTask(title: String) -> Task {
        Task(
            title: title, priority: Int.random(in: 0...9, using: &random), projectID: randomProjectID(),
            assigneeID: randomPersonID())
    }

    /// A random project's ID, or `nil` one time in five.
    private func randomProjectID() -> UUID? {
        Int.random(in: 0..<5, using: &random) == 0 ? nil : randomElement(state.projects)?.id
    }

    /// A random person's ID, or `nil` one time in two.
    private func randomPersonID() -> UUID? {
        Bool.random(using: &random) ? nil : randomElement(state.people)?.id
    }

    /// A random model of `models`, picked in ID order so that a seed replays the same picks (dictionary order
    /// changes from one process to the next).
    private func randomElement<M: Model>(_ models: [UUID: M]) -> M? {
        inIDOrder(models).randomElement(using: &random)
    }

    private func inIDOrder<M: Model>(_ models: [UUID: M]) -> [M] {
        models.values.sorted { left, right in
            withUnsafeBytes(of: left.id.uuid) { left in
                withUnsafeBytes(of: right.id.uuid) { right in left.lexicographicallyPrecedes(right) }
            }
        }
    }

    /// Up to `count` distinct random tasks.
    private func randomTasks(_ count: Int) -> [Task] {
        Array(inIDOrder(state.tasks).shuffled(using: &random).prefix(count))
    }
}
