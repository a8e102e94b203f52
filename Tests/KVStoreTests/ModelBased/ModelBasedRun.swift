import Foundation
import KVStore
import KVStoreInspection
import TestSupport

/// A model-based test found the store and the reference apart; the description says where and how to replay it.
struct ModelBasedMismatch: Error, CustomStringConvertible {
    /// The seed, the step, the operation, what differed, and the command that replays it.
    let description: String
}

/// One seeded run of the model-based test: random operations applied to a store and to a ``ModelBasedReference``,
/// which must agree after every step.
///
/// Every pick is made from models in key order and every ID is made from a counter, so a seed replays the same run.
final class ModelBasedRun {
    /// One model to save.
    typealias Upsert = ModelBasedReference.Upsert
    /// The IDs to delete, by entity.
    typealias Deletes = ModelBasedReference.Deletes
    /// How a transaction must fail.
    typealias Failure = ModelBasedReference.Failure

    /// The seed of the run's choices.
    let seed: UInt64
    /// The in-memory store under test.
    let container: ModelContainer
    private let context: ModelContext
    private var random: SplitMix64
    private var reference = ModelBasedReference()
    private var step = 0
    private var counter: UInt64 = 0
    /// How often each kind of outcome was seen, for the test to check that the run exercised them.
    private(set) var outcomes: [String: Int] = [:]

    /// How many steps between two integrity checks.
    static let checkInterval = 10

    /// A run seeded with `seed`, on a new in-memory store.
    init(seed: UInt64) throws {
        self.seed = seed
        random = SplitMix64(seed: seed)
        container = try ModelContainer(
            for: modelBasedTypes, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        context = ModelContext(container)
    }

    /// Runs `steps` random operations, comparing every record after each and checking integrity now and then.
    func run(steps: Int) throws {
        for number in 1...steps {
            step = number
            let description = try nextOperation()
            let stored = try ModelBasedReference.read(from: container)
            if stored != reference {
                throw mismatch(
                    description, "the store differs from the reference:\n" + reference.differences(from: stored))
            }
            if number % Self.checkInterval == 0 || number == steps {
                let errors = try StoreInspection.check(path: container.path).errors
                if !errors.isEmpty {
                    throw mismatch(
                        description, "the integrity check failed:\n" + errors.map(\.description).joined(separator: "\n")
                    )
                }
            }
        }
    }

    private func mismatch(_ operation: String, _ detail: String) -> ModelBasedMismatch {
        ModelBasedMismatch(
            description: "seed \(seed), step \(step) (\(operation)): \(detail)\n"
                + "Replay: KVSTORE_MODEL_SEED=\(seed) swift test --filter ModelBasedTests")
    }

    // MARK: - Operations

    private func nextOperation() throws -> String {
        let tasks = reference.tasks.count
        let choices: [(weight: Int, operation: () throws -> String)] = [
            (reference.projects.count < 8 ? 3 : 1, insertProjects),
            (reference.projects.isEmpty ? 0 : 2, renameProject),
            (tasks < 60 ? 5 : 1, insertTasks),
            (tasks < 60 ? 2 : 0, batchInsertTasks),
            (tasks > 0 ? 5 : 0, updateTasks),
            (tasks > 0 ? 3 : 0, insertSubtask),
            (3, insertRelated),
            (tasks > 0 ? 3 : 0, deleteTasks),
            (reference.projects.isEmpty ? 0 : 2, deleteProject),
            (4, deleteRelated),
            (tasks > 0 ? 2 : 0, batchDeleteByIDs),
            (tasks > 0 ? 2 : 0, batchDeleteByPredicate),
            (tasks > 0 ? 1 : 0, batchUpdate),
            (tasks > 0 ? 3 : 0, mixedSave),
        ]
        var pick = Int.random(in: 0..<choices.reduce(0) { $0 + $1.weight }, using: &random)
        for choice in choices {
            if pick < choice.weight { return try choice.operation() }
            pick -= choice.weight
        }
        return "nothing"
    }

    private func insertProjects() throws -> String {
        var projects = (0..<Int.random(in: 1...2, using: &random)).map { _ in
            MBProject(id: newID(), name: freshName("project"))
        }
        var description = "insert \(projects.count) projects"
        if let taken = pick(reference.projects), oneIn(6) {
            projects[projects.count - 1].name = taken.name
            description += ", one with a taken name"
        }
        return try transaction(description, upserts: projects.map(Upsert.project))
    }

    private func renameProject() throws -> String {
        guard var project = pick(reference.projects) else { return "nothing" }
        var description = "rename a project"
        if let other = pick(reference.projects), other.id != project.id, oneIn(4) {
            project.name = other.name
            description += " to a taken name"
        } else {
            project.name = freshName("project")
        }
        return try transaction(description, upserts: [.project(project)])
    }

    private func insertTasks() throws -> String {
        var tasks = (0..<Int.random(in: 1...4, using: &random)).map { _ in newTask() }
        var description = "insert \(tasks.count) tasks"
        if oneIn(10) {
            if Bool.random(using: &random) {
                tasks[0].projectID = newID()
                description += ", one in a missing project"
            } else {
                tasks[0].tagIDs.append(newID())
                description += ", one with a missing tag"
            }
        }
        return try transaction(description, upserts: tasks.map(Upsert.task))
    }

    private func batchInsertTasks() throws -> String {
        let tasks = (0..<Int.random(in: 5...30, using: &random)).map { _ in newTask() }
        let chunkSize = Int.random(in: 1...10, using: &random)
        let description = "insert \(tasks.count) tasks in chunks of \(chunkSize)"
        for start in stride(from: 0, to: tasks.count, by: chunkSize) {
            let chunk = tasks[start..<min(start + chunkSize, tasks.count)]
            try expectSuccess(description) { () throws(Failure) in _ = try reference.apply(chunk.map(Upsert.task)) }
        }
        let saved = try context.insert(contentsOf: tasks, chunkSize: chunkSize)
        if saved != tasks.count { throw mismatch(description, "\(saved) saved") }
        count("batch insert")
        return description
    }

    private func updateTasks() throws -> String {
        var tasks = pickSome(reference.tasks, 1...3)
        for index in tasks.indices {
            tasks[index].title = freshName("task")
            tasks[index].priority = Int.random(in: 0...4, using: &random)
            if oneIn(3) { tasks[index].projectID = pick(reference.projects)?.id }
            if oneIn(3) { tasks[index].assigneeID = pick(reference.people)?.id }
            if oneIn(4) { tasks[index].ownerID = pick(reference.owners)?.id }
            if oneIn(2) {
                // Many-to-many changes: drop some tags, add others.
                tasks[index].tagIDs.removeAll { _ in oneIn(2) }
                for tag in pickSome(reference.tags, 0...2) where !tasks[index].tagIDs.contains(tag.id) {
                    tasks[index].tagIDs.append(tag.id)
                }
            }
        }
        return try transaction("update \(tasks.count) tasks", upserts: tasks.map(Upsert.task))
    }

    private func insertSubtask() throws -> String {
        var subtask = MBSubtask(id: newID(), title: freshName("subtask"), taskID: pick(reference.tasks)?.id)
        var description = "insert a subtask"
        if oneIn(10) {
            subtask.taskID = newID()
            description += " of a missing task"
        }
        return try transaction(description, upserts: [.subtask(subtask)])
    }

    private func insertRelated() throws -> String {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: try transaction("insert a tag", upserts: [.tag(MBTag(id: newID(), label: freshName("tag")))])
        case 1: try transaction("insert a person", upserts: [.person(MBPerson(id: newID(), name: freshName("person")))])
        default: try transaction("insert an owner", upserts: [.owner(MBOwner(id: newID(), name: freshName("owner")))])
        }
    }

    private func deleteTasks() throws -> String {
        let ids = pickSome(reference.tasks, 1...2).map(\.id)
        return try transaction("delete \(ids.count) tasks", deletes: Deletes(tasks: ids))
    }

    private func deleteProject() throws -> String {
        guard let project = pick(reference.projects) else { return "nothing" }
        let tasks = reference.tasks.values.filter { $0.projectID == project.id }.count
        return try transaction("delete a project with \(tasks) tasks", deletes: Deletes(projects: [project.id]))
    }

    private func deleteRelated() throws -> String {
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            guard let tag = pick(reference.tags) else { return "nothing" }
            return try transaction("delete a tag (nullify)", deletes: Deletes(tags: [tag.id]))
        case 1:
            guard let person = pick(reference.people) else { return "nothing" }
            return try transaction("delete a person (nullify)", deletes: Deletes(people: [person.id]))
        case 2:
            guard let owner = pick(reference.owners) else { return "nothing" }
            return try transaction("delete an owner (noAction)", deletes: Deletes(owners: [owner.id]))
        default:
            guard let subtask = pick(reference.subtasks) else { return "nothing" }
            return try transaction("delete a subtask", deletes: Deletes(subtasks: [subtask.id]))
        }
    }

    private func batchDeleteByIDs() throws -> String {
        var ids = pickSome(reference.tasks, 1...8).map(\.id)
        if oneIn(4) { ids.insert(newID(), at: Int.random(in: 0...ids.count, using: &random)) }
        let chunkSize = Int.random(in: 1...4, using: &random)
        let description = "delete \(ids.count) tasks by ID in chunks of \(chunkSize)"
        var deleted = 0
        var failure: Failure?
        for start in stride(from: 0, to: ids.count, by: chunkSize) {
            let chunk = Array(ids[start..<min(start + chunkSize, ids.count)])
            do {
                deleted += Set(chunk).intersection(try reference.apply([], deleting: Deletes(tasks: chunk)).tasks).count
            } catch {
                failure = error
                break
            }
        }
        try expectChunked(description, expected: failure, count: deleted) {
            try context.delete(MBTask.self, ids: ids, chunkSize: chunkSize)
        }
        return description
    }

    private func batchDeleteByPredicate() throws -> String {
        let priority = Int.random(in: 0...4, using: &random)
        let chunkSize = Int.random(in: 1...4, using: &random)
        let description = "delete the tasks of priority \(priority) in chunks of \(chunkSize)"
        var deleted = 0
        var failure: Failure?
        while true {
            let chunk = Array(
                reference.tasks.values.filter { $0.priority == priority }.map(\.id)
                    .sorted { $0.precedesInKeyOrder($1) }.prefix(chunkSize))
            guard !chunk.isEmpty else { break }
            do {
                try reference.apply([], deleting: Deletes(tasks: chunk))
                deleted += chunk.count
            } catch {
                failure = error
                break
            }
        }
        try expectChunked(description, expected: failure, count: deleted) {
            try context.delete(MBTask.self, where: #Predicate { $0.priority == priority }, chunkSize: chunkSize)
        }
        return description
    }

    private func batchUpdate() throws -> String {
        let priority = Int.random(in: 0...4, using: &random)
        let chunkSize = Int.random(in: 1...6, using: &random)
        let description = "update the tasks of priority \(priority) in chunks of \(chunkSize)"
        let matching = reference.tasks.values.filter { $0.priority == priority }.map { task in
            var task = task
            task.title += "+"
            return Upsert.task(task)
        }
        try expectSuccess(description) { () throws(Failure) in _ = try reference.apply(matching) }
        let updated = try context.update(
            FetchDescriptor<MBTask>(predicate: #Predicate { $0.priority == priority }), chunkSize: chunkSize
        ) { task in
            task.title += "+"
        }
        if updated != matching.count { throw mismatch(description, "\(updated) updated, not \(matching.count)") }
        count("batch update")
        return description
    }

    /// Inserts, updates and deletes of several entities in one save, whose deletes run in one pass of the rules.
    private func mixedSave() throws -> String {
        var upserts: [Upsert] = []
        var deletes = Deletes()
        var parts: [String] = []
        var task = newTask()
        if let tag = pick(reference.tags), oneIn(3) {
            // The new task is tagged with a tag this save deletes: the nullify rule removes the tag from it.
            if !task.tagIDs.contains(tag.id) { task.tagIDs.append(tag.id) }
            deletes.tags.append(tag.id)
            parts.append("a new task tagged with a tag deleted in the same save")
        } else {
            parts.append("a new task")
        }
        upserts.append(.task(task))
        if var updated = pick(reference.tasks) {
            updated.priority = Int.random(in: 0...4, using: &random)
            upserts.append(.task(updated))
            parts.append("an update")
        }
        if let subtask = pick(reference.subtasks), let parent = subtask.taskID, oneIn(2) {
            // A task deleted with all of its subtasks passes its deny rule.
            deletes.subtasks = reference.subtasks.values.filter { $0.taskID == parent }.map(\.id)
            deletes.tasks.append(parent)
            parts.append("a task with its \(deletes.subtasks.count) subtasks")
        }
        if let person = pick(reference.people), oneIn(3) {
            deletes.people.append(person.id)
            parts.append("a person deleted")
        }
        return try transaction("save " + parts.joined(separator: ", "), upserts: upserts, deletes: deletes, path: 0)
    }

    // MARK: - Running one transaction on both sides

    /// Runs one transaction on the reference and on the store, through a context's save or an explicit write
    /// (`path` 0 or 1; random when `nil`), and requires the same outcome.
    private func transaction(
        _ description: String,
        upserts: [Upsert] = [],
        deletes: Deletes = Deletes(),
        path: Int? = nil
    ) throws -> String {
        var expected: Failure?
        do {
            try reference.apply(upserts, deleting: deletes)
        } catch {
            expected = error
        }
        let throughContext = (path ?? Int.random(in: 0...1, using: &random)) == 0
        let description = description + (throughContext ? " (context)" : " (write)")
        do {
            if throughContext {
                for upsert in upserts { insert(upsert, into: context) }
                for id in deletes.projects { context.delete(MBProject.self, id: id) }
                for id in deletes.tasks { context.delete(MBTask.self, id: id) }
                for id in deletes.subtasks { context.delete(MBSubtask.self, id: id) }
                for id in deletes.tags { context.delete(MBTag.self, id: id) }
                for id in deletes.people { context.delete(MBPerson.self, id: id) }
                for id in deletes.owners { context.delete(MBOwner.self, id: id) }
                try context.save()
            } else {
                // One entity's deletes per transaction here: each `delete(_:ids:)` is a pass of the rules of its own.
                try container.write { txn in
                    for upsert in upserts { try insert(upsert, in: txn) }
                    if !deletes.projects.isEmpty { try txn.delete(MBProject.self, ids: deletes.projects) }
                    if !deletes.tasks.isEmpty { try txn.delete(MBTask.self, ids: deletes.tasks) }
                    if !deletes.subtasks.isEmpty { try txn.delete(MBSubtask.self, ids: deletes.subtasks) }
                    if !deletes.tags.isEmpty { try txn.delete(MBTag.self, ids: deletes.tags) }
                    if !deletes.people.isEmpty { try txn.delete(MBPerson.self, ids: deletes.people) }
                    if !deletes.owners.isEmpty { try txn.delete(MBOwner.self, ids: deletes.owners) }
                }
            }
        } catch let error as KVStoreError {
            context.rollback()
            guard let expected, error == expected.error else {
                throw mismatch(description, "the store threw \(error); the reference \(outcome(expected))")
            }
            count("\(expected)")
            return description
        }
        if let expected { throw mismatch(description, "the store succeeded; the reference \(outcome(expected))") }
        count("success")
        return description
    }

    /// Checks the outcome of a chunked operation: the count it returns, or the error of the failing chunk with the
    /// count of the chunks before it.
    private func expectChunked(_ description: String, expected: Failure?, count: Int, _ body: () throws -> Int) throws {
        do {
            let done = try body()
            if let expected { throw mismatch(description, "the store succeeded; the reference \(outcome(expected))") }
            if done != count { throw mismatch(description, "the store counted \(done), the reference \(count)") }
            self.count("chunked success")
        } catch let error as KVStoreError {
            guard let expected, error == expected.error, error.committedCount == count else {
                throw mismatch(
                    description,
                    "the store threw \(error) after \(error.committedCount ?? 0) models; the reference "
                        + "\(outcome(expected)) after \(count)")
            }
            self.count("chunked \(expected)")
        }
    }

    private func expectSuccess(_ description: String, _ body: () throws(Failure) -> Void) throws {
        do {
            try body()
        } catch {
            throw mismatch(description, "the reference refused a step meant to succeed: \(error)")
        }
    }

    private func outcome(_ failure: Failure?) -> String {
        failure.map { "expects \($0)" } ?? "expects success"
    }

    private func count(_ outcome: String) {
        outcomes[outcome, default: 0] += 1
    }

    private func insert(_ upsert: Upsert, into context: ModelContext) {
        switch upsert {
        case .project(let model): context.insert(model)
        case .task(let model): context.insert(model)
        case .subtask(let model): context.insert(model)
        case .tag(let model): context.insert(model)
        case .person(let model): context.insert(model)
        case .owner(let model): context.insert(model)
        }
    }

    private func insert(_ upsert: Upsert, in txn: borrowing ModelTransaction) throws {
        switch upsert {
        case .project(let model): try txn.insert(model)
        case .task(let model): try txn.insert(model)
        case .subtask(let model): try txn.insert(model)
        case .tag(let model): try txn.insert(model)
        case .person(let model): try txn.insert(model)
        case .owner(let model): try txn.insert(model)
        }
    }

    // MARK: - Random picks

    /// A new ID from the counter: IDs sort in creation order, and a seed makes the same ones.
    private func newID() -> UUID {
        counter += 1
        return UUID(modelBasedCounter: counter, seed: seed)
    }

    private func freshName(_ prefix: String) -> String {
        counter += 1
        return "\(prefix) \(counter)"
    }

    private func newTask() -> MBTask {
        MBTask(
            id: newID(), title: freshName("task"), priority: Int.random(in: 0...4, using: &random),
            projectID: oneIn(5) ? nil : pick(reference.projects)?.id,
            assigneeID: oneIn(2) ? nil : pick(reference.people)?.id,
            ownerID: oneIn(2) ? nil : pick(reference.owners)?.id,
            tagIDs: pickSome(reference.tags, 0...2).map(\.id))
    }

    private func oneIn(_ n: Int) -> Bool {
        Int.random(in: 0..<n, using: &random) == 0
    }

    /// A random model of `models`, picked in key order.
    private func pick<M: Model>(_ models: [UUID: M]) -> M? {
        inKeyOrder(models).randomElement(using: &random)
    }

    /// Between `range` distinct random models of `models`.
    private func pickSome<M: Model>(_ models: [UUID: M], _ range: ClosedRange<Int>) -> [M] {
        Array(inKeyOrder(models).shuffled(using: &random).prefix(Int.random(in: range, using: &random)))
    }

    private func inKeyOrder<M: Model>(_ models: [UUID: M]) -> [M] {
        models.values.sorted { $0.id.precedesInKeyOrder($1.id) }
    }
}
