import Foundation

/// A model that is a class, tracked by the ``ModelContext`` that fetched or inserted it, as SwiftData's models are:
/// change its properties and call ``ModelContext/save()``; follow and set its relationships as properties.
///
/// ```swift
/// final class Project: PersistentModel {
///     var id = UUID.timeOrdered()
///     var name: String
///     @ToMany var tasks: [Task]
///
///     init(name: String) { self.name = name }
///
///     static let entity = Entity<Project>(relationships: [
///         .toMany("tasks", \.tasks, inverse: "project", deleteRule: .cascade)
///     ])
/// }
///
/// final class Task: PersistentModel {
///     var id = UUID.timeOrdered()
///     var title: String
///     var isDone = false
///     @ToOne var project: Project?
///
///     init(title: String, project: Project? = nil) {
///         self.title = title
///         self.project = project
///     }
///
///     static let entity = Entity<Task>(relationships: [.toOne("project", \.project, inverse: "tasks")])
/// }
///
/// let task = try context.fetch(FetchDescriptor<Task>())[0]
/// task.isDone.toggle()
/// try context.save()
/// ```
///
/// Declare a model as a `final class` that inherits from nothing, with `Codable` synthesized from its stored
/// properties. Its records, indexes, relationships, delete rules, migrations and external values are those of a
/// ``Model`` struct with the same fields: a to-one relationship property stores the related model's ID, a many-to-many
/// one the IDs, and a ``ToMany`` property nothing (it is derived from the other side's).
///
/// A context holds one object per model (every fetch returns the same object), and saves the objects that changed
/// since they were fetched. Objects are not `Sendable` and neither is the context: keep them on the actor
/// of their context, and pass IDs across actors.
///
/// An object reads its relationship properties through its context while the context exists: keep the context for
/// as long as you use its objects (the context holds them until its next save or rollback, then only those that
/// something else references, and a read lets go of the unchanged ones nothing else references; they hold it
/// weakly).
///
/// `@Observable` does not combine with these models: its macro rewrites the stored properties that synthesized
/// `Codable` and the relationship properties rely on.
public protocol PersistentModel: StoredModel, AnyObject, Hashable {}

extension PersistentModel {
    /// Whether `lhs` and `rhs` are the same object: a context holds one object per model, as SwiftData's does.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs === rhs
    }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

/// What relationship properties ask of the context their object belongs to: the related objects, read through the
/// context's identity map with its pending changes.
///
/// A relationship property cannot throw; a read that fails reads `nil` (or no objects) and the context keeps the error
/// (`ModelContext.relationshipError`).
protocol RelationshipLoader: AnyObject {
    /// The object of `type` with `id`, or `nil` when there is none or it is deleted.
    func loadObject<T: PersistentModel>(_ type: T.Type, id: UUID) -> T?

    /// The objects of `type` with `ids`, in the same order, without those there are none of.
    func loadObjects<T: PersistentModel>(_ type: T.Type, ids: [UUID]) -> [T]

    /// The objects of `type` whose relationship field `field` holds `id`, in ID order, with the context's changes.
    func loadReferrers<T: PersistentModel>(_ type: T.Type, field: String, to id: UUID) -> [T]

    /// Whether `object` is deleted in the context.
    func isDeletedHere(_ object: AnyObject) -> Bool

    /// Notes that `owner` changed a relationship, and takes `related` into the context when they are new to it.
    func relationshipDidChange(of owner: AnyObject, related: [AnyObject])

    /// A number that changes whenever lists of related objects computed before may be out of date.
    var relationshipGeneration: Int { get }
}
