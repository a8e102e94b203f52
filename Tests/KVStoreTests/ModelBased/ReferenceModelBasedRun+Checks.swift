import Foundation
import KVStore
import KVStoreInspection

/// The checks of the mixed model-based test: a context's view of every model against the references, and after each
/// save, a fresh context's view and the store's integrity.
extension ReferenceModelBasedRun {
    /// Checks what `context` shows against `expected` and `structs`: the fetched objects and their values, one object
    /// per model (repeated fetches, key lookups, relationship properties and the objects the run holds all give the
    /// same one), counts, predicates and sorted pages, both sides of every relationship, no reads of deleted models,
    /// and `hasChanges`.
    ///
    /// - Parameter isMain: Whether `context` is the run's context, which `expected` describes with its unsaved
    ///   changes; otherwise a fresh one, which shows the store.
    func checkContext(
        _ context: ModelContext, against expected: State, structs: ModelBasedReference, isMain: Bool
    ) throws {
        let which = isMain ? "the context" : "a fresh context"
        let expectsChanges = isMain && (expected != saved || !pendingStructs.isEmpty)
        // `hasChanges` is checked before the fetches below and again after them: a fetch never changes it.
        if context.hasChanges != expectsChanges {
            throw mismatch("\(which)'s hasChanges is \(context.hasChanges), not \(expectsChanges)")
        }
        let projects = try context.fetch(FetchDescriptor<RefProject>())
        let tasks = try context.fetch(FetchDescriptor<RefTask>())
        let tags = try context.fetch(FetchDescriptor<RefTag>())
        let shown = State(projects: projects, tasks: tasks, tags: tags)
        if shown != expected {
            throw mismatch("\(which) differs from the reference:\n" + expected.differences(from: shown))
        }
        if projects.count != expected.projects.count || tasks.count != expected.tasks.count
            || tags.count != expected.tags.count
        {
            throw mismatch(
                "\(which) fetched \(projects.count) projects, \(tasks.count) tasks and \(tags.count) tags for "
                    + "\(expected.projects.count), \(expected.tasks.count) and \(expected.tags.count)")
        }
        let objects = Objects(projects: projects, tasks: tasks, tags: tags)
        try checkIdentity(of: objects, in: context, which: which, isMain: isMain)
        try checkQueries(in: context, against: expected, objects: objects, which: which)
        try checkRelationships(of: objects, against: expected, which: which)
        try checkDeletedReads(in: context, against: expected, which: which, isMain: isMain)
        if let error = context.relationshipError { throw mismatch("\(which) met an error in a relationship: \(error)") }
        try checkStructs(in: context, against: structs, which: which)
        if context.hasChanges != expectsChanges {
            throw mismatch("\(which)'s hasChanges is \(context.hasChanges) after its fetches, not \(expectsChanges)")
        }
    }

    /// The objects a context fetched, by ID.
    struct Objects {
        /// The projects.
        let projects: [UUID: RefProject]
        /// The tasks.
        let tasks: [UUID: RefTask]
        /// The tags.
        let tags: [UUID: RefTag]

        /// The objects of the three fetches; a duplicate keeps the first (the counts are checked apart).
        init(projects: [RefProject], tasks: [RefTask], tags: [RefTag]) {
            self.projects = Dictionary(projects.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            self.tasks = Dictionary(tasks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            self.tags = Dictionary(tags.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }

        /// Every object, by ID.
        var all: [UUID: AnyObject] {
            var all: [UUID: AnyObject] = [:]
            for (id, object) in projects { all[id] = object }
            for (id, object) in tasks { all[id] = object }
            for (id, object) in tags { all[id] = object }
            return all
        }
    }

    /// A second fetch, a key lookup and (in the run's context) the objects the run holds give the same objects.
    private func checkIdentity(of objects: Objects, in context: ModelContext, which: String, isMain: Bool) throws {
        let again = Objects(
            projects: try context.fetch(FetchDescriptor<RefProject>()),
            tasks: try context.fetch(FetchDescriptor<RefTask>()), tags: try context.fetch(FetchDescriptor<RefTag>()))
        let first = objects.all
        for (id, object) in again.all where first[id] !== object {
            throw mismatch("a second fetch in \(which) gave another object for \(id)")
        }
        for (id, project) in objects.projects where try context.model(for: id, as: RefProject.self) !== project {
            throw mismatch("model(for:) in \(which) gave another object for project \(id)")
        }
        for (id, task) in objects.tasks where try context.model(for: id, as: RefTask.self) !== task {
            throw mismatch("model(for:) in \(which) gave another object for task \(id)")
        }
        for (id, tag) in objects.tags where try context.model(for: id, as: RefTag.self) !== tag {
            throw mismatch("model(for:) in \(which) gave another object for tag \(id)")
        }
        guard isMain else { return }
        for (id, object) in first {
            if let known = held[id], known !== object {
                throw mismatch("\(which) fetched another object for \(id) than the one it gave before")
            }
            held[id] = object
        }
    }

    /// Counts, a predicate the index answers, one it does not, and a sorted page.
    private func checkQueries(
        in context: ModelContext, against expected: State, objects: Objects, which: String
    ) throws {
        let counts = [
            try context.fetchCount(FetchDescriptor<RefProject>()), try context.fetchCount(FetchDescriptor<RefTask>()),
            try context.fetchCount(FetchDescriptor<RefTag>()),
        ]
        if counts != [expected.projects.count, expected.tasks.count, expected.tags.count] {
            throw mismatch("\(which) counts \(counts)")
        }
        let threshold = Int.random(in: 0...4, using: &random)
        let urgent = FetchDescriptor<RefTask>(predicate: #Predicate { $0.priority >= threshold })
        let urgentCount = expected.tasks.values.filter { $0.priority >= threshold }.count
        if try context.fetchCount(urgent) != urgentCount {
            throw mismatch("\(which) counts \(try context.fetchCount(urgent)) tasks of priority >= \(threshold)")
        }
        let open = try context.fetch(FetchDescriptor<RefTask>(predicate: #Predicate { !$0.isDone }))
        let expectedOpen = Set(expected.tasks.filter { !$0.value.isDone }.map(\.key))
        if Set(open.map(\.id)) != expectedOpen || open.count != expectedOpen.count {
            throw mismatch("\(which) fetched \(open.count) open tasks for \(expectedOpen.count)")
        }
        if open.contains(where: { objects.tasks[$0.id] !== $0 }) {
            throw mismatch("a fetch of the open tasks in \(which) gave other objects")
        }
        var page = FetchDescriptor<RefTask>(
            predicate: #Predicate { $0.priority >= threshold },
            sortBy: [SortDescriptor(\.priority, order: .reverse), SortDescriptor(\.title)])
        page.fetchOffset = Int.random(in: 0...3, using: &random)
        page.fetchLimit = Int.random(in: 1...5, using: &random)
        let expectedPage = expected.tasks.filter { $0.value.priority >= threshold }
            .sorted { left, right in
                left.value.priority != right.value.priority
                    ? left.value.priority > right.value.priority : left.value.title < right.value.title
            }
            .dropFirst(page.fetchOffset).prefix(page.fetchLimit ?? 0).map(\.key)
        let fetchedPage = try context.fetch(page).map(\.id)
        if fetchedPage != Array(expectedPage) {
            throw mismatch(
                "\(which) fetched the page at \(page.fetchOffset) of \(page.fetchLimit ?? 0) of the tasks of priority "
                    + ">= \(threshold) by priority and title as \(fetchedPage), not \(Array(expectedPage))")
        }
    }

    /// Both sides of every relationship: each task's project and tags, each project's and tag's tasks, as the
    /// context's objects.
    private func checkRelationships(of objects: Objects, against expected: State, which: String) throws {
        for (id, task) in objects.tasks {
            guard let value = expected.tasks[id] else { continue }
            let project = task.project
            if project?.id != value.projectID || project.map({ objects.projects[$0.id] !== $0 }) == true {
                throw mismatch(
                    "in \(which), task \(id)'s project reads \(project?.id.uuidString ?? "nil") "
                        + "(\(project.map { objects.projects[$0.id] === $0 ? "the context's object" : "another object" } ?? "")), "
                        + "not \(value.projectID?.uuidString ?? "nil")")
            }
            let tags = task.tags
            if tags.map(\.id) != value.tagIDs || tags.contains(where: { objects.tags[$0.id] !== $0 }) {
                throw mismatch("in \(which), task \(id)'s tags read \(tags.map(\.id)), not \(value.tagIDs)")
            }
        }
        // A derived list reads in key order, even right after it is assigned or appended to.
        for (id, project) in objects.projects {
            let list = project.tasks
            let expectedList = expected.tasks(in: id)
            if list.map(\.id) != expectedList || list.contains(where: { objects.tasks[$0.id] !== $0 }) {
                throw mismatch("in \(which), project \(id)'s tasks read \(list.map(\.id)), not \(expectedList)")
            }
        }
        for (id, tag) in objects.tags {
            let list = tag.tasks
            let expectedList = expected.tasks(taggedWith: id)
            if list.map(\.id) != expectedList || list.contains(where: { objects.tasks[$0.id] !== $0 }) {
                throw mismatch("in \(which), tag \(id)'s tasks read \(list.map(\.id)), not \(expectedList)")
            }
        }
    }

    /// Key lookups of models deleted in the context, and of some deleted from the store, read nothing.
    private func checkDeletedReads(
        in context: ModelContext, against expected: State, which: String, isMain: Bool
    ) throws {
        var deleted: [(UUID, Kind)] = []
        if isMain {
            deleted += saved.projects.keys.filter { expected.projects[$0] == nil }.map { ($0, .project) }
            deleted += saved.tasks.keys.filter { expected.tasks[$0] == nil }.map { ($0, .task) }
            deleted += saved.tags.keys.filter { expected.tags[$0] == nil }.map { ($0, .tag) }
        }
        for id in pickSome(Array(gone.keys), 0...3) {
            if let kind = gone[id] { deleted.append((id, kind)) }
        }
        for (id, kind) in deleted {
            let read: AnyObject? =
                switch kind {
                case .project: try context.model(for: id, as: RefProject.self)
                case .task: try context.model(for: id, as: RefTask.self)
                case .tag: try context.model(for: id, as: RefTag.self)
                }
            if read != nil { throw mismatch("\(which) reads deleted \(kind) \(id)") }
        }
    }

    /// The struct models a context fetches, with its pending changes laid over the store's.
    private func checkStructs(in context: ModelContext, against structs: ModelBasedReference, which: String) throws {
        var shown = ModelBasedReference()
        for project in try context.fetch(FetchDescriptor<MBProject>()) { shown.projects[project.id] = project }
        for task in try context.fetch(FetchDescriptor<MBTask>()) { shown.tasks[task.id] = task }
        for tag in try context.fetch(FetchDescriptor<MBTag>()) { shown.tags[tag.id] = tag }
        if shown != structs {
            throw mismatch("\(which) shows other struct models:\n" + structs.differences(from: shown))
        }
        let count = try context.fetchCount(FetchDescriptor<MBTask>())
        if count != structs.tasks.count {
            throw mismatch("\(which) counts \(count) struct tasks, not \(structs.tasks.count)")
        }
    }

    /// After a save: a fresh context shows what the references say is stored, the store holds those structs, and the
    /// integrity check passes.
    func checkSaved() throws {
        try checkContext(ModelContext(container), against: saved, structs: savedStructs, isMain: false)
        let stored = try ModelBasedReference.read(from: container)
        if stored != savedStructs {
            throw mismatch("the store holds other struct models:\n" + savedStructs.differences(from: stored))
        }
        let errors = try StoreInspection.check(path: container.path).errors
        if !errors.isEmpty {
            throw mismatch("the integrity check failed:\n" + errors.map(\.description).joined(separator: "\n"))
        }
    }
}
