import Foundation
import KVStore
import KVStoreTesting
import TestSupport
import Testing

/// The text of the comments of an issue.
private func message(of issue: Issue) -> String {
    issue.comments.map(\.rawValue).joined(separator: "\n")
}

/// `expectChanges`: a unit of work's changes, compared in order, and the issue it records when they differ.
@Suite struct ExpectChangesTests {
    @Test func deletingAProjectDeletesItsTasks() throws {
        // Example: begin expect changes
        let project = Project(name: "Launch")
        let task = Task(title: "Ship", projectID: project.id)
        let container = try ModelContainer.testing(Project.self, Task.self) { context in
            context.insert(project)
            context.insert(task)
        }

        try expectChanges(
            in: container,
            [
                .deleted(Project.self, project.id),
                .cascaded(Task.self, task.id, from: Project.self, project.id),
            ]
        ) { context in
            context.delete(project)
        }
        // Example: end expect changes
    }

    @Test func theDocumentationShowsTheExampleAsTested() throws {
        #expect(try documentationDifferences([("expect changes", 8)], testedIn: #filePath) == [])
    }

    @Test func insertsUpdatesAndNullifiesPass() throws {
        let tag = Tag(label: "urgent")
        let task = Task(title: "Plan", tagIDs: [tag.id])
        let container = try ModelContainer.testing(Project.self) { context in
            context.insert(tag)
            context.insert(task)
        }
        defer { try? container.close() }
        let project = Project(name: "Launch")
        let returned = try expectChanges(
            in: container, [.inserted(Project.self, project.id), .updated(Task.self, task.id)]
        ) { context in
            context.insert(project)
            try context.modify(Task.self, id: task.id) { $0.projectID = project.id }
            try context.save()  // saving in the body is fine: the later save has nothing left to write
            return 42
        }
        #expect(returned == 42)
        try expectChanges(
            in: container, [.deleted(Tag.self, tag.id), .nullified(Task.self, task.id, by: Tag.self, tag.id)]
        ) { context in
            context.delete(tag)
        }
        try expectChanges(in: container, []) { context in
            _ = try context.fetch(FetchDescriptor<Task>())
        }
    }

    @Test func aWrongChangeIsCaughtWithBothSidesShown() throws {
        let task = Task(title: "Plan")
        let container = try ModelContainer.testing(Task.self) { $0.insert(task) }
        defer { try? container.close() }
        let line = #line + 3
        try withKnownIssue {
            // The task exists already: saving it again updates it.
            try expectChanges(in: container, [.inserted(Task.self, task.id)]) { context in
                _ = try context.modify(Task.self, id: task.id) { $0.title = "Plan it" }
            }
        } matching: { issue in
            message(of: issue) == """
                The changes differ from those expected (1 expected, 1 made; -: expected only, +: made only):
                - inserted Task \(task.id)
                + updated Task \(task.id)
                """
                && issue.sourceLocation?.line == line
                && issue.sourceLocation?.fileID == #fileID
        }
        // What the body did is saved: the expectation only looks at it.
        #expect(try ModelContext(container).model(for: task.id, as: Task.self)?.title == "Plan it")
    }

    @Test func aChangeTheExpectationLeavesOutIsCaught() throws {
        let project = Project(name: "Launch")
        let tasks = [Task(title: "Plan", projectID: project.id), Task(title: "Ship", projectID: project.id)]
        let container = try ModelContainer.testing(Project.self) { context in
            context.insert(project)
            for task in tasks { context.insert(task) }
        }
        defer { try? container.close() }
        try withKnownIssue {
            // Forgets that the project's cascade deletes its second task too.
            try expectChanges(
                in: container,
                [
                    .deleted(Project.self, project.id),
                    .cascaded(Task.self, tasks[0].id, from: Project.self, project.id),
                ]
            ) { context in
                context.delete(project)
            }
        } matching: { issue in
            message(of: issue) == """
                The changes differ from those expected (2 expected, 3 made; -: expected only, +: made only):
                  deleted Project \(project.id)
                  deleted Task \(tasks[0].id) (cascade from Project \(project.id))
                + deleted Task \(tasks[1].id) (cascade from Project \(project.id))
                """
        }
    }

    @Test func aPlainDeleteDoesNotMatchACascadeNorTheWrongOrder() throws {
        let project = Project(name: "Launch")
        let task = Task(title: "Ship", projectID: project.id)
        let container = try ModelContainer.testing(Project.self) { context in
            context.insert(project)
            context.insert(task)
        }
        defer { try? container.close() }
        try withKnownIssue {
            try expectChanges(
                in: container, [.deleted(Task.self, task.id), .deleted(Project.self, project.id)]
            ) { context in
                context.delete(project)
            }
        } matching: { issue in
            let text = message(of: issue)
            return text.contains("- deleted Task \(task.id)\n")
                && text.contains("+ deleted Task \(task.id) (cascade from Project \(project.id))")
                && text.contains("  deleted Project \(project.id)")
        }
    }

    @Test func aUnitOfWorkThatChangesNothingIsCaught() throws {
        let container = try ModelContainer.testing(Project.self)
        defer { try? container.close() }
        let project = Project(name: "Launch")
        try withKnownIssue {
            try expectChanges(in: container, [.inserted(Project.self, project.id)]) { context in
                context.insert(project)
                context.rollback()
            }
        } matching: { issue in
            message(of: issue) == """
                The changes differ from those expected (1 expected, 0 made; -: expected only, +: made only):
                - inserted Project \(project.id)
                (it changed nothing)
                """
        }
    }

    @Test func anErrorOfTheWorkIsThrownAndNothingIsCompared() throws {
        let container = try ModelContainer.testing(Project.self) { $0.insert(Project(name: "Launch")) }
        defer { try? container.close() }
        #expect(throws: KVStoreError.uniqueViolation) {
            try expectChanges(in: container, []) { context in
                context.insert(Project(name: "Launch"))
            }
        }
        // The refused save left nothing behind, and the next expectation sees only its own commit.
        let next = Project(name: "Next")
        try expectChanges(in: container, [.inserted(Project.self, next.id)]) { $0.insert(next) }
    }

    @MainActor @Test func aMainActorTestExpectsWorkThatSuspends() async throws {
        let container = try ModelContainer.testing(Project.self)
        defer { try? container.close() }
        let project = Project(name: "Launch")
        var seen: [String] = []  // main-actor state the body changes
        try await expectChanges(in: container, [.inserted(Project.self, project.id)]) { context in
            try await container.write { txn in try txn.insert(project) }
            seen.append(project.name)
            _ = try context.fetch(FetchDescriptor<Project>())
        }
        #expect(seen == ["Launch"])
    }

    @Test func workThatSuspendsIsExpectedToo() async throws {
        let container = try ModelContainer.testing(Project.self)
        defer { try? container.close() }
        let project = Project(name: "Launch")
        let task = Task(title: "Ship", projectID: project.id)
        // In the order the transaction wrote them, which is not the context's entity-by-entity order.
        try await expectChanges(
            in: container, [.inserted(Task.self, task.id), .inserted(Project.self, project.id)]
        ) { _ in
            try await container.write { txn in
                try txn.insert(task)
                try txn.insert(project)
            }
        }
        try await withKnownIssue {
            try await expectChanges(in: container, [.deleted(Project.self, project.id)]) { _ in
                try await container.write { txn in _ = try txn.delete(Task.self, id: task.id) }
            }
        } matching: { issue in
            message(of: issue).contains("+ deleted Task \(task.id)")
        }
    }
}
