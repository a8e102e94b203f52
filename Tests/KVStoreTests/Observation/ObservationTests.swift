import Foundation
import LMDB
import Testing

@testable import KVStore

/// Collects what a container observer hears.
private final class Recorder: ModelContainerObserver {
    let events = Locked<[String]>([])

    func containerDidOpen(_ container: ModelContainer) { events.withLock { $0.append("open") } }
    func containerDidClose(_ container: ModelContainer) { events.withLock { $0.append("close") } }
    func container(_ container: ModelContainer, didCommit changes: ChangeSet, duration: Duration) {
        events.withLock { $0.append("commit \(changes.inserted.values.map(\.count).reduce(0, +))") }
    }
    func container(_ container: ModelContainer, didFail error: any Error, operation: String, entity: String?) {
        events.withLock {
            $0.append("fail \(operation) \(entity ?? "-") \((error as? KVStoreError)?.kind.description ?? "")")
        }
    }
}

/// Result lists an observation delivered.
private final class Titles: Sendable {
    let value = Locked<[[String]]>([])
}

@Suite struct ObservationTests {
    private func inMemory(observer: (any ModelContainerObserver)? = nil) throws -> ModelContainer {
        try ModelContainer(
            for: Task.self, Project.self, configuration: .init(isStoredInMemoryOnly: true), observer: observer)
    }

    @Test func manyTasksWritingAtOnceAllLand() async throws {
        let container = try inMemory()
        defer { try? container.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<20 {
                group.addTask {
                    for index in 0..<25 {
                        try await container.write { txn in try txn.insert(Task(title: "\(writer)-\(index)")) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await container.read { txn in try txn.fetchCount(FetchDescriptor<Task>()) } == 500)
    }

    @Test func readersDuringWritesSeeConsistentSnapshots() async throws {
        let container = try inMemory()
        defer { try? container.close() }
        let writer = _Concurrency.Task {
            for pair in 0..<200 {
                try await container.write { txn in
                    try txn.insert(Task(title: "a\(pair)"))
                    try txn.insert(Task(title: "b\(pair)"))
                }
            }
        }
        var snapshots = 0
        while !writer.isCancelled, snapshots < 2_000 {
            let count = try await container.read { txn in try txn.fetchCount(FetchDescriptor<Task>()) }
            #expect(count % 2 == 0)
            snapshots += 1
            if count == 400 { break }
        }
        try await writer.value
        #expect(snapshots > 0)
    }

    @Test func subscribersSeeEveryCommitOnceInOrder() async throws {
        let container = try inMemory()
        defer { try? container.close() }
        var all = container.changes.makeAsyncIterator()
        var tasksOnly = container.changes(for: [Task.self]).makeAsyncIterator()
        var inserted: [UUID] = []
        for index in 0..<10 {
            let task = Task(title: "t\(index)")
            inserted.append(task.id)
            try await container.write { txn in try txn.insert(task) }
        }
        let project = Project(name: "p")
        try await container.write { txn in try txn.insert(project) }
        var seen: [ChangeSet] = []
        for _ in 0..<11 {
            if let change = await next(&all) { seen.append(change) }
        }
        #expect(seen.count == 11)
        #expect(seen.map(\.transactionID) == seen.map(\.transactionID).sorted())
        #expect(Set(seen.map(\.transactionID)).count == 11)
        #expect(seen.prefix(10).map { $0.inserted["Task"]?.first } == inserted)
        #expect(seen.last?.inserted["Project"] == [project.id])
        var filtered: [ChangeSet] = []
        for _ in 0..<10 {
            if let change = await next(&tasksOnly) { filtered.append(change) }
        }
        #expect(filtered.count == 10)
        #expect(filtered.allSatisfy { $0.touches("Task") && !$0.entities.contains("Project") })
    }

    @Test func changeSetsTellInsertsUpdatesDeletesAndCascades() async throws {
        let container = try ModelContainer(
            for: ProjectC.self, TaskC.self, SubtaskC.self, TagC.self, configuration: .init(isStoredInMemoryOnly: true))
        defer { try? container.close() }
        var changes = container.changes.makeAsyncIterator()
        let project = ProjectC(name: "p")
        let task = TaskC(title: "t", projectID: project.id)
        try await container.write { txn in
            try txn.insert(project)
            try txn.insert(task)
        }
        var renamed = project
        renamed.name = "renamed"
        try await container.write { [renamed] txn in try txn.insert(renamed) }
        _ = try await container.write { txn in try txn.delete(ProjectC.self, id: project.id) }
        let insert = await next(&changes)
        #expect(insert?.inserted == ["ProjectC": [project.id], "TaskC": [task.id]])
        let update = await next(&changes)
        #expect(update?.updated == ["ProjectC": [project.id]])
        #expect(update?.inserted.isEmpty == true)
        let delete = await next(&changes)
        #expect(delete?.deleted == ["ProjectC": [project.id], "TaskC": [task.id]])
    }

    @Test func aSlowSubscriberNeverBlocksWritersAndLearnsWhatItMissed() async throws {
        let container = try inMemory()
        defer { try? container.close() }
        var slow = container.changes(for: nil, bufferSize: 2).makeAsyncIterator()
        for index in 0..<10 { try await container.write { txn in try txn.insert(Task(title: "\(index)")) } }
        let first = await next(&slow)
        let second = await next(&slow)
        // The buffer held the two oldest; the eight after them were dropped, and the next one says so.
        try await container.write { txn in try txn.insert(Task(title: "late")) }
        let third = await next(&slow)
        #expect(first?.missed == 0)
        #expect(second?.missed == 0)
        #expect(third?.missed == 8)
        #expect(third.map { $0.transactionID > (second?.transactionID ?? 0) + 8 } == true)
    }

    @Test func cancellingASubscriptionFreesIt() async throws {
        let container = try inMemory()
        defer { try? container.close() }
        let listener = _Concurrency.Task {
            for await _ in container.changes {}
        }
        // The task subscribes when it first runs, which a loaded machine may delay past any fixed wait.
        for _ in 0..<500 where !container.publisher.hasSubscribers {
            try await _Concurrency.Task.sleep(for: .milliseconds(10))
        }
        #expect(container.publisher.hasSubscribers)
        listener.cancel()
        await listener.value
        for _ in 0..<100 where container.publisher.hasSubscribers {
            try await _Concurrency.Task.sleep(for: .milliseconds(10))
        }
        #expect(!container.publisher.hasSubscribers)
    }

    @Test func queryObservationYieldsAtOnceThenOnlyWhenResultsChange() async throws {
        let container = try inMemory()
        defer { try? container.close() }
        try await container.write { txn in try txn.insert(Task(title: "urgent", priority: 9)) }
        let descriptor = FetchDescriptor<Task>(
            predicate: #Predicate { $0.priority > 5 }, sortBy: [SortDescriptor(\.title)])
        let results = container.observe(descriptor)
        let titles = Titles()
        let observer = _Concurrency.Task {
            for try await tasks in results {
                titles.value.withLock { $0.append(tasks.map(\.title)) }
            }
        }
        func waitFor(_ count: Int) async throws {
            for _ in 0..<500 where titles.value.withLock({ $0.count }) < count {
                try await _Concurrency.Task.sleep(for: .milliseconds(10))
            }
        }
        try await waitFor(1)
        try await container.write { txn in try txn.insert(Task(title: "calm", priority: 1)) }  // does not match
        try await container.write { txn in try txn.insert(Project(name: "other entity")) }
        try await container.write { txn in try txn.insert(Task(title: "critical", priority: 10)) }
        try await waitFor(2)
        try await _Concurrency.Task.sleep(for: .milliseconds(100))
        observer.cancel()
        _ = await observer.result
        #expect(titles.value.withLock { $0 } == [["urgent"], ["critical", "urgent"]])
    }

    @Test func theObserverHearsOpenCommitsErrorsAndClose() throws {
        let recorder = Recorder()
        let container = try inMemory(observer: recorder)
        let context = ModelContext(container)
        context.insert(Project(name: "a"))
        context.insert(Task(title: "t"))
        try context.save()
        context.insert(Project(name: "a"))
        #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
        try container.close()
        #expect(recorder.events.withLock { $0 } == ["open", "commit 2", "fail write Project uniqueViolation", "close"])
    }

    @Test func aModelActorWorksInTheBackground() async throws {
        let container = try inMemory()
        defer { try? container.close() }
        let actors = (0..<3).map { _ in ModelActor(modelContainer: container) }
        let saved = try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, actor) in actors.enumerated() {
                group.addTask {
                    try await actor.perform { context in
                        try context.insert(contentsOf: (0..<300).map { Task(title: "\(index)-\($0)") }, chunkSize: 100)
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(saved == 900)
        let count = try await actors[0].perform { context in try context.fetchCount(FetchDescriptor<Task>()) }
        #expect(count == 900)
    }

    @Test func commitsOfAnotherProcessReachObservers() async throws {
        let directory = StoreDirectory()
        let path = directory.path
        let container = try ModelContainer(
            for: Task.self, Project.self, configuration: .init(path: path, durability: .off))
        defer { try? container.close() }
        try await container.write { txn in try txn.insert(Task(title: "parent")) }
        var changes = container.changes.makeAsyncIterator()
        await #expect(processExitsWith: .success) { [path = path as String] in
            do {
                let child = try ModelContainer(
                    for: Task.self, Project.self, configuration: .init(path: path, durability: .off))
                try child.write { txn in try txn.insert(Task(title: "child")) }
                try child.close()
            } catch {
                exit(1)
            }
        }
        let change = await next(&changes, within: 10)
        #expect(change?.isExternal == true)
        #expect(change?.touches("Task") == true)
        let titles = try await container.read { txn in
            try txn.fetch(FetchDescriptor<Task>(sortBy: [SortDescriptor(\.title)]))
        }
        #expect(titles.map(\.title) == ["child", "parent"])
    }
}
