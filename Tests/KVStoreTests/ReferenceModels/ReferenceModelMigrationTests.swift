import Foundation
import Testing

@testable import KVStore

/// Version 1 of a board of reference models: cards on lists, a card's `title`.
enum BoardV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = []
    static let referenceModels: [any PersistentModel.Type] = [List.self, Card.self]

    final class List: PersistentModel {
        var id = UUID.timeOrdered()
        var name: String
        @ToMany var cards: [Card]

        init(name: String) {
            self.name = name
        }

        static let entity = Entity<List>(
            relationships: [.toMany("cards", \.cards, inverse: "list", deleteRule: .cascade)])
    }

    final class Card: PersistentModel {
        var id = UUID.timeOrdered()
        var title: String
        @ToOne var list: List?

        init(title: String, list: List?) {
            self.title = title
            self.list = list
        }

        static let entity = Entity<Card>(relationships: [.toOne("list", \.list, inverse: "cards")])
    }
}

/// Version 2: the card's `title` is renamed `heading`, and indexed.
enum BoardV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = []
    static let referenceModels: [any PersistentModel.Type] = [List.self, Card.self]

    final class List: PersistentModel {
        var id = UUID.timeOrdered()
        var name: String
        @ToMany var cards: [Card]

        init(name: String) {
            self.name = name
        }

        static let entity = Entity<List>(
            relationships: [.toMany("cards", \.cards, inverse: "list", deleteRule: .cascade)])
    }

    final class Card: PersistentModel {
        var id = UUID.timeOrdered()
        var heading: String
        @ToOne var list: List?

        init(heading: String, list: List?) {
            self.heading = heading
            self.list = list
        }

        static let entity = Entity<Card>(
            indexes: [.index(\.heading)], relationships: [.toOne("list", \.list, inverse: "cards")],
            renamedFields: ["heading": "title"])
    }
}

enum BoardPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [BoardV1.self, BoardV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: BoardV1.self, toVersion: BoardV2.self)]
}

/// Versioned schemas of reference models migrate as those of structs.
@Suite struct ReferenceModelMigrationTests {
    @Test func aLightweightStageRenamesAFieldOfReferenceModels() throws {
        let directory = StoreDirectory()
        do {
            let container = try ModelContainer(
                for: BoardV1.self, configuration: ModelConfiguration(path: directory.path))
            let context = ModelContext(container)
            let todo = BoardV1.List(name: "To do")
            todo.cards.append(BoardV1.Card(title: "Write", list: nil))
            todo.cards.append(BoardV1.Card(title: "Ship", list: nil))
            context.insert(todo)
            try context.save()
            try container.close()
        }
        let container = try ModelContainer(
            for: BoardV2.self, migrationPlan: BoardPlan.self, configuration: ModelConfiguration(path: directory.path))
        defer { try? container.close() }
        let context = ModelContext(container)
        let ship = FetchDescriptor<BoardV2.Card>(predicate: #Predicate { $0.heading == "Ship" })
        #expect(try context.explain(ship) == "index heading: 1 key")
        let card = try #require(try context.fetch(ship).first)
        #expect(card.list?.name == "To do")
        #expect(card.list?.cards.map(\.heading) == ["Write", "Ship"])
        #expect(try integrityErrors(at: directory.path) == [])
    }
}
