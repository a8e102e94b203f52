import Foundation
import KVStore

// The schemas of the migration tests: each family is the history of a small program's models.

/// Lightweight changes: a renamed, a removed and a new field, new indexes, a renamed entity.
enum LightV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Note.self, Directory.self]

    struct Note: Model, Equatable {
        var id = UUID.timeOrdered()
        var title: String
        var body: String
        var pinned = false

        static let entity = Entity<Note>(indexes: [.index(\.title)])
    }

    struct Directory: Model, Equatable {
        var id = UUID.timeOrdered()
        var name: String

        static let entity = Entity<Directory>(indexes: [.index(\.name)])
    }
}

/// `title` is renamed `heading`, `pinned` is gone, `tag` is new; `Directory` is now `Folder`.
enum LightV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Note.self, Folder.self]

    struct Note: Model, Equatable {
        var id: UUID
        var heading: String
        var body: String
        var tag: String?

        static let entity = Entity<Note>(
            indexes: [.index(\.heading), .index(\.tag)], renamedFields: ["heading": "title"])
    }

    struct Folder: Model, Equatable {
        var id: UUID
        var name: String

        static let entity = Entity<Folder>(indexes: [.unique(\.name)], originalName: "Directory")
    }
}

enum LightPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [LightV1.self, LightV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: LightV1.self, toVersion: LightV2.self)]
    static let migrationChunkSize = 3
}

/// Three versions of a to-do list: an optional field added, then made non-optional and filled by a custom stage
/// that also drops obsolete items.
enum TodosV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Todo.self]

    struct Todo: Model, Equatable {
        var id = UUID.timeOrdered()
        var title: String
        var notes: String

        static let entity = Entity<Todo>(indexes: [.index(\.title)])
    }
}

enum TodosV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Todo.self]

    struct Todo: Model, Equatable {
        var id: UUID
        var title: String
        var notes: String
        var priority: Int?

        static let entity = Entity<Todo>(indexes: [.index(\.title), .index(\.priority)])
    }
}

enum TodosV3: VersionedSchema {
    static let versionIdentifier = SchemaVersion(3, 0, 0)
    static let models: [any Model.Type] = [Todo.self]

    struct Todo: Model, Equatable {
        var id: UUID
        var title: String
        var priority: Int
        var words: Int

        static let entity = Entity<Todo>(indexes: [.index(\.priority), .unique(\.title)])
    }

    /// The custom stage's transform: priority 0 when none was set, the notes' word count, obsolete items dropped.
    @Sendable static func migrate(_ old: TodosV2.Todo) throws -> Todo? {
        guard !old.title.hasPrefix("obsolete") else { return nil }
        return Todo(
            id: old.id, title: old.title, priority: old.priority ?? 0,
            words: old.notes.split(separator: " ").count)
    }
}

enum TodosPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [TodosV1.self, TodosV2.self, TodosV3.self]
    static let stages: [MigrationStage] = [
        .lightweight(fromVersion: TodosV1.self, toVersion: TodosV2.self),
        .custom(
            fromVersion: TodosV2.self, toVersion: TodosV3.self,
            migrations: [.transform(TodosV2.Todo.self, to: TodosV3.Todo.self, TodosV3.migrate)]),
    ]
    static let migrationChunkSize = 3
}

/// The plan with a custom stage that throws on the items titled `bad`.
enum FailingTodosPlan: SchemaMigrationPlan {
    struct Refusal: Error, CustomStringConvertible {
        var description: String { "the item is bad" }
    }

    static let schemas = TodosPlan.schemas
    static let stages: [MigrationStage] = [
        .lightweight(fromVersion: TodosV1.self, toVersion: TodosV2.self),
        .custom(
            fromVersion: TodosV2.self, toVersion: TodosV3.self,
            migrations: [
                .transform(TodosV2.Todo.self, to: TodosV3.Todo.self) { old in
                    if old.title == "bad" { throw Refusal() }
                    return try TodosV3.migrate(old)
                }
            ]),
    ]
    static let migrationChunkSize = 3
}

/// A split: a contact's address becomes an entity of its own.
enum ContactsV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Contact.self]

    struct Contact: Model, Equatable {
        var id = UUID.timeOrdered()
        var name: String
        var street: String
        var city: String
    }
}

enum ContactsV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Contact.self, Address.self]

    struct Contact: Model, Equatable {
        var id: UUID
        var name: String
        var addressID: UUID

        static let entity = Entity<Contact>(indexes: [.index(\.addressID)])
    }

    struct Address: Model, Equatable {
        var id = UUID.timeOrdered()
        var street: String
        var city: String

        static let entity = Entity<Address>(indexes: [.index(\.city)])
    }
}

enum ContactsPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ContactsV1.self, ContactsV2.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: ContactsV1.self, toVersion: ContactsV2.self,
            migrations: [
                .split(ContactsV1.Contact.self, to: ContactsV2.Contact.self) { old, inserts in
                    let address = ContactsV2.Address(street: old.street, city: old.city)
                    inserts.insert(address)
                    return ContactsV2.Contact(id: old.id, name: old.name, addressID: address.id)
                }
            ])
    ]
    static let migrationChunkSize = 2
}

/// A custom stage between entities of different names: `Item` becomes `Product`.
enum ShopV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Item.self]

    struct Item: Model, Equatable {
        var id = UUID.timeOrdered()
        var name: String
        var cents: Int

        static let entity = Entity<Item>(indexes: [.index(\.name)])
    }
}

enum ShopV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Product.self]

    struct Product: Model, Equatable {
        var id: UUID
        var name: String
        var price: Double

        static let entity = Entity<Product>(indexes: [.index(\.price)])
    }
}

enum ShopPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ShopV1.self, ShopV2.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: ShopV1.self, toVersion: ShopV2.self,
            migrations: [
                .transform(ShopV1.Item.self, to: ShopV2.Product.self) { old in
                    ShopV2.Product(id: old.id, name: old.name, price: Double(old.cents) / 100)
                }
            ])
    ]
    static let migrationChunkSize = 2
}

/// `heading` is renamed `title`, but the records already store a `title`.
enum ClashV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static let models: [any Model.Type] = [Note.self]

    struct Note: Model {
        var id = UUID.timeOrdered()
        var heading: String
        var title: String?
    }
}

enum ClashV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static let models: [any Model.Type] = [Note.self]

    struct Note: Model {
        var id: UUID
        var title: String

        static let entity = Entity<Note>(renamedFields: ["title": "heading"])
    }
}

enum ClashPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ClashV1.self, ClashV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ClashV1.self, toVersion: ClashV2.self)]
}
