import Foundation
import KVStore
import TestSupport
import Testing

// The examples of the article "Reference models".

/// The article's models: SwiftData's Projects & Tasks with only their declarations changed.
enum ReferenceArticle {
    // Example: begin reference models
    // SwiftData:
    // @Model final class Project {
    //     var name: String
    //     @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task] = []
    //     init(name: String) { self.name = name }
    // }
    // @Model final class Task {
    //     var title: String
    //     var isDone = false
    //     var project: Project?
    //     init(title: String, project: Project? = nil) { ... }
    // }

    final class Project: PersistentModel {
        var id = UUID.timeOrdered()
        var name: String
        @ToMany var tasks: [Task]

        init(name: String) {
            self.name = name
        }

        static let entity = Entity<Project>(relationships: [
            .toMany("tasks", \.tasks, inverse: "project", deleteRule: .cascade)
        ])
    }

    final class Task: PersistentModel {
        var id = UUID.timeOrdered()
        var title: String
        var isDone = false
        @ToOne var project: Project?

        init(title: String, project: Project? = nil) {
            self.title = title
            self.project = project
        }

        static let entity = Entity<Task>(
            indexes: [.index(\.isDone)], relationships: [.toOne("project", \.project, inverse: "tasks")])
    }
    // Example: end reference models
}

@Suite struct ReferenceModelsArticleTests {
    @Test func workingWithReferenceModels() throws {
        typealias Project = ReferenceArticle.Project
        typealias Task = ReferenceArticle.Task
        // Example: begin reference models use
        let container = try ModelContainer(
            for: Project.self, configuration: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)

        let launch = Project(name: "Launch")
        launch.tasks.append(Task(title: "Write the README"))
        launch.tasks.append(Task(title: "Tag the release"))
        context.insert(launch)  // and the tasks it holds
        try context.save()

        let open = FetchDescriptor<Task>(predicate: #Predicate { !$0.isDone }, sortBy: [SortDescriptor(\.title)])
        let readme = try context.fetch(open)[1]
        readme.isDone = true  // tracked: no insert needed
        #expect(try context.fetch(open).map(\.title) == ["Tag the release"])  // unsaved changes count
        try context.save()

        let later = Project(name: "Later")
        try context.fetch(open)[0].project = later  // moves the task; `later` is inserted with it
        #expect(launch.tasks.map(\.title) == ["Write the README"])
        #expect(later.tasks.map(\.title) == ["Tag the release"])
        try context.save()

        let launchID = launch.id
        let ofLaunch = FetchDescriptor<Task>(predicate: #Predicate { $0.project?.id == launchID })
        #expect(try context.explain(ofLaunch) == "index project: 1 key")

        context.delete(launch)  // cascades to its tasks, at once in the context
        #expect(try context.fetchCount(FetchDescriptor<Task>()) == 1)
        try context.save()
        // Example: end reference models use
        try container.close()
    }

    @Test func theArticleShowsTheExamplesAsTested() throws {
        #expect(
            try documentationDifferences(
                [("reference models", 4), ("reference models use", 8)], testedIn: #filePath) == [])
    }
}
