import Foundation
import KVStore
import Testing

private enum ChoresV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Chore.self]

    struct Step: Codable, Sendable {
        var done: Bool
    }

    struct Chore: Model {
        var id = UUID.timeOrdered()
        var done: Bool
        var step: Step

        static let entity = Entity<Chore>(indexes: [.index(\.done)])
    }
}

private enum ChoresV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Chore.self]

    struct Chore: Model {
        var id: UUID
        var isDone: Bool
        var step: ChoresV1.Step

        static let entity = Entity<Chore>(indexes: [.index(\.isDone)], renamedFields: ["isDone": "done"])
    }
}

private enum ChoresPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ChoresV1.self, ChoresV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ChoresV1.self, toVersion: ChoresV2.self)]
}

/// kvtool on a store whose top-level `done` a migration renamed `isDone`, while a nested `done` kept its name.
@Suite struct RenamedFieldTests {
    private func makeStore(at path: String) throws {
        let container = try ModelContainer(for: ChoresV1.self, configuration: ModelConfiguration(path: path))
        let context = ModelContext(container)
        context.insert(ChoresV1.Chore(id: fixedID(1), done: true, step: .init(done: false)))
        context.insert(ChoresV1.Chore(id: fixedID(2), done: false, step: .init(done: true)))
        try context.save()
        try container.close()
        try ModelContainer(
            for: ChoresV2.self, migrationPlan: ChoresPlan.self, configuration: ModelConfiguration(path: path)
        ).close()
    }

    @Test func recordsShowEachFieldUnderTheNameOfItsScope() throws {
        let store = TemporaryStore()
        try makeStore(at: store.path)
        let result = kvtool("get", store.path, "Chore", fixedID(1).uuidString)
        #expect(
            result
                == RunResult(
                    status: 0,
                    output: """
                        {
                          "id": "01900000-0000-7000-8000-000000000001",
                          "isDone": true,
                          "step": {
                            "done": false
                          }
                        }

                        """, errors: ""))
        #expect(kvtool("count", store.path, "Chore", "--where", "isDone=true").output == "1\n")
        #expect(kvtool("check", store.path).status == 0)
    }

    @Test func schemaListsTheRenamedFieldAndTheNestedNameItsIdKeeps() throws {
        let store = TemporaryStore()
        try makeStore(at: store.path)
        let output = kvtool("schema", store.path).output
        #expect(
            output.contains("  Fields:\n    id      uuid\n    isDone  bool\n    done    unknown\n    step    object\n"),
            Comment(rawValue: output))
    }

    @Test func anExportImportsIntoANewStoreThatReadsTheSame() throws {
        let source = TemporaryStore()
        let target = TemporaryStore()
        try makeStore(at: source.path)
        let file = source.sibling("export.jsonl")
        #expect(kvtool("export", source.path, "--output", file).status == 0)
        #expect(kvtool("import", target.path, file).status == 0)
        // The export's catalog made the entity, renamed field included: the new store has the format that reads it.
        #expect(kvtool("info", target.path).output.contains("\nFormat version    3\n"))
        for id in [fixedID(1), fixedID(2)] {
            #expect(
                kvtool("get", target.path, "Chore", id.uuidString) == kvtool("get", source.path, "Chore", id.uuidString)
            )
        }
        let container = try ModelContainer(
            for: ChoresV2.Chore.self, configuration: ModelConfiguration(path: target.path))
        defer { try? container.close() }
        let chores = try ModelContext(container).fetch(FetchDescriptor<ChoresV2.Chore>())
        #expect(chores.map(\.isDone) == [true, false])
        #expect(chores.map(\.step.done) == [false, true])
    }
}
