import Foundation
import Testing

@testable import KVStore

@Suite struct RelationshipTests {
    private func count<M: Model>(_ type: M.Type, _ context: ModelContext) throws -> Int {
        try ModelContext(context.container).fetchCount(FetchDescriptor<M>())
    }

    @Test func cascadeDeletesThroughThreeLevels() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let keep = ProjectC(name: "keep")
            let doomed = ProjectC(name: "doomed")
            context.insert(keep)
            context.insert(doomed)
            for project in [keep, doomed] {
                for t in 0..<3 {
                    let task = TaskC(title: "\(project.name)-\(t)", projectID: project.id)
                    context.insert(task)
                    for s in 0..<2 { context.insert(SubtaskC(title: "\(task.title)-\(s)", taskID: task.id)) }
                }
            }
            try context.save()
            context.delete(doomed)
            try context.save()
            #expect(try count(ProjectC.self, context) == 1)
            #expect(try count(TaskC.self, context) == 3)
            #expect(try count(SubtaskC.self, context) == 6)
            let left = try context.fetch(FetchDescriptor<SubtaskC>()).map(\.title)
            #expect(left.allSatisfy { $0.hasPrefix("keep-") })
        }
    }

    @Test func deletingManyParentsInOneSave() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let projects = (0..<20).map { ProjectC(name: "p\($0)") }
            for project in projects {
                context.insert(project)
                for t in 0..<5 { context.insert(TaskC(title: "t\(t)", projectID: project.id)) }
            }
            try context.save()
            for project in projects.dropLast(2) { context.delete(project) }
            try context.save()
            #expect(try count(ProjectC.self, context) == 2)
            #expect(try count(TaskC.self, context) == 10)
        }
    }

    @Test func nullifyClearsTheReferenceAndItsIndexEntry() throws {
        try withContainer(ParentN.self, ChildN.self) { container throws in
            let context = ModelContext(container)
            let parent = ParentN()
            let children = (0..<3).map { _ in ChildN(parentID: parent.id) }
            context.insert(parent)
            for child in children { context.insert(child) }
            try context.save()
            context.delete(parent)
            try context.save()
            let left = try context.fetch(FetchDescriptor<ChildN>())
            #expect(left.count == 3)
            #expect(left.allSatisfy { $0.parentID == nil })
            let parentID = parent.id
            #expect(
                try context.fetch(FetchDescriptor<ChildN>(predicate: #Predicate { $0.parentID == parentID })).isEmpty)
            #expect(try context.fetch(FetchDescriptor<ChildN>(predicate: #Predicate { $0.parentID == nil })).count == 3)
        }
    }

    @Test func manyToManyNullifyRemovesTheIDFromArrays() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let urgent = TagC(label: "urgent")
            let later = TagC(label: "later")
            let task = TaskC(title: "both", tagIDs: [urgent.id, later.id])
            for model in [urgent, later] { context.insert(model) }
            context.insert(task)
            try context.save()
            #expect(try context.children(of: [urgent.id], through: \TaskC.tagIDs)[urgent.id]?.map(\.id) == [task.id])
            context.delete(urgent)
            try context.save()
            #expect(try context.model(for: task.id, as: TaskC.self)?.tagIDs == [later.id])
            #expect(try context.children(of: [urgent.id], through: \TaskC.tagIDs).isEmpty)
        }
    }

    @Test func denyRefusesTheWholeSaveAndNamesTheRelationship() throws {
        try withContainer(ParentD.self, ChildD.self) { container throws in
            let context = ModelContext(container)
            let parent = ParentD()
            let lonely = ParentD()
            context.insert(parent)
            context.insert(lonely)
            for _ in 0..<2 { context.insert(ChildD(parentID: parent.id)) }
            try context.save()
            context.delete(lonely)
            context.delete(parent)
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .deleteDenied)
            #expect(error.entity == "ParentD")
            #expect(error.field == "children")
            #expect(error.description.contains("2 related ChildD models"))
            #expect(try count(ParentD.self, context) == 2)  // not even the lonely one went
            context.rollback()
            context.delete(lonely)
            try context.save()
            #expect(try count(ParentD.self, context) == 1)
        }
    }

    @Test func denyAllowsTheDeleteWhenTheChildrenGoToo() throws {
        try withContainer(ParentD.self, ChildD.self) { container throws in
            let context = ModelContext(container)
            let parent = ParentD()
            let child = ChildD(parentID: parent.id)
            context.insert(parent)
            context.insert(child)
            try context.save()
            context.delete(child)
            context.delete(parent)
            try context.save()
            #expect(try count(ParentD.self, context) == 0)
        }
    }

    @Test func noActionLeavesDanglingReferences() throws {
        try withContainer(ParentX.self, ChildX.self) { container throws in
            let context = ModelContext(container)
            let parent = ParentX()
            let child = ChildX(parentID: parent.id)
            context.insert(parent)
            context.insert(child)
            try context.save()
            context.delete(parent)
            try context.save()
            #expect(try context.model(for: child.id, as: ChildX.self) == child)
        }
    }

    @Test func aDenyDeepInsideACascadeRefusesTheWholeSave() throws {
        try withContainer(ProjectM.self, TaskM.self, SubtaskM.self) { container throws in
            let context = ModelContext(container)
            let blocked = ProjectM()
            let free = ProjectM()
            let blockedTask = TaskM(projectID: blocked.id)
            context.insert(blocked)
            context.insert(free)
            context.insert(blockedTask)
            context.insert(TaskM(projectID: free.id))
            context.insert(SubtaskM(taskID: blockedTask.id))
            try context.save()
            context.delete(blocked)
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .deleteDenied)
            #expect(error.entity == "TaskM")
            #expect(try count(ProjectM.self, context) == 2)
            #expect(try count(TaskM.self, context) == 2)
            context.rollback()
            context.delete(free)  // its task has no subtasks: the cascade goes through
            try context.save()
            #expect(try count(ProjectM.self, context) == 1)
            #expect(try count(TaskM.self, context) == 1)
        }
    }

    @Test func selfRelationshipsNullifyBacklinks() throws {
        try withContainer(Note.self, Bookmark.self) { container throws in
            let context = ModelContext(container)
            let target = Note(text: "target")
            let a = Note(text: "a", links: [target.id])
            let b = Note(text: "b", links: [target.id, a.id])
            for note in [target, a, b] { context.insert(note) }
            try context.save()
            let backlinks = try context.children(of: [target.id, a.id], through: \Note.links)
            #expect(backlinks[target.id]?.map(\.text).sorted() == ["a", "b"])
            #expect(backlinks[a.id]?.map(\.text) == ["b"])
            context.delete(target)
            try context.save()
            #expect(try context.model(for: a.id, as: Note.self)?.links == [])
            #expect(try context.model(for: b.id, as: Note.self)?.links == [a.id])
        }
    }

    @Test func cascadesStopAtCycles() throws {
        try withContainer(Node.self) { container throws in
            let context = ModelContext(container)
            var first = Node()
            let second = Node(next: first.id)
            let third = Node(next: second.id)
            first.next = third.id
            let other = Node()
            for node in [first, second, third, other] { context.insert(node) }
            try context.save()
            context.delete(second)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Node>()).map(\.id) == [other.id])
        }
    }

    @Test func aReferenceToAMissingModelIsRefused() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let ghost = UUID()
            let task = TaskC(title: "lost", projectID: ghost)
            context.insert(task)
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .missingReference)
            #expect(error.field == "projectID")
            #expect(error.id == task.id)
            #expect(error.description.contains(ghost.uuidString))
            #expect(try count(TaskC.self, context) == 0)
            // Inserting the parent after the child in the same save is fine.
            let project = ProjectC(name: "late")
            context.insert(TaskC(title: "early", projectID: project.id))
            context.insert(project)
            context.delete(task)
            try context.save()
            #expect(try count(TaskC.self, context) == 1)
        }
    }

    @Test func amongManyReferencesTheFirstMissingOneWrittenIsReported() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let projects = (0..<3).map { ProjectC(name: "p\($0)") }
            let tags = (0..<3).map { TagC(label: "t\($0)") }
            for project in projects { context.insert(project) }
            for tag in tags { context.insert(tag) }
            try context.save()
            // Many references to a few models, to two entities, with two missing ones in the middle.
            let (ghostTag, ghostProject) = (UUID.timeOrdered(), UUID.timeOrdered())
            var tasks = (0..<40).map {
                TaskC(title: "t\($0)", projectID: projects[$0 % 3].id, tagIDs: [tags[$0 % 3].id])
            }
            tasks.insert(TaskC(title: "tagged", projectID: projects[0].id, tagIDs: [tags[1].id, ghostTag]), at: 17)
            tasks.insert(TaskC(title: "lost", projectID: ghostProject), at: 30)
            for task in tasks { context.insert(task) }
            let error = try #require(throws: KVStoreError.self) { try context.save() }
            #expect(error == .missingReference)
            #expect(error.id == tasks[17].id)
            #expect(error.field == "tagIDs")
            #expect(error.description.contains(ghostTag.uuidString))
            #expect(try count(TaskC.self, context) == 0)
            // Without them, the references resolve.
            context.rollback()
            for task in tasks where task.title != "tagged" && task.title != "lost" { context.insert(task) }
            try context.save()
            #expect(try count(TaskC.self, context) == 40)
        }
    }

    @Test func aDanglingReferenceIsAllowedWhenDeclared() throws {
        try withContainer(Note.self, Bookmark.self) { container throws in
            let context = ModelContext(container)
            context.insert(Bookmark(targetID: UUID()))
            try context.save()
            #expect(try count(Bookmark.self, context) == 1)
        }
    }

    @Test func mismatchedDeclarationsAreRefusedNamingBothSides() throws {
        let derived = try #require(throws: KVStoreError.self) {
            try ModelContainer(for: Orphanage.self, Orphan.self, configuration: .init(isStoredInMemoryOnly: true))
        }
        #expect(derived == .invalidRelationship)
        #expect(derived.description.contains("Orphanage.orphans"))
        #expect(derived.description.contains("Orphan.homeID"))
        let inverse = try #require(throws: KVStoreError.self) {
            try ModelContainer(
                for: ProjectC.self, TaskC.self, SubtaskC.self, TagC.self, Mismatched.self,
                configuration: .init(isStoredInMemoryOnly: true))
        }
        #expect(inverse == .invalidRelationship)
        #expect(inverse.description.contains("Mismatched.project"))
        #expect(inverse.description.contains("ProjectC.nothing"))
    }

    @Test func aContainerHoldsTheTypesItsModelsRelationshipsReach() throws {
        let types = ModelContainer.withRelatedTypes([TaskC.self]).map { String(describing: $0) }
        #expect(types.first == "TaskC")
        #expect(Set(types) == ["TaskC", "ProjectC", "SubtaskC", "TagC"])
        #expect(types.count == 4)
        let container = try ModelContainer(for: TaskC.self, configuration: .init(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        let context = ModelContext(container)
        let project = ProjectC(name: "Launch")
        context.insert(project)
        context.insert(TaskC(title: "Write", projectID: project.id))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<ProjectC>()) == 1)
        context.delete(project)
        try context.save()
        // The project's delete rule reached its tasks through the discovered entity.
        #expect(try context.fetchCount(FetchDescriptor<TaskC>()) == 0)
    }

    @Test func theCatalogDescribesRelationships() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let entry = try container.environment.read { txn in
                try Catalog.read(
                    EntityCatalog.self, key: Catalog.entityKey("TaskC"), in: txn, table: container.catalogTable)
            }
            let relationships = try #require(entry?.relationships)
            #expect(relationships.map(\.name) == ["project", "tags", "subtasks"])
            #expect(relationships[0].field == "projectID")
            #expect(relationships[0].cardinality == "toOne")
            #expect(relationships[2].field == nil)
            #expect(relationships[2].deleteRule == "cascade")
            #expect(entry?.indexes.map(\.name).sorted() == ["projectID", "tagIDs"])
        }
    }
}
