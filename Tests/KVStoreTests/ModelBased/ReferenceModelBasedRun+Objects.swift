import Foundation
import KVStore

/// The operations of the mixed model-based test on reference models: inserts of objects and graphs, changes of
/// attributes and of both sides of each relationship, deletes with their rules, and deleted objects inserted back.
extension ReferenceModelBasedRun {
    /// Inserts a project, with new tasks made in memory (through a task's initializer or the project's list) and
    /// maybe tagged: inserting the project or one of its tasks inserts the whole graph.
    func insertProject() throws {
        let project = RefProject(name: freshName("project"))
        project.id = newID()
        var tasks: [RefTask] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            let throughInit = Bool.random(using: &random)
            let task = RefTask(
                title: freshName("task"), project: throughInit ? project : nil,
                priority: Int.random(in: 0...4, using: &random))
            task.id = newID()
            task.isDone = oneIn(3)
            if !throughInit { project.tasks.append(task) }
            let tagIDs = pickSome(Array(current.tags.keys), 0...2)
            if !tagIDs.isEmpty { task.tags = try tagIDs.map { try object(RefTag.self, $0) } }
            tasks.append(task)
            current.tasks[task.id] = State.Task(
                title: task.title, priority: task.priority, isDone: task.isDone, projectID: project.id, tagIDs: tagIDs)
            held[task.id] = task
        }
        if let task = tasks.randomElement(using: &random), Bool.random(using: &random) {
            operation = "insert a project with \(tasks.count) new tasks by inserting one of the tasks"
            context.insert(task)
        } else {
            operation = "insert a project with \(tasks.count) new tasks"
            context.insert(project)
        }
        current.projects[project.id] = State.Project(name: project.name)
        held[project.id] = project
    }

    /// Inserts a task in a project or none, with tags, its relationships set before or after the insert, or inserted by
    /// appending it to a project's or a tag's list.
    func insertTask() throws {
        let task = RefTask(title: freshName("task"), priority: Int.random(in: 0...4, using: &random))
        task.id = newID()
        task.isDone = oneIn(3)
        let projectID = oneIn(4) ? nil : pickID(current.projects)
        let tagIDs = pickSome(Array(current.tags.keys), 0...2)
        let project = try projectID.map { try object(RefProject.self, $0) }
        let tags = try tagIDs.map { try object(RefTag.self, $0) }
        let way = Int.random(in: 0..<4, using: &random)
        if way == 2, let project {
            operation = "insert a task by appending it to a project's tasks"
            project.tasks.append(task)
            task.tags = tags
        } else if way == 3, let first = tags.first {
            operation = "insert a task by appending it to a tag's tasks"
            first.tasks.append(task)
            task.project = project
            for tag in tags.dropFirst() { task.tags.append(tag) }
        } else if way == 1 {
            operation = "insert a task, then set its relationships"
            context.insert(task)
            task.project = project
            task.tags = tags
        } else {
            operation = "insert a task with its relationships set before the insert"
            task.project = project
            task.tags = tags
            context.insert(task)
        }
        current.tasks[task.id] = State.Task(
            title: task.title, priority: task.priority, isDone: task.isDone, projectID: projectID, tagIDs: tagIDs)
        held[task.id] = task
    }

    /// Inserts a tag, maybe on some tasks: through the tasks' lists after the insert, or through the new tag's list
    /// before it, which inserts the tag.
    func insertTag() throws {
        let tag = RefTag(name: freshName("tag"))
        tag.id = newID()
        let taskIDs = oneIn(2) ? pickSome(Array(current.tasks.keys), 1...2) : []
        if taskIDs.isEmpty || Bool.random(using: &random) {
            operation = "insert a tag, then add it to \(taskIDs.count) tasks"
            context.insert(tag)
            for id in taskIDs { try object(RefTask.self, id).tags.append(tag) }
        } else {
            operation = "insert a tag by appending \(taskIDs.count) tasks to its list"
            for id in taskIDs { tag.tasks.append(try object(RefTask.self, id)) }
        }
        current.tags[tag.id] = State.Tag(name: tag.name)
        for id in taskIDs { current.tasks[id]?.tagIDs.append(tag.id) }
        held[tag.id] = tag
    }

    /// Changes an attribute of a task, a project or a tag; now and then changes it back at once.
    func changeAttributes() throws {
        let changeBack = oneIn(5)
        let suffix = changeBack ? " and back" : ""
        switch Int.random(in: 0..<6, using: &random) {
        case 0..<4:
            guard let id = pickID(current.tasks), let value = current.tasks[id] else { return }
            let task = try object(RefTask.self, id)
            var changed = value
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                operation = "retitle a task" + suffix
                task.title = freshName("task")
                changed.title = task.title
            case 3:
                // In place, past the length a string holds in its own bytes: the copy the context keeps of the title
                // shares its buffer, so the append copies it; changing it back assigns an equal title from elsewhere.
                operation = "lengthen a task's title in place" + suffix
                task.title.append(" and a longer tail")
                changed.title = task.title
            case 1:
                operation = "change a task's priority" + suffix
                task.priority = Int.random(in: 0...4, using: &random)
                changed.priority = task.priority
            default:
                operation = "toggle a task's isDone" + suffix
                task.isDone.toggle()
                changed.isDone = task.isDone
            }
            if changeBack {
                (task.title, task.priority, task.isDone) = (value.title, value.priority, value.isDone)
            } else {
                current.tasks[id] = changed
            }
        case 4:
            guard let id = pickID(current.projects), let value = current.projects[id] else { return }
            operation = "rename a project" + suffix
            let project = try object(RefProject.self, id)
            project.name = freshName("project")
            if changeBack { project.name = value.name } else { current.projects[id]?.name = project.name }
        default:
            guard let id = pickID(current.tags), let value = current.tags[id] else { return }
            operation = "rename a tag" + suffix
            let tag = try object(RefTag.self, id)
            tag.name = freshName("tag")
            if changeBack { tag.name = value.name } else { current.tags[id]?.name = tag.name }
        }
    }

    /// Moves a task to another project or to none: through its to-one, by appending it to a project's list, by removing
    /// it from its project's list, or by assigning a project's whole list.
    func moveTask() throws {
        guard let id = pickID(current.tasks), let value = current.tasks[id] else { return }
        let task = try object(RefTask.self, id)
        let way = Int.random(in: 0..<4, using: &random)
        if way == 1, let targetID = pickID(current.projects) {
            operation =
                value.projectID == targetID ? "append a task to its own project's tasks" : "move a task by append"
            try object(RefProject.self, targetID).tasks.append(task)
            current.tasks[id]?.projectID = targetID
        } else if way == 2, let projectID = value.projectID {
            operation = "remove a task from its project's tasks"
            guard let project = task.project, project === held[projectID] else {
                throw mismatch("the task's project is not the context's object for \(projectID)")
            }
            project.tasks.removeAll { $0 === task }
            current.tasks[id]?.projectID = nil
        } else if way == 3, let targetID = pickID(current.projects) {
            let project = try object(RefProject.self, targetID)
            let list = project.tasks
            let kept = list.filter { _ in !oneIn(3) }
            let added = try pickSome(current.tasks.keys.filter { current.tasks[$0]?.projectID != targetID }, 0...2)
                .map { try object(RefTask.self, $0) }
            operation = "assign a project's tasks: \(list.count - kept.count) removed, \(added.count) added"
            project.tasks = kept + added
            for removed in list where !kept.contains(where: { $0 === removed }) {
                current.tasks[removed.id]?.projectID = nil
            }
            for task in added { current.tasks[task.id]?.projectID = targetID }
        } else {
            let targetID = oneIn(4) ? nil : pickID(current.projects)
            operation = targetID == nil ? "set a task's project to nil" : "set a task's project"
            task.project = try targetID.map { try object(RefProject.self, $0) }
            current.tasks[id]?.projectID = targetID
        }
    }

    /// Adds or removes a tag on either side of the many-to-many, or assigns a task's whole list of tags.
    func changeTags() throws {
        guard let id = pickID(current.tasks), let tagIDs = current.tasks[id]?.tagIDs else { return }
        let task = try object(RefTask.self, id)
        let untagged = current.tags.keys.filter { !tagIDs.contains($0) }
        let way = Int.random(in: 0..<5, using: &random)
        if way < 2, let tagID = pickSome(untagged, 1...1).first {
            let tag = try object(RefTag.self, tagID)
            if way == 0 {
                operation = "append a tag to a task's tags"
                task.tags.append(tag)
            } else {
                operation = "append a task to a tag's tasks"
                tag.tasks.append(task)
            }
            current.tasks[id]?.tagIDs.append(tagID)
        } else if way < 4, let tagID = pickSome(tagIDs, 1...1).first {
            let tag = try object(RefTag.self, tagID)
            if way == 2 {
                operation = "remove a tag from a task's tags"
                task.tags.removeAll { $0 === tag }
            } else {
                operation = "remove a task from a tag's tasks"
                tag.tasks.removeAll { $0 === task }
            }
            current.tasks[id]?.tagIDs.removeAll { $0 == tagID }
        } else {
            let list = pickSome(Array(current.tags.keys), 0...3)
            operation = "assign a task's tags: \(list.count) tags"
            task.tags = try list.map { try object(RefTag.self, $0) }
            current.tasks[id]?.tagIDs = list
        }
    }

    /// Deletes a task.
    func deleteTask() throws {
        guard let id = pickID(current.tasks) else { return }
        operation = "delete a task"
        let task = try object(RefTask.self, id)
        noteDeleted(task)
        context.delete(task)
        current.tasks[id] = nil
    }

    /// Deletes a project, whose cascade deletes its tasks in the context at once.
    func deleteProject() throws {
        guard let id = pickID(current.projects), let value = current.projects[id] else { return }
        let children = current.tasks(in: id)
        operation = "delete a project with \(children.count) tasks (cascade)"
        for child in children { noteDeleted(try object(RefTask.self, child)) }
        let project = try object(RefProject.self, id)
        if saved.projects[id] != nil { deletedHere[id] = .project(project, value) }
        context.delete(project)
        current.deleteProject(id)
    }

    /// Deletes a tag, whose nullify takes it out of its tasks' tags in the context at once.
    func deleteTag() throws {
        guard let id = pickID(current.tags), let value = current.tags[id] else { return }
        operation = "delete a tag on \(current.tasks(taggedWith: id).count) tasks (nullify)"
        let tag = try object(RefTag.self, id)
        if saved.tags[id] != nil { deletedHere[id] = .tag(tag, value) }
        context.delete(tag)
        current.deleteTag(id)
    }

    /// Keeps a stored task about to be deleted, with its values, to insert it back.
    private func noteDeleted(_ task: RefTask) {
        guard saved.tasks[task.id] != nil, let value = current.tasks[task.id] else { return }
        deletedHere[task.id] = .task(task, value)
    }

    /// Inserts back an object deleted since the last save: it returns with the values it had, and what its delete rule
    /// did stays done (a project's tasks stay deleted, a tag's tasks stay untagged).
    ///
    /// Only stored objects are brought back (an inserted object that is deleted leaves the context, and inserting it
    /// again inserts whatever its lists still hold), and a task only when what it references is there.
    func insertDeletedObjectBack() throws {
        let candidates = deletedHere.filter { _, deleted in
            guard case .task(_, let value) = deleted else { return true }
            return value.projectID.map { current.projects[$0] != nil } ?? true
                && value.tagIDs.allSatisfy { current.tags[$0] != nil }
        }
        guard let id = pickID(candidates), let deleted = deletedHere.removeValue(forKey: id) else { return }
        switch deleted {
        case .project(let project, let value):
            operation = "insert a deleted project back"
            context.insert(project)
            current.projects[id] = value
        case .task(let task, let value):
            operation = "insert a deleted task back"
            context.insert(task)
            current.tasks[id] = value
        case .tag(let tag, let value):
            operation = "insert a deleted tag back"
            context.insert(tag)
            current.tags[id] = value
        }
    }
}
