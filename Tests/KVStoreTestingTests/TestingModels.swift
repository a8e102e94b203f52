import Foundation
import KVStore
import TestSupport
import Testing

// The models of the KVStoreTesting article: a project cascades to its tasks; deleting a tag removes it from them.

// Example: begin testing models
struct Project: Model {
    var id = UUID.timeOrdered()
    var name: String

    static let entity = Entity<Project>(
        indexes: [.unique(\.name)],
        relationships: [.toMany("tasks", of: Task.self, inverse: \.projectID, deleteRule: .cascade)])
}

struct Task: Model {
    var id = UUID.timeOrdered()
    var title: String
    var projectID: UUID?
    var tagIDs: [UUID] = []

    static let entity = Entity<Task>(relationships: [
        .toOne("project", \.projectID, to: Project.self, inverse: "tasks"),
        .toMany("tags", \.tagIDs, to: Tag.self, inverse: "tasks"),
    ])
}

struct Tag: Model {
    var id = UUID.timeOrdered()
    var label: String

    static let entity = Entity<Tag>(relationships: [
        .toMany("tasks", of: Task.self, inverse: \.tagIDs, deleteRule: .nullify)
    ])
}
// Example: end testing models

/// The article shows the models as declared here.
@Suite struct TestingModelsDocumentationTests {
    @Test func theDocumentationShowsTheModelsAsDeclared() throws {
        #expect(try documentationDifferences([("testing models", 0)], testedIn: #filePath) == [])
    }
}
