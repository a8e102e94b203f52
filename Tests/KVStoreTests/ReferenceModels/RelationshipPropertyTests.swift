import Foundation
import Testing

@testable import KVStore

/// A person who sends and receives ``Letter``s: two lists of the same type, each the inverse of its own to-one.
final class Correspondent: PersistentModel {
    var id = UUID.timeOrdered()
    var name: String
    @ToMany var sent: [Letter]
    @ToMany var received: [Letter]

    init(name: String) {
        self.name = name
    }

    static let entity = Entity<Correspondent>(
        name: "Correspondent",
        relationships: [
            .toMany("sent", \.sent, inverse: "sender"), .toMany("received", \.received, inverse: "recipient"),
        ])
}

/// A letter with two to-one relationships to the same type.
final class Letter: PersistentModel {
    var id = UUID.timeOrdered()
    var subject: String
    @ToOne var sender: Correspondent?
    @ToOne var recipient: Correspondent?

    init(subject: String) {
        self.subject = subject
    }

    static let entity = Entity<Letter>(
        name: "Letter",
        relationships: [
            .toOne("sender", \.sender, inverse: "sent"), .toOne("recipient", \.recipient, inverse: "received"),
        ])
}

/// Relationship properties of reference models: read through the context, both sides in step before and after a
/// save, graphs inserted whole, and delete rules applied to the objects the context holds.
@Suite struct RelationshipPropertyTests {
    /// Saves two projects, Launch with three tasks and Other with none, and two tags on the first task.
    private func seed(_ container: ModelContainer) throws {
        let context = ModelContext(container)
        let launch = RefProject(name: "Launch")
        context.insert(launch)
        context.insert(RefProject(name: "Other"))
        let tasks = (0..<3).map { RefTask(title: "task \($0)", project: launch, priority: $0) }
        tasks[0].tags = [RefTag(name: "red"), RefTag(name: "blue")]
        for task in tasks { context.insert(task) }
        try context.save()
    }

    private func project(_ name: String, in context: ModelContext) throws -> RefProject {
        try #require(try context.fetch(FetchDescriptor<RefProject>(predicate: #Predicate { $0.name == name })).first)
    }

    private func tasks(_ context: ModelContext) throws -> [RefTask] {
        try context.fetch(FetchDescriptor<RefTask>(sortBy: [SortDescriptor(\.priority)]))
    }

    @Test func aToOneReadsItsObjectAndAToManyItsList() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let tasks = try tasks(context)
            let launch = try project("Launch", in: context)
            #expect(tasks.allSatisfy { $0.project === launch })
            #expect(tasks[0].$project.id == launch.id)
            #expect(launch.tasks.map(\.title) == ["task 0", "task 1", "task 2"])
            #expect(zip(launch.tasks, tasks).allSatisfy { $0 === $1 })
            #expect(try project("Other", in: context).tasks.isEmpty)
            #expect(context.relationshipError == nil)
        }
    }

    /// A fetched object's relationship properties hold their record's ID and the context's link until they are used,
    /// without a state each: the ID is read, indexed, saved and rolled back from there, and the first read or set
    /// makes the state that reads through the context.
    @Test func aFetchedObjectsRelationshipsMakeNoStateUntilUsed() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let tasks = try tasks(context)
            let launchID = try #require(tasks[0].$project.id)
            let projectOffset = try #require(
                RefTask.entity.relationships.first { $0.name == "project" }?.property?.offset)
            let tasksOffset = try #require(RefProject.entity.relationships.first?.property?.offset)
            #expect(tasks.allSatisfy { ObjectContents.existingRelatedObjects(in: $0, at: projectOffset) == nil })
            #expect(tasks.allSatisfy { $0.$project.id == launchID })
            // A change to another attribute writes the task with its project ID: the index still finds it.
            tasks[1].title = "renamed"
            try context.save()
            let byProject = try ModelContext(container).fetch(
                FetchDescriptor<RefTask>(predicate: #Predicate { $0.project?.id == launchID }))
            #expect(byProject.map(\.title).sorted() == ["renamed", "task 0", "task 2"])
            #expect(ObjectContents.existingRelatedObjects(in: tasks[1], at: projectOffset) == nil)
            // A fetched project lists its tasks through the context it holds a link to, with no state before.
            let launch = try #require(try context.model(for: launchID, as: RefProject.self))
            #expect(ObjectContents.existingRelatedObjects(in: launch, at: tasksOffset) == nil)
            #expect(launch.tasks.count == 3 && launch.tasks.allSatisfy { task in tasks.contains { $0 === task } })
            // The first read makes the state, from the stored ID and the link: the context's object.
            #expect(tasks[2].project === launch)
            #expect(ObjectContents.existingRelatedObjects(in: tasks[2], at: projectOffset) != nil)
            // A set on an unread property moves the task; a rollback gives back the stored ID.
            let other = try project("Other", in: context)
            tasks[0].project = other
            #expect(tasks[0].$project.id == other.id)
            #expect(launch.tasks.count == 2 && other.tasks.count == 1)
            context.rollback()
            #expect(tasks[0].$project.id == launchID)
            #expect(tasks[0].project === launch)
            #expect(!context.hasChanges)
            // Outside its context (gone), an unread property still gives its ID and no object.
            let orphan = try #require(try ModelContext(container).fetch(FetchDescriptor<RefTask>()).first)
            #expect(orphan.$project.id == launchID)
            #expect(orphan.project == nil)
        }
    }

    /// Delete rules reach objects whose relationship properties were never read (no state yet): a cascade deletes a
    /// project's fetched tasks, and a nullify clears the to-ones of fetched letters, before and after the save.
    @Test func deleteRulesReachRelationshipsNeverRead() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let tasks = try tasks(context)
            let launch = try project("Launch", in: context)
            context.delete(launch)
            #expect(try context.fetch(FetchDescriptor<RefTask>()).isEmpty)
            try context.save()
            #expect(try ModelContext(container).fetch(FetchDescriptor<RefTask>()).isEmpty)
            withExtendedLifetime(tasks) {}
        }
        try withContainer(Correspondent.self, Letter.self) { container in
            let seeding = ModelContext(container)
            let (ada, bob) = (Correspondent(name: "Ada"), Correspondent(name: "Bob"))
            let letter = Letter(subject: "hello")
            letter.sender = ada
            letter.recipient = bob
            seeding.insert(letter)
            try seeding.save()
            let context = ModelContext(container)
            let fetched = try #require(try context.fetch(FetchDescriptor<Letter>()).first)
            let sender = try #require(try context.model(for: ada.id, as: Correspondent.self))
            context.delete(sender)
            #expect(fetched.$sender.id == nil)
            #expect(fetched.$recipient.id == bob.id)
            try context.save()
            #expect(fetched.sender == nil)
            #expect(fetched.recipient?.name == "Bob")
            let stored = try #require(try ModelContext(container).fetch(FetchDescriptor<Letter>()).first)
            #expect(stored.$sender.id == nil)
            #expect(stored.$recipient.id == bob.id)
        }
    }

    /// The offsets that code reading a relationship property in place uses are where Swift lays the fields out.
    @Test func aRelationshipStoragesFieldsLieWhereTheInPlaceReadsLookForThem() {
        #expect(MemoryLayout<RelationshipStorage>.offset(of: \.related) == RelationshipStorage.relatedOffset)
        #expect(MemoryLayout<RelationshipStorage>.offset(of: \.link) == RelationshipStorage.linkOffset)
        #expect(MemoryLayout<RelationshipStorage>.offset(of: \.storedID) == RelationshipStorage.storedIDOffset)
        #expect(MemoryLayout<ToOne<RefProject>>.size == MemoryLayout<RelationshipStorage>.size)
        #expect(MemoryLayout<ToMany<RefTask>>.size == MemoryLayout<RelationshipStorage>.size)
        #expect(MemoryLayout<ManyToMany<RefTag>>.size == MemoryLayout<RelationshipStorage>.size)
    }

    /// The all-zero UUID, which a storage without a state uses for "no ID", is still a to-one's ID like any other when
    /// a record stores it: read, followed, indexed and saved.
    @Test func aToOneToTheAllZeroIDIsAnIDLikeAnyOther() throws {
        try withContainer(RefProject.self) { container in
            let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            let seeding = ModelContext(container)
            let project = RefProject(name: "Zero")
            project.id = zero
            seeding.insert(project)
            seeding.insert(RefTask(title: "points at zero", project: project))
            seeding.insert(RefTask(title: "points nowhere"))
            try seeding.save()
            let context = ModelContext(container)
            let tasks = try tasks(context)
            let pointing = try #require(tasks.first { $0.title == "points at zero" })
            let nowhere = try #require(tasks.first { $0.title == "points nowhere" })
            #expect(pointing.$project.id == zero)
            #expect(nowhere.$project.id == nil)
            pointing.title = "renamed"
            nowhere.title = "renamed too"
            try context.save()
            let fresh = ModelContext(container)
            let found = try fresh.fetch(FetchDescriptor<RefTask>(predicate: #Predicate { $0.project?.id == zero }))
            #expect(found.map(\.title) == ["renamed"])
            #expect(found.first?.project?.name == "Zero")
            let none = try fresh.fetch(FetchDescriptor<RefTask>(predicate: #Predicate { $0.project == nil }))
            #expect(none.map(\.title) == ["renamed too"])
        }
    }

    @Test func movingATaskMovesItBetweenTheListsBeforeAndAfterTheSave() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let (launch, other) = (try project("Launch", in: context), try project("Other", in: context))
            let moved = try tasks(context)[1]
            #expect(launch.tasks.count == 3)
            moved.project = other
            #expect(launch.tasks.map(\.title) == ["task 0", "task 2"])
            #expect(other.tasks.map(\.title) == ["task 1"])
            #expect(context.hasChanges)
            try context.save()
            #expect(launch.tasks.map(\.title) == ["task 0", "task 2"])
            #expect(other.tasks.first === moved)
            let fresh = ModelContext(container)
            #expect(try project("Other", in: fresh).tasks.map(\.title) == ["task 1"])
            #expect(try tasks(fresh)[1].project?.name == "Other")
        }
    }

    @Test func appendingAndRemovingOnAToManySetsEachInverse() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let launch = try project("Launch", in: context)
            let added = RefTask(title: "added", priority: 10)
            launch.tasks.append(added)
            #expect(added.project === launch)
            let removed = try tasks(context)[0]
            launch.tasks.removeAll { $0 === removed }
            #expect(removed.project == nil)
            #expect(launch.tasks.map(\.title) == ["task 1", "task 2", "added"])
            try context.save()
            let fresh = ModelContext(container)
            let titles = try project("Launch", in: fresh).tasks.map(\.title)
            #expect(titles == ["task 1", "task 2", "added"])
            #expect(try tasks(fresh).first { $0.title == "task 0" }?.project == nil)
            withExtendedLifetime(fresh) {}
        }
    }

    @Test func bothSidesOfAManyToManyStayInStep() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let tasks = try tasks(context)
            let red = try #require(tasks[0].tags.first { $0.name == "red" })
            #expect(red.tasks.first === tasks[0])
            tasks[1].tags.append(red)
            #expect(red.tasks.map(\.title) == ["task 0", "task 1"])
            // A tag outside the context still sets the inverse, and the task brings it in.
            let green = RefTag(name: "green")
            green.tasks.append(tasks[2])
            #expect(tasks[2].tags.first === green)
            #expect(green.tasks.map(\.title) == ["task 2"])
            red.tasks.removeAll { $0 === tasks[0] }
            #expect(tasks[0].tags.map(\.name) == ["blue"])
            try context.save()
            let freshContext = ModelContext(container)
            let fresh = try self.tasks(freshContext)
            #expect(fresh.map { $0.tags.map(\.name).sorted() } == [["blue"], ["red"], ["green"]])
            withExtendedLifetime(freshContext) {}
        }
    }

    @Test func insertingAnObjectInsertsTheNewObjectsItRefersTo() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            let project = RefProject(name: "Graph")
            let first = RefTask(title: "first", project: project, priority: 1)
            let second = RefTask(title: "second", priority: 2)
            // Set before anything is in a context: the inverse is set in memory.
            project.tasks.append(second)
            #expect(second.project === project)
            first.tags = [RefTag(name: "new")]
            context.insert(first)
            try context.save()
            let fresh = ModelContext(container)
            let stored = try self.project("Graph", in: fresh)
            #expect(stored.tasks.map(\.title) == ["first", "second"])
            #expect(stored.tasks[0].tags.map(\.name) == ["new"])
            #expect(try fresh.fetchCount(FetchDescriptor<RefTag>()) == 1)
        }
    }

    @Test func aLargeGraphBuiltBeforeItsInsertKeepsEachChildOnceAndSavesWhole() throws {
        try withContainer(RefProject.self) { container in
            let project = RefProject(name: "Large")
            let tasks = (0..<5_000).map { RefTask(title: "task \($0)", project: project, priority: $0) }
            // Setting a task's project again, to the same project, does not list it twice.
            tasks[7].project = project
            #expect(project.tasks.count == tasks.count)
            #expect(zip(project.tasks, tasks).allSatisfy { $0 === $1 })
            let context = ModelContext(container)
            context.insert(project)
            try context.save()
            // The context stays while its objects read their relationships.
            let fresh = ModelContext(container)
            let stored = try self.project("Large", in: fresh)
            #expect(stored.tasks.count == tasks.count)
            #expect(Set(stored.tasks.map(\.id)) == Set(tasks.map(\.id)))
        }
    }

    /// Outside a context, each to-one keeps its own inverse list in step, also where two to-ones of one class relate
    /// to the same type: setting, moving and clearing them, before the graph's insert and after it is read back.
    @Test func twoToOnesOfOneTypeEachKeepTheirOwnInverseBeforeTheInsert() throws {
        try withContainer(Correspondent.self, Letter.self) { container in
            let (ada, bob, eve) = (Correspondent(name: "Ada"), Correspondent(name: "Bob"), Correspondent(name: "Eve"))
            let letters = (0..<3).map { Letter(subject: "letter \($0)") }
            for letter in letters {
                letter.sender = ada
                letter.recipient = bob
            }
            #expect(ada.sent.map(\.subject) == ["letter 0", "letter 1", "letter 2"])
            #expect(ada.received.isEmpty && bob.sent.isEmpty)
            #expect(bob.received.count == 3)
            letters[1].recipient = eve
            letters[2].sender = nil
            #expect(bob.received.map(\.subject) == ["letter 0", "letter 2"])
            #expect(eve.received.map(\.subject) == ["letter 1"])
            #expect(ada.sent.map(\.subject) == ["letter 0", "letter 1"])
            #expect(eve.sent.isEmpty)
            let context = ModelContext(container)
            for letter in letters { context.insert(letter) }
            context.insert(eve)
            try context.save()
            let fresh = ModelContext(container)
            let stored = try fresh.fetch(FetchDescriptor<Correspondent>(sortBy: [SortDescriptor(\.name)]))
            #expect(stored.map(\.name) == ["Ada", "Bob", "Eve"])
            #expect(stored.map { $0.sent.count } == [2, 0, 0])
            #expect(stored.map { $0.received.count } == [0, 2, 1])
        }
    }

    @Test func aCascadeTakesTheHeldChildrenOutOfTheContextAtOnce() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let tasks = try tasks(context)
            let launch = try project("Launch", in: context)
            context.delete(launch)
            #expect(try self.tasks(context).isEmpty)
            #expect(try context.fetchCount(FetchDescriptor<RefTask>()) == 0)
            #expect(tasks[0].tags.count == 2)
            try context.save()
            let fresh = ModelContext(container)
            #expect(try self.tasks(fresh).isEmpty)
            #expect(try fresh.fetchCount(FetchDescriptor<RefTag>()) == 2)
        }
    }

    @Test func aNullifyClearsTheReferencesOfHeldObjectsAtOnce() throws {
        try withContainer(RefProject.self) { container in
            try seed(container)
            let context = ModelContext(container)
            let task = try tasks(context)[0]
            let red = try #require(task.tags.first { $0.name == "red" })
            context.delete(red)
            #expect(task.tags.map(\.name) == ["blue"])
            try context.save()
            let fresh = ModelContext(container)
            #expect(try tasks(fresh)[0].tags.map(\.name) == ["blue"])
            withExtendedLifetime(fresh) {}
        }
    }

    @Test func aNullifiedToOneReadsNilAndTheStoreAgrees() throws {
        try withContainer(RefProject.self) { container in
            let context = ModelContext(container)
            let project = RefProject(name: "Kept")
            let task = RefTask(title: "orphan", project: project)
            context.insert(task)
            try context.save()
            // Tags nullify their tasks; a project cascades: here the task is moved off first, then the project goes.
            task.project = nil
            context.delete(project)
            try context.save()
            #expect(try tasks(ModelContext(container)).map(\.title) == ["orphan"])
        }
    }

    @Test func prefetchedRelationshipsReadWithoutTheStore() throws {
        let container = try ModelContainer(
            for: RefProject.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        try seed(container)
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<RefTask>(sortBy: [SortDescriptor(\.priority)])
        descriptor.relationshipsToPrefetch = ["project", "tags"]
        let tasks = try context.fetch(descriptor)
        var projects = FetchDescriptor<RefProject>()
        projects.relationshipsToPrefetch = ["tasks"]
        let launch = try #require(try context.fetch(projects).first { $0.name == "Launch" })
        try container.close()
        #expect(tasks.allSatisfy { $0.project === launch })
        #expect(tasks[0].tags.map(\.name).sorted() == ["blue", "red"])
        #expect(launch.tasks.count == 3)
        #expect(context.relationshipError == nil)
    }

    @Test func aReadThatFailsReadsNothingAndKeepsTheError() throws {
        let container = try ModelContainer(
            for: RefProject.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        try seed(container)
        let context = ModelContext(container)
        let tasks = try tasks(context)
        try container.close()
        #expect(tasks[0].project == nil)
        #expect((context.relationshipError as? KVStoreError) == .closed)
    }

    @Test func aRelationshipPropertyTheEntityDoesNotDeclareIsRefused() throws {
        let error = #expect(throws: KVStoreError.invalidModel) {
            try withContainer(UndeclaredLink.self) { _ in }
        }
        #expect(error?.message.contains("The relationship property target of UndeclaredLink is not declared") == true)
        let misnamed = #expect(throws: KVStoreError.invalidModel) {
            try withContainer(MisnamedLink.self) { _ in }
        }
        #expect(misnamed?.message.contains("has no such property") == true)
    }
}

final class UndeclaredLink: PersistentModel {
    var id = UUID.timeOrdered()
    @ToOne var target: RefProject?
    static let entity = Entity<UndeclaredLink>()
}

final class MisnamedLink: PersistentModel {
    var id = UUID.timeOrdered()
    @ToOne var target: RefProject?
    static let entity = Entity<MisnamedLink>(relationships: [.toOne("targte", \.target)])
}
