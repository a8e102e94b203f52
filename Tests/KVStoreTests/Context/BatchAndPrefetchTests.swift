import Foundation
import Testing

@testable import KVStore

@Suite struct BatchAndPrefetchTests {
    @Test func childrenAreGroupedByParentAndParentsResolvedInOneBatch() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let projects = (0..<5).map { ProjectC(name: "p\($0)") }
            var tasks: [TaskC] = []
            for (index, project) in projects.enumerated() {
                context.insert(project)
                for t in 0..<index { tasks.append(TaskC(title: "p\(index)-t\(t)", projectID: project.id)) }
            }
            for task in tasks { context.insert(task) }
            try context.save()
            let grouped = try context.children(of: projects.map(\.id), through: \TaskC.projectID)
            #expect(grouped[projects[0].id] == nil)
            for (index, project) in projects.enumerated().dropFirst() {
                #expect(grouped[project.id]?.map(\.title) == (0..<index).map { "p\(index)-t\($0)" })
            }
            let parents = try context.related(tasks, through: \TaskC.projectID, as: ProjectC.self)
            #expect(parents.count == 4)
            #expect(parents[projects[3].id]?.name == "p3")
        }
    }

    @Test func manyToManyResolvesBothWays() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let tags = (0..<3).map { TagC(label: "tag\($0)") }
            let tasks = [TaskC(title: "a", tagIDs: [tags[0].id, tags[1].id]), TaskC(title: "b", tagIDs: [tags[1].id])]
            for model in tags { context.insert(model) }
            for model in tasks { context.insert(model) }
            try context.save()
            let byTag = try context.children(of: tags.map(\.id), through: \TaskC.tagIDs)
            #expect(byTag[tags[0].id]?.map(\.title) == ["a"])
            #expect(byTag[tags[1].id]?.map(\.title) == ["a", "b"])
            #expect(byTag[tags[2].id] == nil)
            let related = try context.related(tasks, through: \TaskC.tagIDs, as: TagC.self)
            #expect(Set(related.keys) == Set([tags[0].id, tags[1].id]))
        }
    }

    @Test func aFetchPrefetchesRelationshipsIntoTheContext() throws {
        let container = try ModelContainer(
            for: ProjectC.self, TaskC.self, SubtaskC.self, TagC.self, configuration: .init(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let project = ProjectC(name: "p")
        let tag = TagC(label: "t")
        let tasks = (0..<3).map { TaskC(title: "t\($0)", projectID: project.id, tagIDs: [tag.id]) }
        context.insert(project)
        context.insert(tag)
        for task in tasks { context.insert(task) }
        try context.save()

        var descriptor = FetchDescriptor<ProjectC>()
        descriptor.relationshipsToPrefetch = ["tasks"]
        let projects = try context.fetch(descriptor)
        var taskDescriptor = FetchDescriptor<TaskC>()
        taskDescriptor.relationshipsToPrefetch = ["project", "tags"]
        _ = try context.fetch(taskDescriptor)
        // Closing the store proves the reads below are served from what was prefetched.
        try container.close()
        #expect(try context.children(of: projects.map(\.id), through: \TaskC.projectID)[project.id]?.count == 3)
        #expect(try context.model(for: project.id, as: ProjectC.self) == project)
        #expect(try context.models(for: [tag.id], as: TagC.self) == [tag])
        #expect(throws: KVStoreError.closed) { try context.model(for: UUID(), as: ProjectC.self) }

        var unknown = FetchDescriptor<ProjectC>()
        unknown.relationshipsToPrefetch = ["nope"]
        #expect(throws: KVStoreError.self) { try ModelContext(container).fetch(unknown) }
    }

    @Test func chunkedInsertOfALazySequenceReportsProgress() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            var reported: [Int] = []
            let saved = try context.insert(
                contentsOf: (0..<25_000).lazy.map { Task(title: "t\($0)", priority: $0 % 7) }, chunkSize: 10_000
            ) { reported.append($0) }
            #expect(saved == 25_000)
            #expect(reported == [10_000, 20_000, 25_000])
            #expect(try context.fetchCount(FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 3 })) == 3571)
        }
    }

    @Test func aFailingChunkKeepsEarlierChunksAndSaysHowManyWereCommitted() throws {
        try withContainer(Project.self) { container throws in
            let context = ModelContext(container)
            let names = (0..<25).map { "p\($0)" } + ["p3"] + (25..<30).map { "p\($0)" }
            let error = try #require(throws: KVStoreError.self) {
                try context.insert(contentsOf: names.map { Project(name: $0) }, chunkSize: 10)
            }
            #expect(error == .uniqueViolation)
            #expect(error.committedCount == 20)
            #expect(error.description.contains("20 models were committed"))
            #expect(try context.fetchCount(FetchDescriptor<Project>()) == 20)
        }
    }

    @Test func batchDeleteByIDsAndByPredicateApplyDeleteRules() throws {
        try withContainer(ProjectC.self, TaskC.self, SubtaskC.self, TagC.self) { container throws in
            let context = ModelContext(container)
            let projects = (0..<30).map { ProjectC(name: "p\($0)") }
            try context.insert(contentsOf: projects)
            try context.insert(contentsOf: projects.map { TaskC(title: $0.name, projectID: $0.id) })
            var progress: [Int] = []
            let deleted = try context.delete(ProjectC.self, ids: projects.prefix(10).map(\.id) + [UUID()], chunkSize: 4)
            {
                progress.append($0)
            }
            #expect(deleted == 10)
            #expect(progress == [4, 8, 10])
            #expect(try context.fetchCount(FetchDescriptor<TaskC>()) == 20)
            let byPredicate = try context.delete(
                ProjectC.self, where: #Predicate { $0.name.starts(with: "p2") }, chunkSize: 3)
            #expect(byPredicate == 10)
            #expect(try context.fetchCount(FetchDescriptor<ProjectC>()) == 10)
            #expect(try context.fetchCount(FetchDescriptor<TaskC>()) == 10)
            #expect(try context.delete(ProjectC.self, where: nil) == 10)
            #expect(try context.fetchCount(FetchDescriptor<TaskC>()) == 0)
        }
    }

    @Test func batchUpdateChangesEveryMatchingModel() throws {
        try withContainer(Task.self) { container throws in
            let context = ModelContext(container)
            try context.insert(contentsOf: (0..<2_500).map { Task(title: "t\($0)", priority: $0 % 2) })
            var progress: [Int] = []
            let updated = try context.update(
                FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 1 }), chunkSize: 500,
                progress: { progress.append($0) }
            ) { task in
                task.isDone = true
                task.priority = 9
            }
            #expect(updated == 1_250)
            #expect(progress.last == 1_250)
            #expect(try context.fetchCount(FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 9 })) == 1_250)
            #expect(try context.fetchCount(FetchDescriptor<Task>(predicate: #Predicate { $0.isDone })) == 1_250)
            #expect(try context.fetchCount(FetchDescriptor<Task>(predicate: #Predicate { $0.priority == 1 })) == 0)
        }
    }

    @Test func aChunkSizeMustBePositive() throws {
        try withContainer(Task.self) { container throws in
            #expect(throws: KVStoreError.invalidModel) {
                try ModelContext(container).insert(contentsOf: [Task(title: "x")], chunkSize: 0)
            }
        }
    }
}
