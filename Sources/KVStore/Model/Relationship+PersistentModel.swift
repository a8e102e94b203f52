import Foundation

/// How the relationship property of a ``PersistentModel`` is reached: its kind, and its shared state in a model.
struct RelationshipProperty<M: StoredModel>: Sendable {
    enum Kind: Sendable {
        /// A ``ToOne`` property, which stores the related model's ID.
        case toOne
        /// A ``ToMany`` property, derived from the other side's field.
        case toMany
        /// A ``ManyToMany`` property, which stores the related models' IDs.
        case manyToMany
    }

    let kind: Kind
    /// The property's wrapper type, which the class's stored property `_<name>` has.
    let wrapper: Any.Type
    /// The offset of the property's storage in an object of `M`, when `M` has a stored property `_<name>` of type
    /// ``wrapper``; `nil` otherwise, and the container refuses the model.
    let offset: Int?

    init(kind: Kind, name: String, wrapper: Any.Type) {
        self.kind = kind
        self.wrapper = wrapper
        self.offset = (M.self as? AnyClass).flatMap {
            ObjectContents.offset(ofStoredProperty: "_" + name, ofType: wrapper, in: $0)
        }
    }

    /// The property's shared state in `model`: read from its storage (``ToOne``, ``ToMany`` and ``ManyToMany`` hold
    /// nothing but it), or, for a model the container refuses, a state of its own that relates to nothing.
    func relatedObjects(_ model: M) -> RelatedObjects where M: PersistentModel {
        guard let offset else { return RelatedObjects(ids: [], objects: nil) }
        return ObjectContents.relatedObjects(in: model, at: offset)
    }

    /// The first ID the property holds in `model` (a to-one's ID), read without making a state or an array: `nil`
    /// when it relates to nothing.
    func storedFirstID(in model: M) -> UUID? where M: PersistentModel {
        guard let offset else { return nil }
        return ObjectContents.firstRelatedID(in: model, at: offset)
    }
}

/// The relationships of ``PersistentModel`` classes, declared with their properties' names and key paths
/// (`"project", \.project`). The name is the property's: its field in the record is the property's coding key, and
/// the container checks at open that the class has a relationship property of that name and kind (the key path of a
/// relationship property does not carry its name).
extension Relationship where M: PersistentModel {
    /// A to-one relationship stored in a ``ToOne`` property: SwiftData's `var project: Project?`.
    ///
    /// ```swift
    /// static let entity = Entity<Task>(relationships: [.toOne("project", \.project, inverse: "tasks")])
    /// ```
    ///
    /// Predicates on the related model's ID read the relationship's index: `$0.project?.id == projectID` and
    /// `$0.project == nil` plan as `project == <id>` and `project == nil`.
    ///
    /// - Parameters:
    ///   - name: The property's name (`project`).
    ///   - property: The property (`\.project`).
    ///   - inverse: The name of the inverse relationship on the target, if it declares one.
    ///   - deleteRule: What deleting this model does to the related model. The default is `.nullify`.
    ///   - allowsDangling: Whether the ID may name a model that does not exist.
    public static func toOne<Target: PersistentModel>(
        _ name: String,
        _ property: KeyPath<M, Target?> & Sendable,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        allowsDangling: Bool = false
    ) -> Self {
        stored(
            name, isToMany: false, plannedAs: property, target: Target.self, inverse: inverse, deleteRule: deleteRule,
            allowsDangling: allowsDangling, property: .init(kind: .toOne, name: name, wrapper: ToOne<Target>.self))
    }

    /// A many-to-many relationship stored in a ``ManyToMany`` property: SwiftData's
    /// `@Relationship(inverse: \Tag.tasks) var tags: [Tag]`, on the side that stores the IDs.
    ///
    /// ```swift
    /// static let entity = Entity<Task>(relationships: [.manyToMany("tags", \.tags, inverse: "tasks")])
    /// ```
    ///
    /// - Parameters:
    ///   - name: The property's name (`tags`).
    ///   - property: The property (`\.tags`).
    ///   - inverse: The name of the inverse relationship on the target, if it declares one.
    ///   - deleteRule: What deleting this model does to the related models. The default is `.nullify`.
    ///   - allowsDangling: Whether the IDs may name models that do not exist.
    public static func manyToMany<Target: PersistentModel>(
        _ name: String,
        _ property: KeyPath<M, [Target]> & Sendable,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        allowsDangling: Bool = false
    ) -> Self {
        stored(
            name, isToMany: true, plannedAs: nil, target: Target.self, inverse: inverse, deleteRule: deleteRule,
            allowsDangling: allowsDangling,
            property: .init(kind: .manyToMany, name: name, wrapper: ManyToMany<Target>.self))
    }

    /// A to-many relationship in a ``ToMany`` property, derived from the target's ``ToOne`` or ``ManyToMany``
    /// property that holds this model: SwiftData's
    /// `@Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task]`.
    ///
    /// ```swift
    /// static let entity = Entity<Project>(relationships: [
    ///     .toMany("tasks", \.tasks, inverse: "project", deleteRule: .cascade)
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - name: The property's name (`tasks`).
    ///   - property: The property (`\.tasks`).
    ///   - inverse: The name of the target's relationship property that holds this model (`project`).
    ///   - deleteRule: What deleting this model does to the related models. The default is `.nullify`.
    public static func toMany<Target: PersistentModel>(
        _ name: String,
        _ property: KeyPath<M, [Target]> & Sendable,
        inverse: String,
        deleteRule: DeleteRule = .nullify
    ) -> Self {
        Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: false, inverse: nil, target: Target.self,
            storage: .inverse(field: inverse),
            property: .init(kind: .toMany, name: name, wrapper: ToMany<Target>.self))
    }

    private static func stored<Target: PersistentModel>(
        _ name: String, isToMany: Bool, plannedAs keyPath: (PartialKeyPath<M> & Sendable)?, target: Target.Type,
        inverse: String?, deleteRule: DeleteRule, allowsDangling: Bool, property: RelationshipProperty<M>
    ) -> Self {
        let stateOf = property.relatedObjects
        return Relationship(
            name: name, deleteRule: deleteRule, allowsDangling: allowsDangling, inverse: inverse, target: target,
            storage: .field(
                name: name, isToMany: isToMany,
                index: .references(
                    name, isToMany: isToMany, plannedAs: keyPath, read: { stateOf($0).ids },
                    readFirst: { property.storedFirstID(in: $0) }, stateOffset: property.offset),
                ids: { stateOf($0).ids },
                rewrite: { model, rewrittenID in
                    let state = stateOf(model)
                    let rewritten = state.ids.compactMap(rewrittenID)
                    guard rewritten != state.ids else { return false }
                    state.ids = rewritten
                    state.objects = nil
                    return true
                }),
            property: property)
    }
}

extension Entity where M: PersistentModel {
    /// The relationship whose property in `model` has the shared state `related`.
    func relationship(of model: M, sharing related: RelatedObjects) -> Relationship<M>? {
        relationships.first { $0.property?.relatedObjects(model) === related }
    }
}
