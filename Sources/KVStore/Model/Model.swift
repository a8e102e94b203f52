import Foundation

/// A type whose values the store saves, fetches and indexes: a `Codable` struct identified by a `UUID`.
///
/// Models are values: they are `Sendable`, cross actors freely, and are saved by inserting them into a
/// ``ModelContext``. References to other models are their IDs (`UUID`, `UUID?`, `[UUID]`).
///
/// ```swift
/// struct Task: Model {
///     var id = UUID.timeOrdered()
///     var title: String
///     var isDone = false
///     var dueDate: Date?
///     var projectID: UUID?
///
///     static let entity = Entity<Task>(indexes: [.index(\.projectID), .index(\.dueDate)])
/// }
/// ```
///
/// The type's stored properties are its fields, under their coding keys. Give new IDs with
/// `UUID.timeOrdered()`: time-ordered IDs append at the right edge of the store's B+tree, which makes
/// inserts several times faster than random IDs.
public protocol Model: StoredModel, Sendable {}

/// What every kind of model has: a `Codable` type identified by a `UUID`, kept as the entity its ``entity`` describes.
///
/// The store's engine (records, indexes, relationships, fetches) works on any stored model. Conform to one of its two
/// kinds: ``Model`` for `Sendable` structs, values that cross actors freely, or ``PersistentModel`` for classes that a
/// ``ModelContext`` tracks, as SwiftData's are.
public protocol StoredModel: Codable, Identifiable, SendableMetatype where ID == UUID {
    /// The model's identity, the key of its record.
    var id: UUID { get }

    /// How the store keeps the model: its entity name, indexes and unique constraints.
    static var entity: Entity<Self> { get }
}

extension StoredModel {
    /// An entity named after the type, with no indexes.
    public static var entity: Entity<Self> { Entity() }
}
