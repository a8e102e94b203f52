import Foundation
import KVStore

/// The operations of the mixed model-based test on struct models, through the same context as the objects: inserts,
/// updates and deletes that stay pending until a save, some of which make the whole save fail.
extension ReferenceModelBasedRun {
    /// The struct models as the context shows them: the stored ones with the pending changes laid over, the delete
    /// rules not applied until the save.
    func structView() -> ModelBasedReference {
        var view = savedStructs
        for (id, change) in pendingStructs {
            switch change {
            case .upsert(.project(let model)): view.projects[id] = model
            case .upsert(.task(let model)): view.tasks[id] = model
            case .upsert(.tag(let model)): view.tags[id] = model
            case .upsert: break
            case .delete(.project): view.projects[id] = nil
            case .delete(.task): view.tasks[id] = nil
            case .delete(.tag): view.tags[id] = nil
            }
        }
        return view
    }

    /// The pending struct changes as one transaction of the reference: the upserts in key order (the order a save
    /// writes one entity's models in), then the deletes in one pass of the rules.
    func pendingStructSave() -> ([Upsert], ModelBasedReference.Deletes) {
        var upserts: [Upsert] = []
        var deletes = ModelBasedReference.Deletes()
        for id in inKeyOrder(Array(pendingStructs.keys)) {
            switch pendingStructs[id] {
            case .upsert(let upsert): upserts.append(upsert)
            case .delete(.project): deletes.projects.append(id)
            case .delete(.task): deletes.tasks.append(id)
            case .delete(.tag): deletes.tags.append(id)
            case nil: break
            }
        }
        return (upserts, deletes)
    }

    /// Inserts struct projects; now and then one takes a name another has, which makes the save fail.
    func insertStructProjects() throws {
        let view = structView()
        var projects = (0..<Int.random(in: 1...2, using: &random)).map { _ in
            MBProject(id: newID(), name: freshName("struct project"))
        }
        operation = "insert \(projects.count) struct projects"
        if let taken = pickID(view.projects).flatMap({ view.projects[$0] }), oneIn(6) {
            projects[projects.count - 1].name = taken.name
            operation += ", one with a taken name"
        }
        for project in projects {
            context.insert(project)
            pendingStructs[project.id] = .upsert(.project(project))
        }
    }

    /// Inserts struct tasks in projects and with tags the context shows; now and then one in a missing project, which
    /// makes the save fail.
    func insertStructTasks() throws {
        let view = structView()
        var tasks = (0..<Int.random(in: 1...3, using: &random)).map { _ in
            MBTask(
                id: newID(), title: freshName("struct task"), priority: Int.random(in: 0...4, using: &random),
                projectID: oneIn(4) ? nil : pickID(view.projects), tagIDs: pickSome(Array(view.tags.keys), 0...2))
        }
        operation = "insert \(tasks.count) struct tasks"
        if oneIn(8) {
            tasks[0].projectID = newID()
            operation += ", one in a missing project"
        }
        for task in tasks {
            context.insert(task)
            pendingStructs[task.id] = .upsert(.task(task))
        }
    }

    /// Adds a struct change that makes the next save fail: a project with a name another has, or a task in a missing
    /// project.
    func insertFailingStructChange() {
        let view = structView()
        if Bool.random(using: &random) {
            operation += " with a struct project of a taken name"
            var projects = [MBProject(id: newID(), name: freshName("struct project"))]
            if let taken = pickID(view.projects).flatMap({ view.projects[$0] }) {
                projects[0].name = taken.name
            } else {
                projects.append(MBProject(id: newID(), name: projects[0].name))
            }
            for project in projects {
                context.insert(project)
                pendingStructs[project.id] = .upsert(.project(project))
            }
        } else {
            operation += " with a struct task in a missing project"
            let task = MBTask(id: newID(), title: freshName("struct task"), priority: 0, projectID: newID())
            context.insert(task)
            pendingStructs[task.id] = .upsert(.task(task))
        }
    }

    /// Modifies a struct task through the context: its priority, and maybe its project and tags.
    func modifyStructTask() throws {
        let view = structView()
        guard let id = pickID(view.tasks), let before = view.tasks[id] else { return }
        operation = "modify a struct task"
        let read = try context.model(for: id, as: MBTask.self)
        if read != before { throw mismatch("the context reads struct task \(id) as \(String(describing: read))") }
        let priority = Int.random(in: 0...4, using: &random)
        let projectID = oneIn(3) ? pickID(view.projects) : before.projectID
        let tagIDs = oneIn(3) ? pickSome(Array(view.tags.keys), 0...2) : before.tagIDs
        let modified = try context.modify(MBTask.self, id: id) { task in
            task.priority = priority
            task.projectID = projectID
            task.tagIDs = tagIDs
        }
        pendingStructs[id] = .upsert(.task(modified))
    }

    /// Inserts a struct tag.
    func insertStructTag() throws {
        operation = "insert a struct tag"
        let tag = MBTag(id: newID(), label: freshName("struct tag"))
        context.insert(tag)
        pendingStructs[tag.id] = .upsert(.tag(tag))
    }

    /// Deletes a struct task, project (its tasks cascade at save) or tag (its tasks lose it at save).
    func deleteStructModel() throws {
        let view = structView()
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            guard let id = pickID(view.tasks) else { return }
            operation = "delete a struct task"
            context.delete(MBTask.self, id: id)
            pendingStructs[id] = .delete(.task)
        case 1:
            guard let id = pickID(view.projects) else { return }
            operation = "delete a struct project (cascade at save)"
            context.delete(MBProject.self, id: id)
            pendingStructs[id] = .delete(.project)
        default:
            guard let id = pickID(view.tags) else { return }
            operation = "delete a struct tag (nullify at save)"
            context.delete(MBTag.self, id: id)
            pendingStructs[id] = .delete(.tag)
        }
    }
}
