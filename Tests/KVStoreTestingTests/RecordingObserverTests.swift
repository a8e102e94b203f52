import Foundation
import KVStore
import KVStoreTesting
import TestSupport
import Testing

/// `RecordingObserver`: every commit and failure of a container, for assertions.
@Suite struct RecordingObserverTests {
    /// The kind of each event, without its details.
    private func kinds(_ events: [RecordingObserver.Event]) -> [String] {
        events.map { event in
            switch event {
            case .opened: "opened"
            case .committed: "committed"
            case .failed: "failed"
            case .closed: "closed"
            }
        }
    }

    @Test func itRecordsCommitsAndFailuresInOrder() throws {
        let recorder = RecordingObserver()
        let container = try ModelContainer.testing(Project.self, observer: recorder)
        let project = Project(name: "Launch")
        let context = ModelContext(container)
        context.insert(project)
        try context.save()
        context.insert(Project(name: "Launch"))
        #expect(throws: KVStoreError.uniqueViolation) { try context.save() }
        context.rollback()
        try container.close()

        #expect(kinds(recorder.events) == ["opened", "committed", "failed", "closed"])
        #expect(recorder.commits.map(\.changes) == [[.inserted(Project.self, project.id)]])
        #expect(recorder.changes == [.inserted(Project.self, project.id)])
        let failure = try #require(recorder.failures.first)
        #expect(recorder.failures.count == 1)
        #expect(failure.operation == "write")
        #expect(failure.entity == "Project")
        #expect(failure.storeError?.kind == KVStoreError.uniqueViolation.kind)
        #expect(recorder.events[2].description.hasPrefix("failed write: "))
    }

    @Test func recordingExample() throws {
        // Example: begin recording observer
        let recorder = RecordingObserver()
        let container = try ModelContainer.testing(Project.self, observer: recorder) { context in
            context.insert(Project(name: "Launch"))
        }
        recorder.removeAll()  // forgets the fixtures' commit

        let context = ModelContext(container)
        context.insert(Project(name: "Launch"))
        #expect(throws: KVStoreError.uniqueViolation) { try context.save() }

        #expect(recorder.commits.isEmpty)
        #expect(recorder.failures.map(\.entity) == ["Project"])
        // Example: end recording observer
        try container.close()
    }

    @Test func theDocumentationShowsTheExampleAsTested() throws {
        #expect(try documentationDifferences([("recording observer", 8)], testedIn: #filePath) == [])
    }

    @Test func removeAllForgetsTheFixtures() throws {
        let recorder = RecordingObserver()
        let container = try ModelContainer.testing(Project.self, observer: recorder) { context in
            context.insert(Project(name: "Fixture"))
        }
        defer { try? container.close() }
        recorder.removeAll()
        #expect(recorder.events.isEmpty)
        let project = Project(name: "Launch")
        let context = ModelContext(container)
        context.insert(project)
        try context.save()
        #expect(recorder.changes == [.inserted(Project.self, project.id)])
    }

    @Test func commitsOfConcurrentWritersAreAllRecordedInCommitOrder() async throws {
        let recorder = RecordingObserver()
        let container = try ModelContainer.testing(Project.self, observer: recorder)
        defer { try? container.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<10 {
                        try await container.write { txn in
                            try txn.insert(Project(name: "\(writer)-\(index)"))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let commits = recorder.commits
        #expect(commits.count == 40)
        #expect(zip(commits, commits.dropFirst()).allSatisfy { $0.transactionID < $1.transactionID })
        #expect(Set(recorder.changes.map(\.id)).count == 40)
    }
}
