import Foundation
import KVStore
import KVStoreInspection
import TestSupport

/// One seeded run of the mixed model-based test: random operations on struct models (`MBProject`, `MBTask`, `MBTag`)
/// and on reference models (`RefProject`, `RefTask`, `RefTag`) through one context, checked after every step against
/// in-memory references: ``ReferenceModelBasedState`` for the objects (what the context shows and what the store
/// holds), ``ModelBasedReference`` for the structs.
///
/// Every pick is made from IDs in key order and every ID is made from a counter, so a seed replays the same run.
///
/// The context holds every object of the store at the start of each operation (the check after each step fetches them
/// all, and the run keeps them), so its delete rules reach every child at once; the operation that deletes from a
/// fresh context leaves the children it does not hold to the store's rules at save.
final class ReferenceModelBasedRun {
    /// One struct model to save.
    typealias Upsert = ModelBasedReference.Upsert
    /// How a save must fail.
    typealias Failure = ModelBasedReference.Failure
    /// The values of the reference models.
    typealias State = ReferenceModelBasedState

    /// A struct change pending in the context.
    enum PendingStruct {
        /// The model is saved.
        case upsert(Upsert)
        /// The model of this kind is deleted.
        case delete(Kind)
    }

    /// The kinds of model the run changes, among structs (`MBProject`, `MBTask`, `MBTag`) or objects (`RefProject`,
    /// `RefTask`, `RefTag`).
    enum Kind {
        case project, task, tag
    }

    /// An object deleted in the context and not saved, with its values then, to insert back.
    enum DeletedObject {
        case project(RefProject, State.Project)
        case task(RefTask, State.Task)
        case tag(RefTag, State.Tag)
    }

    /// The seed of the run's choices.
    let seed: UInt64
    /// The on-disk store under test.
    let container: ModelContainer
    /// The context the operations go through; replaced by a fresh one now and then.
    var context: ModelContext
    /// The run's random choices.
    var random: SplitMix64
    /// The number of steps of the run.
    private(set) var steps = 0
    /// The number of the step running.
    var step = 0
    /// The source of new IDs and names.
    var counter: UInt64 = 0
    /// The operation running, for a mismatch to name.
    var operation = ""

    /// The reference models as the store holds them.
    var saved = State()
    /// The reference models as the context shows them: `saved` with its unsaved changes.
    var current = State()
    /// The struct models as the store holds them.
    var savedStructs = ModelBasedReference()
    /// The struct changes pending in the context, by ID.
    var pendingStructs: [UUID: PendingStruct] = [:]
    /// The objects the run obtained from the context, by ID: every later read of the model there must give the same
    /// object. Keeping them keeps them in the context after a save.
    var held: [UUID: AnyObject] = [:]
    /// The objects deleted in the context since its last save, which may be inserted back.
    var deletedHere: [UUID: DeletedObject] = [:]
    /// The models deleted from the store.
    var gone: [UUID: Kind] = [:]
    /// How often each kind of outcome was seen, for the test to check that the run exercised them.
    private(set) var outcomes: [String: Int] = [:]

    /// The model types of the run's container: the struct models of the model-based test and the reference models.
    static let types: [any StoredModel.Type] =
        modelBasedTypes.map { $0 as any StoredModel.Type } + [RefProject.self, RefTask.self, RefTag.self]

    /// A run seeded with `seed`, on a new store at `path`.
    init(seed: UInt64, path: String) throws {
        self.seed = seed
        random = SplitMix64(seed: seed)
        container = try ModelContainer(for: Self.types, configuration: ModelConfiguration(path: path, durability: .off))
        context = ModelContext(container)
    }

    /// Runs `steps` random operations, checking the context against the references after each.
    func run(steps: Int) throws {
        self.steps = steps
        for number in 1...steps {
            step = number
            try nextOperation()
            try checkContext(context, against: current, structs: structView(), isMain: true)
        }
        try save()
    }

    /// A failure of the run at the current step.
    func mismatch(_ detail: String) -> ModelBasedMismatch {
        ModelBasedMismatch(
            description: "seed \(seed), step \(step) (\(operation)): \(detail)\n"
                + "Replay: KVSTORE_REFMODEL_SEED=\(seed) KVSTORE_REFMODEL_STEPS=\(steps) "
                + "swift test --filter ReferenceModelBasedTests")
    }

    /// Counts an outcome.
    func count(_ outcome: String) {
        outcomes[outcome, default: 0] += 1
    }

    // MARK: - Operations

    private func nextOperation() throws {
        let (projects, tasks, tags) = (current.projects.count, current.tasks.count, current.tags.count)
        let structTasks = structView().tasks.count
        let choices: [(weight: Int, operation: () throws -> Void)] = [
            (projects < 6 ? 3 : 1, insertProject),
            (tasks < 30 ? 5 : 1, insertTask),
            (tags < 6 ? 2 : 0, insertTag),
            (tasks > 0 ? 5 : 1, changeAttributes),
            (tasks > 0 ? 4 : 0, moveTask),
            (tasks > 0 && tags > 0 ? 4 : 0, changeTags),
            (tasks > 0 ? 2 : 0, deleteTask),
            (projects > 0 ? 2 : 0, deleteProject),
            (tags > 0 ? 2 : 0, deleteTag),
            (deletedHere.isEmpty ? 0 : 2, insertDeletedObjectBack),
            (5, save),
            (1, rollback),
            (1, openFreshContext),
            (saved.projects.isEmpty && saved.tags.isEmpty ? 0 : 2, deleteFromFreshContext),
            (1, forgetHeldObjects),
            (2, insertStructProjects),
            (structTasks < 20 ? 3 : 1, insertStructTasks),
            (structTasks > 0 ? 2 : 0, modifyStructTask),
            (1, insertStructTag),
            (2, deleteStructModel),
        ]
        var pick = Int.random(in: 0..<choices.reduce(0) { $0 + $1.weight }, using: &random)
        for choice in choices {
            if pick < choice.weight {
                operation = ""
                return try choice.operation()
            }
            pick -= choice.weight
        }
    }

    /// Saves the context; the references take the outcome: the store's state, or a refusal that a rollback or a repair
    /// of the struct changes follows.
    func save() throws {
        operation = "save"
        if oneIn(5) { insertFailingStructChange() }
        try saveAndCheck(mayRepair: true)
    }

    private func saveAndCheck(mayRepair: Bool) throws {
        var next = savedStructs
        var expected: Failure?
        do {
            let (upserts, deletes) = pendingStructSave()
            try next.apply(upserts, deleting: deletes)
        } catch {
            expected = error
        }
        do {
            try context.save()
        } catch let error as KVStoreError {
            guard let expected, error == expected.error else {
                throw mismatch(
                    "the save threw \(error); the reference expects \(expected.map { "\($0)" } ?? "success")")
            }
            count("save refused: \(expected)")
            // Nothing of the save is written, and the context keeps its changes.
            try checkContext(ModelContext(container), against: saved, structs: savedStructs, isMain: false)
            try checkContext(context, against: current, structs: structView(), isMain: true)
            if mayRepair && Bool.random(using: &random) {
                operation += ", then undo the struct changes one by one and save again"
                repairStructChanges()
                try saveAndCheck(mayRepair: false)
            } else {
                operation += ", then roll back"
                try rollback()
            }
            return
        }
        if let expected { throw mismatch("the save succeeded; the reference expects \(expected)") }
        count("save")
        for id in saved.projects.keys where current.projects[id] == nil { gone[id] = .project }
        for id in saved.tasks.keys where current.tasks[id] == nil { gone[id] = .task }
        for id in saved.tags.keys where current.tags[id] == nil { gone[id] = .tag }
        saved = current
        savedStructs = next
        pendingStructs = [:]
        deletedHere = [:]
        try checkSaved()
    }

    /// Replaces each pending struct insert or update by a change that cannot fail: the stored model again, or a
    /// delete of a model that is not stored.
    private func repairStructChanges() {
        for (id, change) in pendingStructs {
            guard case .upsert(let upsert) = change else { continue }
            switch upsert {
            case .project:
                if let stored = savedStructs.projects[id] {
                    context.insert(stored)
                    pendingStructs[id] = .upsert(.project(stored))
                } else {
                    context.delete(MBProject.self, id: id)
                    pendingStructs[id] = .delete(.project)
                }
            case .task:
                if let stored = savedStructs.tasks[id] {
                    context.insert(stored)
                    pendingStructs[id] = .upsert(.task(stored))
                } else {
                    context.delete(MBTask.self, id: id)
                    pendingStructs[id] = .delete(.task)
                }
            case .tag:
                if let stored = savedStructs.tags[id] {
                    context.insert(stored)
                    pendingStructs[id] = .upsert(.tag(stored))
                } else {
                    context.delete(MBTag.self, id: id)
                    pendingStructs[id] = .delete(.tag)
                }
            case .subtask, .person, .owner:
                break
            }
        }
    }

    /// Rolls the context back: the objects take their stored values again, the struct changes are forgotten.
    func rollback() throws {
        if operation.isEmpty { operation = "roll back" }
        context.rollback()
        count("rollback")
        current = saved
        pendingStructs = [:]
        deletedHere = [:]
        held = held.filter { current.allIDs.contains($0.key) }
    }

    /// Replaces the context by a fresh one, leaving its unsaved changes.
    func openFreshContext() throws {
        operation = "open a fresh context"
        replaceContext()
    }

    private func replaceContext() {
        context = ModelContext(container)
        current = saved
        pendingStructs = [:]
        deletedHere = [:]
        held = [:]
        count("fresh context")
    }

    /// Deletes a project or a tag from a fresh context that holds only it and some of its tasks (one of them changed),
    /// and saves: the context applies the rule to the tasks it holds, the store to the others.
    func deleteFromFreshContext() throws {
        replaceContext()
        if let projectID = pickID(saved.projects), saved.tags.isEmpty || Bool.random(using: &random) {
            let children = saved.tasks(in: projectID)
            let kept = pickSome(children, 0...children.count)
            operation = "delete a project from a fresh context that holds \(kept.count) of its \(children.count) tasks"
            for id in kept { _ = try object(RefTask.self, id) }
            let project = try object(RefProject.self, projectID)
            if let id = kept.first { try object(RefTask.self, id).title = freshName("task") }
            context.delete(project)
            current.deleteProject(projectID)
        } else if let tagID = pickID(saved.tags) {
            let tagged = saved.tasks(taggedWith: tagID)
            let kept = pickSome(tagged, 0...tagged.count)
            operation = "delete a tag from a fresh context that holds \(kept.count) of its \(tagged.count) tasks"
            for id in kept { _ = try object(RefTask.self, id) }
            if let id = kept.first {
                let title = freshName("task")
                try object(RefTask.self, id).title = title
                current.tasks[id]?.title = title
            }
            context.delete(try object(RefTag.self, tagID))
            current.deleteTag(tagID)
        }
        if oneIn(2) {
            // The tasks this fetch brings in after the delete must take, at the save, what the store's rule does to
            // them (a cascaded task no longer reads, a nullified one loses the tag's ID).
            operation += ", fetching the tasks before the save"
            for task in try context.fetch(FetchDescriptor<RefTask>()) { held[task.id] = task }
        }
        count("delete from a fresh context")
        try saveAndCheck(mayRepair: false)
    }

    /// Lets go of the objects the run keeps: after a save the context keeps only those someone holds.
    func forgetHeldObjects() throws {
        operation = "forget the objects held"
        held = [:]
    }

    // MARK: - Objects and picks

    /// The context's object of `type` with `id`, which must exist and be the one read before.
    func object<M: PersistentModel>(_ type: M.Type, _ id: UUID) throws -> M {
        guard let object = try context.model(for: id, as: M.self) else {
            throw mismatch("the context has no \(M.entity.name) \(id)")
        }
        if let known = held[id], known !== object {
            throw mismatch("the context read another object for \(M.entity.name) \(id) than before")
        }
        held[id] = object
        return object
    }

    /// A new ID from the counter: IDs sort in creation order, and a seed makes the same ones.
    func newID() -> UUID {
        counter += 1
        return UUID(modelBasedCounter: counter, seed: seed)
    }

    /// A name not used before, whose number is zero-padded so that names sort the same as strings and as numbers.
    func freshName(_ prefix: String) -> String {
        counter += 1
        let number = String(counter)
        return "\(prefix) " + String(repeating: "0", count: max(0, 6 - number.count)) + number
    }

    func oneIn(_ n: Int) -> Bool {
        Int.random(in: 0..<n, using: &random) == 0
    }

    /// A random key of `values`, picked in key order.
    func pickID<V>(_ values: [UUID: V]) -> UUID? {
        inKeyOrder(Array(values.keys)).randomElement(using: &random)
    }

    /// Between `range` distinct random IDs of `ids`, picked in key order.
    func pickSome(_ ids: [UUID], _ range: ClosedRange<Int>) -> [UUID] {
        let count = Int.random(
            in: range.lowerBound...max(range.lowerBound, min(range.upperBound, ids.count)), using: &random)
        return Array(inKeyOrder(ids).shuffled(using: &random).prefix(count))
    }

    func inKeyOrder(_ ids: [UUID]) -> [UUID] {
        ids.sorted { $0.precedesInKeyOrder($1) }
    }
}
