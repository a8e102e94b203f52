import Foundation
import KVStore
import Testing

/// A tag of the notes domain, for many-to-many relationships.
struct Tag: Model, Equatable {
    var id = UUID.timeOrdered()
    var name: String
}

/// A note with many tags, stored as a `[UUID]` field with a multi-entry index.
struct Note: Model, Equatable {
    var id = UUID.timeOrdered()
    var text: String
    var tagIDs: [UUID] = []

    static let entity = Entity<Note>(indexes: [.index(\.tagIDs)])
}

/// `get`, with and without following relationships.
@Suite struct GetTests {
    @Test func printsRecordsAsPrettyJSON() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let result = kvtool("get", store.path, "Project", Sample.inbox.id.uuidString, Sample.garden.id.uuidString)
        #expect(
            result
                == RunResult(
                    status: 0,
                    output: """
                        {
                          "id": "01900000-0000-7000-8000-000000000101",
                          "name": "Inbox",
                          "createdAt": "2026-05-09T06:13:20Z"
                        }
                        {
                          "id": "01900000-0000-7000-8000-000000000102",
                          "name": "Garden",
                          "createdAt": "2026-05-09T06:13:20Z"
                        }

                        """, errors: ""))
    }

    @Test func reportsMissingRecords() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        let missing = fixedID(9)
        let result = kvtool("get", store.path, "Project", missing.uuidString, Sample.inbox.id.uuidString.lowercased())
        #expect(result.status == 1)
        #expect(result.output.contains(#""name": "Inbox""#))
        #expect(result.errors == "Error: Project has no record with ID \(missing)\n")
    }

    @Test func followsToOneAndDerivedToMany() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        let task = kvtool("get", store.path, "Task", Sample.tasks[0].id.uuidString, "--follow", "project")
        #expect(task.status == 0)
        #expect(
            task.output.hasSuffix(
                """
                  "projectID": "01900000-0000-7000-8000-000000000101",
                  "$related": {
                    "project": {
                      "id": "01900000-0000-7000-8000-000000000101",
                      "name": "Inbox",
                      "createdAt": "2026-05-09T06:13:20Z"
                    }
                  }
                }

                """))
        let loose = kvtool("get", store.path, "Task", Sample.tasks[3].id.uuidString, "--follow=project")
        #expect(loose.output.hasSuffix("  \"$related\": {\n    \"project\": null\n  }\n}\n"))
        let project = kvtool("get", store.path, "Project", Sample.garden.id.uuidString, "--follow", "tasks")
        #expect(project.status == 0)
        let titles = project.output.split(separator: "\n").filter { $0.contains("\"title\"") }
        #expect(titles == [#"        "title": "Plant tulips","#, #"        "title": "Water the roses","#])
    }

    @Test func followsManyToManyBothWays() throws {
        let store = TemporaryStore()
        let red = Tag(id: fixedID(1, entity: 3), name: "red")
        let blue = Tag(id: fixedID(2, entity: 3), name: "blue")
        let note = Note(id: fixedID(1, entity: 4), text: "Paint", tagIDs: [blue.id, red.id, fixedID(7, entity: 3)])
        let container = try ModelContainer(
            for: Tag.self, Note.self, configuration: ModelConfiguration(path: store.path))
        let context = ModelContext(container)
        for model in [red, blue] { context.insert(model) }
        context.insert(note)
        try context.save()
        try container.close()
        try Sample.editCatalog(at: store.path) { entities in
            entities["Note"]?.relationships = [
                try Sample.relationship(
                    #"{"name":"tags","target":"Tag","inverse":"notes","cardinality":"toMany","field":"tagIDs","#
                        + #""deleteRule":"nullify","allowsDangling":true}"#)
            ]
            entities["Tag"]?.relationships = [
                try Sample.relationship(
                    #"{"name":"notes","target":"Note","inverse":"tags","cardinality":"toMany","#
                        + #""deleteRule":"nullify","allowsDangling":false}"#)
            ]
        }
        let forward = kvtool("get", store.path, "Note", note.id.uuidString, "--follow", "tags")
        #expect(forward.status == 0)
        let names = forward.output.split(separator: "\n").filter { $0.contains("\"name\"") }
        #expect(names == [#"        "name": "blue""#, #"        "name": "red""#])
        #expect(forward.output.contains("      null\n    ]"))
        #expect(
            forward.errors
                == "warning: Note \(note.id): tags references Tag \(fixedID(7, entity: 3)), which does not exist\n")
        let backward = kvtool("get", store.path, "Tag", red.id.uuidString, "--follow", "notes")
        #expect(backward.output.contains(#""text": "Paint""#))
        #expect(
            kvtool("count", store.path, "Note", "--where", "tagIDs=\(red.id)", "--json").output.contains(#""count":1"#))
        let check = kvtool("check", store.path)
        #expect(check.status == 0)
        #expect(check.output.hasPrefix("warning: Note \(note.id): tags (field tagIDs) references Tag"))
    }

    @Test func unknownRelationshipIsAnError() throws {
        let store = TemporaryStore()
        try Sample.makeStore(at: store.path)
        try Sample.addRelationships(at: store.path)
        #expect(
            kvtool("get", store.path, "Task", Sample.tasks[0].id.uuidString, "--follow", "owner")
                == RunResult(
                    status: 1, output: "",
                    errors: "Error: Unknown relationship 'owner': Task has the relationships project\n"))
    }
}
